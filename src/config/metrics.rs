//! Validation of the `metrics` and `judges` sections: metric entries with their options, and the
//! judges they name.

use std::collections::BTreeMap;

use crate::config::raw::{
    RawClaims, RawConfig, RawEmptyAnswer, RawJudge, RawMetric, RawOpenAiJudge,
};
use crate::config::{Keys, expand};
use crate::error::Result;

use crate::judge::Judge;
use crate::judge::command::CommandJudge;
use crate::judge::decompose::ClaimSplitter;
use crate::judge::lexical::LexicalJudge;
use crate::judge::openai::OpenAiJudge;
use crate::metrics::generation::EmptyAnswer;
use crate::metrics::metric::{Metric, MetricSpec};
use crate::suggest;

/// The judge every judged metric uses unless it names another.
pub const DEFAULT_JUDGE: &str = "default";

/// The configured judges by name; `default` is the lexical judge unless configured otherwise.
pub fn validate_judges(
    keys: &Keys<'_>,
    raw: &BTreeMap<String, RawJudge>,
    written: &serde_yaml::Value,
) -> Result<BTreeMap<String, Judge>> {
    let mut judges = BTreeMap::new();
    judges.insert(
        DEFAULT_JUDGE.to_string(),
        Judge::Lexical(LexicalJudge::default()),
    );
    for (name, judge) in raw {
        let key = format!("judges.{name}");
        let configured = match judge {
            RawJudge::Lexical(judge) => {
                let defaults = LexicalJudge::default();
                let threshold = judge.threshold.unwrap_or(defaults.threshold);
                if !(threshold > 0.0 && threshold <= 1.0) {
                    return Err(keys.error(
                        format!("{key}.threshold"),
                        format!("{threshold} is outside (0, 1]"),
                    ));
                }
                Judge::Lexical(LexicalJudge {
                    threshold,
                    stem: judge.stem.unwrap_or(defaults.stem),
                })
            }
            RawJudge::Openai(judge) => {
                let url_key = format!("{key}.base_url");
                let shown =
                    expand::shown_if_expanded(written, &["judges", name, "base_url"], &url_key);
                Judge::OpenAi(validate_openai(keys, &key, judge, shown)?)
            }
            RawJudge::Command(judge) => {
                let command = judge.command.clone().filter(|c| !c.is_empty() && !c[0].is_empty()).ok_or_else(|| {
                    keys.error(&key, "a command judge needs `command: [program, arg, ...]` (an argv list, no shell)")
                })?;
                let timeout = keys.timeout(
                    &format!("{key}.timeout_s"),
                    judge.timeout_s.map(|s| s as f64),
                    300.0,
                )?;
                Judge::Command(CommandJudge { command, timeout })
            }
        };
        judges.insert(name.clone(), configured);
    }
    Ok(judges)
}

/// An `openai` judge: `base_url` and `model` required, the rest defaulted; `shown_base_url`:
/// how messages name a `base_url` that came from the environment.
fn validate_openai(
    keys: &Keys<'_>,
    key: &str,
    judge: &RawOpenAiJudge,
    shown_base_url: Option<String>,
) -> Result<OpenAiJudge> {
    let base_url = judge
        .base_url
        .clone()
        .filter(|url| !url.trim().is_empty())
        .ok_or_else(|| {
            keys.error(
                key,
                "an openai judge needs `base_url` (the API root, e.g. http://127.0.0.1:8000/v1)",
            )
        })?;
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(keys.error(
            format!("{key}.base_url"),
            format!(
                "`{}`: expected an http:// or https:// URL",
                shown_base_url.as_deref().unwrap_or(&base_url)
            ),
        ));
    }
    let model = judge
        .model
        .clone()
        .filter(|model| !model.trim().is_empty())
        .ok_or_else(|| keys.error(key, "an openai judge needs `model`"))?;
    if let Some(var) = &judge.api_key_env
        && (var.is_empty() || var.contains('=') || var.contains('\0'))
    {
        return Err(keys.error(
            format!("{key}.api_key_env"),
            "expected the name of an environment variable",
        ));
    }
    let mut configured = OpenAiJudge::new(base_url, model);
    configured.shown_base_url = shown_base_url;
    configured.api_key_env = judge.api_key_env.clone();
    configured.concurrency = judge.concurrency.unwrap_or(8);
    if configured.concurrency == 0 {
        return Err(keys.error(format!("{key}.concurrency"), "0: expected at least 1"));
    }
    configured.timeout = keys.timeout(
        &format!("{key}.timeout_s"),
        judge.timeout_s.map(|s| s as f64),
        60.0,
    )?;
    configured.max_retries = judge.max_retries.unwrap_or(5);
    configured.max_calls = judge.max_calls.unwrap_or(20_000);
    if configured.max_calls == 0 {
        return Err(keys.error(format!("{key}.max_calls"), "0: expected at least 1"));
    }
    Ok(configured)
}

pub fn validate_metrics(
    keys: &Keys<'_>,
    entries: &[RawMetric],
    judges: &BTreeMap<String, Judge>,
) -> Result<Vec<MetricSpec>> {
    if entries.is_empty() {
        return Err(keys.error(
            "metrics",
            "empty: expected at least one metric such as recall@5",
        ));
    }
    let mut specs: Vec<MetricSpec> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let key = format!("metrics[{index}]");
        let metric: Metric = entry
            .name()
            .parse()
            .map_err(|e| keys.error(&key, format!("{e}")))?;
        if let Metric::Ppi(calibrated) = metric {
            return Err(keys.error(
                &key,
                format!(
                    "`{metric}` is a tier-level estimate for rules, not a per-query metric: list `{}` here and add labels to the tier",
                    calibrated.base()
                ),
            ));
        }
        if specs.iter().any(|s| s.metric == metric) {
            return Err(keys.error(
                &key,
                format!("`{metric}` is listed twice: expected each metric once"),
            ));
        }
        let mut spec = MetricSpec::new(metric);
        if let RawMetric::Spec(raw) = entry {
            let judged_metric = matches!(
                metric,
                Metric::Faithfulness | Metric::FaithfulnessGraded | Metric::AnswerRelevance
            );
            let faithfulness = matches!(metric, Metric::Faithfulness | Metric::FaithfulnessGraded);
            let context_precision = matches!(metric, Metric::ContextPrecision(_));
            let allowed = [
                (
                    "judge",
                    raw.judge.is_some(),
                    judged_metric || context_precision,
                ),
                ("k", raw.k.is_some(), faithfulness),
                ("empty_answer", raw.empty_answer.is_some(), judged_metric),
                ("claims", raw.claims.is_some(), faithfulness),
                ("judged", raw.judged.is_some(), context_precision),
            ];
            for (option, present, fits) in allowed {
                if present && !fits {
                    return Err(keys.error(
                        format!("{key}.{option}"),
                        format!("`{metric}` takes no `{option}` option"),
                    ));
                }
            }
            if let Some(judge) = &raw.judge {
                if !judges.contains_key(judge) {
                    return Err(keys.error(
                        format!("{key}.judge"),
                        suggest::did_you_mean(
                            format!(
                                "no judge `{judge}`: expected one of the judges section ({})",
                                judges.keys().cloned().collect::<Vec<_>>().join(", ")
                            ),
                            judge,
                            judges.keys().map(String::as_str),
                        ),
                    ));
                }
                spec.judge = judge.clone();
            }
            if let Some(k) = raw.k {
                if k == 0 {
                    return Err(keys.error(format!("{key}.k"), "0: expected at least 1 context"));
                }
                spec.contexts_k = k;
            }
            if let Some(empty) = raw.empty_answer {
                spec.empty_answer = match empty {
                    RawEmptyAnswer::Zero => EmptyAnswer::Zero,
                    RawEmptyAnswer::Exclude => EmptyAnswer::Exclude,
                };
            }
            if raw.claims == Some(RawClaims::Llm) {
                if matches!(judges.get(&spec.judge), Some(Judge::Lexical(_)) | None) {
                    return Err(keys.error(
                        format!("{key}.claims"),
                        format!(
                            "`llm` decomposition needs an openai or command judge, but `{}` is lexical: name one with `judge:`",
                            spec.judge
                        ),
                    ));
                }
                spec.claims = ClaimSplitter::Llm;
            }
            spec.judged = raw.judged.unwrap_or(false);
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// Adds the operational metrics (latency_ms, tokens, cost) that a rule of any tier names but the
/// metrics list leaves out: they vary from run to run, so they are computed (and stored in
/// results) only when gated; otherwise they are reported in the trace and run-stats alone.
pub(crate) fn add_gated_operational(specs: &mut Vec<MetricSpec>, raw: &RawConfig) {
    let tier_rules = raw
        .tiers
        .values()
        .filter_map(|t| t.gate.as_ref().and_then(|g| g.rules.as_ref()));
    let rules = raw.gate.rules.iter().chain(tier_rules).flatten();
    for rule in rules {
        if let Ok(metric) = rule.metric.parse::<Metric>()
            && metric.is_operational()
            && !specs.iter().any(|s| s.metric == metric)
        {
            specs.push(MetricSpec::new(metric));
        }
    }
}
