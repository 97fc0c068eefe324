//! The `empty_answers` metric at the gate: its values for results recorded before ragate computed
//! it (derived from the answers they store, so an old baseline is gated at once instead of failing
//! or passing unseen), and the warning that puts the empty answers of a run in the summary.

use std::borrow::Cow;

use crate::baseline::collect;
use crate::baseline::results::Results;
use crate::config::Tier;
use crate::digest::sha256_hex;
use crate::metrics::generation::EmptyAnswer;
use crate::metrics::metric::AnswerMetric;
use crate::metrics::metric::Metric;

/// The metric's name in results.
fn name() -> String {
    Metric::Answer(AnswerMetric::Empty).to_string()
}

/// `results` with `empty_answers` values, derived from its stored answers when it has answer
/// metrics but predates `empty_answers` (`which` names it in the warning pushed to `warnings`);
/// otherwise `results` as it is (a file without answer metrics has no answers to read, and a
/// rule on `empty_answers` then fails closed like any metric the baseline lacks).
pub(crate) fn with_values<'a>(
    results: &'a Results,
    which: &str,
    warnings: &mut Vec<String>,
) -> Cow<'a, Results> {
    let metric = name();
    let has_answers = results
        .metrics
        .iter()
        .filter_map(|m| m.parse::<Metric>().ok())
        .any(Metric::needs_answer);
    if results.metrics.contains(&metric) || !has_answers {
        return Cow::Borrowed(results);
    }
    let empty_hash = sha256_hex(b"");
    let mut derived = results.clone();
    let mut hashed = false;
    for record in derived.queries.values_mut() {
        let empty = match (&record.answer, &record.answer_sha256) {
            (Some(answer), _) => answer.trim().is_empty(),
            (None, Some(sha)) => {
                hashed = true;
                *sha == empty_hash
            }
            // No answer stored: the query was missing from that run.
            (None, None) => true,
        };
        record
            .metrics
            .insert(metric.clone(), f64::from(u8::from(empty)));
    }
    derived.metrics.push(metric.clone());
    let summary = collect::summarise(std::slice::from_ref(&metric), &derived.queries);
    for (slice, metrics) in summary {
        derived.summary.entry(slice).or_default().extend(metrics);
    }
    warnings.push(format!(
        "{which} predates the `empty_answers` metric (ragate {}): its per-query values were \
         derived from the answers it stores{}; accept a new baseline to record them",
        crate::error::shorten(&results.provenance.ragate_version),
        if hashed {
            " (it keeps answer hashes only, so an answer of nothing but whitespace counts as \
             not empty there)"
        } else {
            ""
        }
    ));
    Cow::Owned(derived)
}

/// `12 of 40 answers are empty (baseline: 0 of 40)`, with the answer metrics that leave them
/// out under `empty_answer: exclude`, when the current run has any empty answer.
pub(crate) fn warning(tier: &Tier, baseline: &Results, current: &Results) -> Option<String> {
    let metric = name();
    let count = |results: &Results| {
        let values: Vec<f64> = results
            .queries
            .values()
            .filter_map(|q| q.metrics.get(&metric).copied())
            .collect();
        (values.iter().filter(|&&v| v > 0.0).count(), values.len())
    };
    let (empty, total) = count(current);
    if empty == 0 {
        return None;
    }
    let (before, before_total) = count(baseline);
    let excluded: Vec<String> = tier
        .metrics
        .iter()
        .filter(|spec| spec.empty_answer == EmptyAnswer::Exclude && spec.is_judged())
        .map(|spec| spec.metric.to_string())
        .collect();
    let left_out = if excluded.is_empty() {
        String::new()
    } else {
        format!(
            "; `empty_answer: exclude` leaves them out of {}",
            excluded.join(", ")
        )
    };
    Some(format!(
        "{empty} of {total} answers are empty or missing (baseline: {before} of {before_total}){left_out}; \
         the `empty_answers` checks gate their share"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::results::{Provenance, QueryRecord, RunStatus};

    fn results(answers: &[Option<&str>], metrics: &[&str]) -> Results {
        let queries = answers
            .iter()
            .enumerate()
            .map(|(i, answer)| {
                let record = QueryRecord {
                    answer: answer.map(String::from),
                    ..QueryRecord::default()
                };
                (format!("q{i}"), record)
            })
            .collect();
        Results {
            format: String::new(),
            tier: "t".into(),
            status: RunStatus::Pass,
            provenance: Provenance {
                ragate_version: "0.0.9".into(),
                ..Provenance::default()
            },
            metrics: metrics.iter().map(ToString::to_string).collect(),
            summary: Default::default(),
            noise: None,
            baseline_mismatch: None,
            queries,
        }
    }

    #[test]
    fn an_old_baseline_gets_values_from_its_stored_answers() {
        let old = results(
            &[Some("Kept 11 days."), Some("  "), None, Some("")],
            &["faithfulness"],
        );
        let mut warnings = Vec::new();
        let derived = with_values(&old, "the baseline", &mut warnings);
        let values: Vec<f64> = derived
            .queries
            .values()
            .map(|q| q.metrics["empty_answers"])
            .collect();
        assert_eq!(values, [0.0, 1.0, 1.0, 1.0]);
        assert_eq!(derived.metrics, ["faithfulness", "empty_answers"]);
        assert_eq!(derived.summary["all"]["empty_answers"].mean, 0.75);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0]
                .starts_with("the baseline predates the `empty_answers` metric (ragate 0.0.9)"),
            "{warnings:?}"
        );
        assert!(
            warnings[0].contains("accept a new baseline"),
            "{warnings:?}"
        );
    }

    #[test]
    fn hashed_answers_count_the_hash_of_nothing_as_empty() {
        let mut old = results(&[None, None], &["answer_length"]);
        let hashes = [sha256_hex(b""), sha256_hex(b"an answer")];
        for (record, hash) in old.queries.values_mut().zip(hashes) {
            record.answer_sha256 = Some(hash);
        }
        let mut warnings = Vec::new();
        let derived = with_values(&old, "the baseline", &mut warnings);
        let values: Vec<f64> = derived
            .queries
            .values()
            .map(|q| q.metrics["empty_answers"])
            .collect();
        assert_eq!(values, [1.0, 0.0]);
        assert!(warnings[0].contains("answer hashes only"), "{warnings:?}");
    }

    #[test]
    fn results_with_the_metric_or_without_answers_are_left_alone() {
        let mut warnings = Vec::new();
        let retrieval = results(&[None], &["mrr"]);
        assert!(matches!(
            with_values(&retrieval, "b", &mut warnings),
            Cow::Borrowed(_)
        ));
        let recorded = results(&[Some("")], &["faithfulness", "empty_answers"]);
        assert!(matches!(
            with_values(&recorded, "b", &mut warnings),
            Cow::Borrowed(_)
        ));
        assert!(warnings.is_empty());
    }
}
