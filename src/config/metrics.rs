//! Validation of the `metrics` section: metric entries with their options, and the judges they
//! name.

use std::collections::BTreeMap;

use crate::config::raw::{RawClaims, RawConfig, RawEmptyAnswer, RawMetric, RawRule};
use crate::error::Result;
use crate::judge::backend::JudgeSpec;
use crate::judge::kinds;
use crate::metrics::aliases;
use crate::metrics::claims::ClaimSplitter;
use crate::metrics::generation::EmptyAnswer;
use crate::metrics::metric::{AnswerMetric, JudgedMetric};
use crate::metrics::metric::{Metric, MetricSpec};
use crate::settings::keys::Keys;
use crate::suggest;

/// The metrics list at `list_key` (`metrics`, or a tier's own `tiers.NAME.metrics`).
pub(super) fn validate_metrics(
    keys: &Keys<'_>,
    list_key: &str,
    entries: &[RawMetric],
    judges: &BTreeMap<String, JudgeSpec>,
) -> Result<Vec<MetricSpec>> {
    if entries.is_empty() {
        return Err(keys.error(
            list_key,
            "empty: expected at least one metric such as recall@5",
        ));
    }
    let mut specs: Vec<MetricSpec> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let key = format!("{list_key}[{index}]");
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
            let judged_metric = matches!(metric, Metric::Judged(_));
            let faithfulness = matches!(
                metric,
                Metric::Judged(JudgedMetric::Faithfulness | JudgedMetric::FaithfulnessGraded)
            );
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
                let judge = judges.get(&spec.judge);
                if !judge.is_some_and(|judge| judge.decomposes_claims()) {
                    let kind = judge.map_or_else(|| kinds::default_judge().kind(), |j| j.kind());
                    return Err(keys.error(
                        format!("{key}.claims"),
                        format!(
                            "`llm` decomposition needs an openai or command judge, but `{}` is {}: name one with `judge:`",
                            spec.judge,
                            kind
                        ),
                    ));
                }
                spec.claims = ClaimSplitter::Llm;
            }
            spec.judged = raw.judged.unwrap_or(false);
        }
        let support_only = !matches!(
            metric,
            Metric::Judged(JudgedMetric::Faithfulness | JudgedMetric::FaithfulnessGraded)
        );
        if spec.is_judged()
            && support_only
            && let Some(judge) = judges.get(&spec.judge)
            && judge.judges_support_only()
        {
            return Err(keys.error(
                &key,
                format!(
                    "`{metric}` is judged by `{}`, {} {} judge, which judges whether contexts support claims only: expected faithfulness or faithfulness_graded, or name another judge with `judge:`",
                    spec.judge,
                    kinds::article_of(judge.kind()),
                    judge.kind(),
                ),
            ));
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// Adds `empty_answers` when a metric reads the answer and the list does not name it: the share
/// of queries without an answer is what `empty_answer: exclude` leaves out of the answer metrics
/// (and what makes `answer_length` look better), so it is computed, stored and gated
/// ((`config::rules::default_empty_answers_rule`)) whenever answers are.
pub(crate) fn add_empty_answers(specs: &mut Vec<MetricSpec>) {
    let answers = specs.iter().any(|s| s.metric.needs_answer());
    if answers
        && !specs
            .iter()
            .any(|s| s.metric == Metric::Answer(AnswerMetric::Empty))
    {
        specs.push(MetricSpec::new(Metric::Answer(AnswerMetric::Empty)));
    }
}

/// Adds the operational metrics (latency_ms, tokens, cost) that one of `rules` names but the
/// metrics list leaves out: they vary from run to run, so they are computed (and stored in
/// results) only when gated; otherwise they are reported in the trace and run-stats alone.
pub(crate) fn add_gated_operational<'a>(
    specs: &mut Vec<MetricSpec>,
    rules: impl IntoIterator<Item = &'a RawRule>,
) {
    for rule in rules {
        if let Ok(metric) = rule.metric.parse::<Metric>()
            && metric.is_operational()
            && !specs.iter().any(|s| s.metric == metric)
        {
            specs.push(MetricSpec::new(metric));
        }
    }
}

/// `nDCG@10 is read as ndcg_linear@10 (...)` for every metric name of `raw` (metrics list and
/// rules) that is ir_measures' or trec_eval's rather than ragate's, each name once: the config
/// keeps ragate's names, the note says how the alias was read.
pub(crate) fn alias_notes(raw: &RawConfig) -> Vec<String> {
    let tier_rules = raw
        .tiers
        .values()
        .filter_map(|t| t.gate.as_ref().and_then(|g| g.rules.as_ref()));
    let rules = raw.gate.rules.iter().chain(tier_rules).flatten();
    let tier_metrics = raw.tiers.values().filter_map(|t| t.metrics.as_ref());
    let names = raw
        .metrics
        .iter()
        .chain(tier_metrics.flatten())
        .map(RawMetric::name)
        .chain(rules.map(|rule| rule.metric.as_str()));
    let mut seen = std::collections::BTreeSet::new();
    names
        .filter(|name| seen.insert(*name))
        .filter_map(aliases::note)
        .collect()
}
