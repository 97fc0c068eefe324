//! A tier's `metrics:` and `slices:`: a tier's own list replaces the top-level list of the same
//! name for that tier (issue 44), so that drafted queries carrying only `class` can be sliced by
//! `class` alone, and a retrieval-only tier computes retrieval metrics alone.

use std::collections::BTreeMap;

use crate::config::metrics;
use crate::config::raw::{RawConfig, RawRule, RawTier};
use crate::config::rules::RuleLists;
use crate::error::Result;
use crate::judge::backend::JudgeSpec;
use crate::metrics::metric::{Metric, MetricSpec};
use crate::settings::keys::Keys;

/// The metrics a tier computes and the query fields it is sliced by, with the keys of the lists
/// they come from (`metrics`, `slices`, or the tier's own `tiers.NAME.metrics`, ...).
#[derive(Debug, Clone)]
pub(super) struct Lists {
    /// The metrics, in config order, with `empty_answers` and gated operational metrics added.
    pub metrics: Vec<MetricSpec>,
    /// `metrics`, or `tiers.NAME.metrics` for a tier's own list.
    pub metrics_key: String,
    /// The slice fields.
    pub slices: Vec<String>,
    /// `slices`, or `tiers.NAME.slices` for a tier's own list.
    pub slices_key: String,
}

impl Lists {
    /// The top-level lists. The operational metrics added are those named by the top-level rules
    /// and by the rules of the tiers that compute the top-level list.
    pub(super) fn top(
        keys: &Keys<'_>,
        raw: &RawConfig,
        judges: &BTreeMap<String, JudgeSpec>,
    ) -> Result<Lists> {
        let mut specs = metrics::validate_metrics(keys, "metrics", &raw.metrics, judges)?;
        metrics::add_empty_answers(&mut specs);
        let tier_rules = raw
            .tiers
            .values()
            .filter(|tier| tier.metrics.is_none())
            .filter_map(|tier| tier.gate.as_ref().and_then(|g| g.rules.as_ref()));
        let rules = raw.gate.rules.iter().chain(tier_rules).flatten();
        metrics::add_gated_operational(&mut specs, rules);
        validate_slices(keys, "slices", &raw.slices)?;
        Ok(Lists {
            metrics: specs,
            metrics_key: "metrics".into(),
            slices: raw.slices.clone(),
            slices_key: "slices".into(),
        })
    }

    /// The lists of tier `name`: its own where it has them, these (the top-level ones) otherwise.
    /// `rules` are the tier's rules (its own or the top-level ones): the operational metrics they
    /// name are added to the tier's own metrics list.
    pub(super) fn of_tier(
        &self,
        keys: &Keys<'_>,
        (name, tier): (&str, &RawTier),
        rules: &[RawRule],
        judges: &BTreeMap<String, JudgeSpec>,
    ) -> Result<Lists> {
        let mut lists = self.clone();
        if let Some(own) = &tier.metrics {
            let key = format!("tiers.{name}.metrics");
            let mut specs = metrics::validate_metrics(keys, &key, own, judges)?;
            metrics::add_empty_answers(&mut specs);
            metrics::add_gated_operational(&mut specs, rules);
            lists.metrics = specs;
            lists.metrics_key = key;
        }
        if let Some(own) = &tier.slices {
            let key = format!("tiers.{name}.slices");
            validate_slices(keys, &key, own)?;
            lists.slices = own.clone();
            lists.slices_key = key;
        }
        Ok(lists)
    }

    /// The metrics' names, for the validation of rules.
    pub(super) fn metric_names(&self) -> Vec<Metric> {
        self.metrics.iter().map(|spec| spec.metric).collect()
    }

    /// What the tier's rules may name (`metrics` from [`Lists::metric_names`]).
    pub(super) fn for_rules<'a>(&'a self, metrics: &'a [Metric]) -> RuleLists<'a> {
        RuleLists {
            metrics,
            metrics_key: &self.metrics_key,
            slices: &self.slices,
            slices_key: &self.slices_key,
        }
    }
}

/// The slice fields at `list_key`: each a query field name (not empty, not `all`, no `=`), once.
fn validate_slices(keys: &Keys<'_>, list_key: &str, slices: &[String]) -> Result<()> {
    for (index, field) in slices.iter().enumerate() {
        let key = format!("{list_key}[{index}]");
        if field.is_empty() || field == "all" || field.contains('=') {
            return Err(keys.error(
                key,
                format!("`{field}`: expected a query field name (not empty, not `all`, no `=`)"),
            ));
        }
        if slices[..index].contains(field) {
            return Err(keys.error(
                key,
                format!("`{field}` is listed twice: expected each field once"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::{Config, locate, parse, validate};
    use crate::error::{Error, Result};
    use crate::settings::yaml;

    /// Top level: answer metrics, sliced by length and form. `drafted`: its own `slices: [class]`;
    /// `trec`: its own retrieval metrics and rules. `TREC_RULES` is replaced to vary the latter.
    const TEAM: &str = r#"version: 1
metrics: [recall@5, answer_contains, faithfulness]
slices: [length, form]
tiers:
  regression: { qrels: q/regression.jsonl, baseline: b/regression.json }
  drafted: { qrels: q/drafted.jsonl, baseline: b/drafted.json, slices: [class] }
  trec:
    qrels: q/trec.txt
    baseline: b/trec.json
    metrics: [recall@10, ndcg@10]
    TREC_RULES
gate:
  rules:
    - { metric: recall@5, max_drop: 0.05 }
    - { metric: faithfulness, max_drop: 0.05 }
"#;
    const TREC_RULES: &str = "gate: { rules: [ { metric: ndcg@10, max_drop: 0.02 } ] }";

    fn load_str(text: &str) -> Result<Config> {
        let path = Path::new("conf/eval-config.yaml");
        let raw = parse(path, text)?;
        validate(path, raw, &yaml::from_str(text).unwrap()).map_err(|e| locate::locate(e, text))
    }

    fn names(config: &Config, tier: &str) -> Vec<String> {
        let metrics = &config.tiers[tier].metrics;
        metrics.iter().map(|s| s.metric.to_string()).collect()
    }

    /// The error's key, its line and column, and its message.
    fn error(text: &str) -> (String, Option<(u64, u64)>, String) {
        match load_str(text).unwrap_err() {
            Error::Config {
                key,
                line_column,
                message,
                ..
            } => (key, line_column, message),
            other => panic!("expected a config error, got {other}"),
        }
    }

    #[test]
    fn a_tiers_own_lists_replace_the_top_level_ones_for_that_tier_only() {
        let config = load_str(&TEAM.replace("TREC_RULES", TREC_RULES)).unwrap();
        let top = [
            "recall@5",
            "answer_contains",
            "faithfulness",
            "empty_answers",
        ];
        assert_eq!(names(&config, "regression"), top);
        assert_eq!(names(&config, "drafted"), top);
        // Retrieval metrics only: no answer metric, so no `empty_answers` and no default rule.
        assert_eq!(names(&config, "trec"), ["recall@10", "ndcg@10"]);
        let trec = &config.tiers["trec"];
        assert_eq!(trec.metrics_key, "tiers.trec.metrics");
        assert_eq!(trec.slices, ["length", "form"]);
        assert_eq!(trec.slices_key, "slices");
        assert_eq!(trec.gate.rules.len(), 1);
        let drafted = &config.tiers["drafted"];
        assert_eq!(drafted.slices, ["class"]);
        assert_eq!(drafted.slices_key, "tiers.drafted.slices");
        assert_eq!(drafted.metrics_key, "metrics");
        let regression = &config.tiers["regression"];
        assert_eq!(regression.slices, ["length", "form"]);
        // The two top-level rules and the default `empty_answers` one.
        assert_eq!(regression.gate.rules.len(), 3);
    }

    #[test]
    fn a_top_level_rule_on_a_metric_the_tiers_own_list_lacks_is_an_error_at_the_rule() {
        let (key, position, message) = error(&TEAM.replace("TREC_RULES", ""));
        assert_eq!(key, "gate.rules[0].metric");
        assert_eq!(position, Some((14, 17)), "the rule's `metric:` value");
        assert_eq!(
            message,
            "`recall@5` is not computed: expected one of the tier's own metrics list \
             `tiers.trec.metrics` (recall@10, ndcg@10): the tier's own list replaces the \
             top-level one for it, so give the tier rules of its own (`tiers.trec.gate.rules`)"
        );
    }

    #[test]
    fn a_tiers_own_rule_is_checked_against_its_own_lists() {
        let answer_rule = "gate: { rules: [ { metric: faithfulness, max_drop: 0.1 } ] }";
        let (key, position, message) = error(&TEAM.replace("TREC_RULES", answer_rule));
        assert_eq!(key, "tiers.trec.gate.rules[0].metric");
        assert_eq!(position, Some((11, 32)));
        assert!(
            message.starts_with("`faithfulness` is not computed: expected one of the tier's own metrics list `tiers.trec.metrics` (recall@10, ndcg@10)"),
            "{message}"
        );
        assert!(!message.contains("give the tier rules"), "{message}");
        // The drafted tier is sliced by `class` alone: a rule on a `length` slice is an error.
        let text = TEAM.replace("TREC_RULES", TREC_RULES).replace(
            "slices: [class] }",
            "slices: [class],\n    gate: { rules: [ { metric: recall@5, slice: length=short, max_drop: 0.1 } ] } }",
        );
        let (key, _, message) = error(&text);
        assert_eq!(key, "tiers.drafted.gate.rules[0].slice");
        assert!(
            message.starts_with("`length` is not a slice field: expected one of the tier's own slices list `tiers.drafted.slices` (class)"),
            "{message}"
        );
        let ok = text.replace("length=short", "class=paraphrased");
        let config = load_str(&ok).unwrap();
        assert_eq!(
            config.tiers["drafted"].gate.rules[0]
                .slice
                .as_ref()
                .unwrap()
                .to_string(),
            "class=paraphrased"
        );
    }

    #[test]
    fn a_tiers_own_lists_are_validated_at_their_keys() {
        let team = TEAM.replace("TREC_RULES", TREC_RULES);
        let cases = [
            (
                "[recall@10, ndcg@10]",
                "[recall@10, ndcg@10, recall@10]",
                "tiers.trec.metrics[2]",
                "listed twice",
            ),
            (
                "[recall@10, ndcg@10]",
                "[recall@10, bogus]",
                "tiers.trec.metrics[1]",
                "bogus",
            ),
            ("[recall@10, ndcg@10]", "[]", "tiers.trec.metrics", "empty"),
            (
                "slices: [class]",
                "slices: [class, class]",
                "tiers.drafted.slices[1]",
                "listed twice",
            ),
            (
                "slices: [class]",
                "slices: [all]",
                "tiers.drafted.slices[0]",
                "not `all`",
            ),
        ];
        for (from, to, expected_key, expected) in cases {
            let (key, position, message) = error(&team.replace(from, to));
            assert_eq!(key, expected_key, "{to}");
            assert!(position.is_some(), "{to}: located");
            assert!(message.contains(expected), "{to}: {message}");
        }
    }

    #[test]
    fn an_operational_metric_of_a_tiers_own_rules_is_computed_for_that_tier() {
        let rules = "gate: { rules: [ { metric: ndcg@10, max_drop: 0.02 }, { metric: latency_ms, max_increase_pct: 20 } ] }";
        let config = load_str(&TEAM.replace("TREC_RULES", rules)).unwrap();
        assert_eq!(
            names(&config, "trec"),
            ["recall@10", "ndcg@10", "latency_ms"]
        );
        assert!(!names(&config, "regression").contains(&"latency_ms".to_string()));
    }
}
