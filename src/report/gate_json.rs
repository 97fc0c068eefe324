//! `--format json` of `gate`, `merge` and `compare`: the run's status, every check with its
//! numbers, and (for a gate run) its results. The schema is `docs/schema/gate.schema.json`.

use serde_json::{Value, json};

use crate::baseline::results::{Results, RunStatus};
use crate::gate::GateReport;
use crate::gate::causes::Cause;
use crate::gate::error_budget::ErrorBudget;
use crate::gate::run_verdict::RunVerdict;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family, QueriesNeeded, REALISTIC_QUERIES};
use crate::report::gate_table::higher_is_better;
use crate::report::reported;
use crate::report::summary_text::point_past_limit;

/// The format tag of the document.
pub const FORMAT: &str = "ragate-gate/1";

/// The document, pretty-printed with a final newline; `results` is the run's results.json
/// (none for `compare`, whose inputs are results files already).
pub fn render(report: &GateReport, results: Option<&Results>) -> String {
    let results =
        results.map(|r| serde_json::from_str::<Value>(&r.to_json()).expect("results JSON"));
    let document = json!({
        "format": FORMAT,
        "tier": report.tier,
        "status": report.status,
        "verdict": report.verdict(),
        "exit_code": report.exit_code(),
        "paired_queries": report.paired_queries,
        "compared": report.compared(),
        "checks": report.outcomes.iter().map(check).collect::<Vec<_>>(),
        "reported": reported::json(report),
        "causes": report.causes.iter().map(cause).collect::<Vec<_>>(),
        "warnings": report.warnings,
        "notes": report.notes,
        "error_budget": report.error_budget.as_ref().map(error_budget),
        "results": results,
    });
    pretty(document)
}

/// The run's bound on false verdicts: the statement the reports print and its parts.
fn error_budget(budget: &ErrorBudget) -> Value {
    json!({
        "statement": budget.statement(),
        "alpha": budget.alpha,
        "alpha_scope": budget.scope,
        "bound": budget.total(),
        "proving": budget.proving,
        "parts": budget.parts.iter().map(|part| json!({
            "family": family(part.family),
            "checks": part.checks,
            "level": finite(part.level),
            "contribution": part.contribution,
        })).collect::<Vec<_>>(),
    })
}

fn family(family: Family) -> &'static str {
    match family {
        Family::Primary => "primary",
        Family::Slices => "slices",
        Family::Calibration => "calibration",
        Family::Drift => "drift",
        Family::MustPass => "must_pass",
    }
}

/// The document of a run that was not gated (no baseline, or an unreadable one): its status,
/// no checks, exit code 2 and its results, whose summary holds the measured metrics.
pub fn render_ungated(results: &Results) -> String {
    let document = json!({
        "format": FORMAT,
        "tier": results.tier,
        "status": results.status,
        "verdict": match results.status {
            RunStatus::Error => RunVerdict::Error,
            _ => RunVerdict::NoBaseline,
        },
        "exit_code": crate::exit_code::ERROR,
        "paired_queries": 0,
        "checks": [],
        "reported": [],
        "causes": [],
        "warnings": [],
        "notes": [],
        "error_budget": null,
        "results": serde_json::from_str::<Value>(&results.to_json()).expect("results JSON"),
    });
    pretty(document)
}

/// The document of a run that stopped with an error before it had results (a config, input or
/// setup error, a pipeline or judge failure): status `error`, exit code 2, no checks, and the
/// error as printed on stderr, so that a script reading stdout never gets an empty document.
pub fn render_error(tier: &str, error: &str, retryable: bool) -> String {
    pretty(json!({
        "format": FORMAT,
        "tier": tier,
        "status": "error",
        "verdict": RunVerdict::Error,
        "exit_code": crate::exit_code::ERROR,
        "error": error,
        "retryable": retryable,
        "paired_queries": 0,
        "checks": [],
        "reported": [],
        "causes": [],
        "warnings": [],
        "notes": [],
        "error_budget": null,
        "results": null,
    }))
}

/// `document` pretty-printed with a final newline, every negative zero written as 0 (a mean or
/// delta of nothing is not "minus zero").
fn pretty(mut document: Value) -> String {
    without_negative_zero(&mut document);
    crate::json_text::document(&document)
}

fn without_negative_zero(value: &mut Value) {
    match value {
        Value::Number(number)
            if number
                .as_f64()
                .is_some_and(|x| x == 0.0 && x.is_sign_negative()) =>
        {
            *value = json!(0.0);
        }
        Value::Array(items) => items.iter_mut().for_each(without_negative_zero),
        Value::Object(fields) => fields.values_mut().for_each(without_negative_zero),
        _ => {}
    }
}

fn check(outcome: &CheckOutcome) -> Value {
    json!({
        "name": outcome.name,
        "metric": outcome.metric,
        "slice": outcome.slice,
        "family": family(outcome.family),
        "status": status(outcome.status),
        "verdict": outcome.verdict,
        "n": outcome.n,
        "baseline": finite(outcome.baseline_mean),
        "current": finite(outcome.current_mean),
        "delta": finite(outcome.delta),
        "limit": outcome.limit,
        "bound": outcome.bound.map(|b| json!({"delta": finite(b.delta), "confidence": b.confidence})),
        "interval": outcome.ci.map(|(low, high)| json!([finite(low), finite(high)])),
        "p": outcome.p_value.and_then(finite),
        "p_adjusted": outcome.adjustment.and_then(|a| finite(a.adjusted)),
        "correction": outcome.adjustment.map(|a| json!({
            "procedure": a.procedure_name(),
            "checks": a.checks,
            "alpha": a.alpha,
        })),
        "method": outcome.method.map(|m| m.describe()),
        "threshold": outcome.threshold,
        "proof": outcome.proof.map(|p| json!({
            "p": finite(p.p_value),
            "alpha": p.alpha,
            "upper_bound": p.upper.and_then(finite),
            "proven": p.proven(),
        })),
        "detectable_drop": outcome.detectable_drop.and_then(finite),
        "queries_needed": outcome.queries_needed.and_then(QueriesNeeded::count),
        "queries_needed_over": (outcome.queries_needed == Some(QueriesNeeded::Unrealistic))
            .then_some(REALISTIC_QUERIES),
        "undecided": undecided(outcome),
        "floor": outcome.floor.map(|f| json!({"bound": f.bound, "mean": finite(f.mean), "n": f.n})),
        "worse_count": outcome.worse_count,
        "worst": outcome.worst.iter().map(|q| json!({
            "qid": q.qid,
            "baseline": finite(q.baseline),
            "current": finite(q.current),
        })).collect::<Vec<_>>(),
    })
}

/// A likely cause of the change: its slice, kind, the metric moves it reads, the queries that
/// show it (and the slice value holding most of them), the usual fix and the sentence the
/// summary shows.
fn cause(cause: &Cause) -> Value {
    json!({
        "slice": cause.slice,
        "cause": cause.kind.id(),
        "moves": cause.moves.iter().map(|m| json!({
            "metric": m.metric,
            "delta": finite(m.delta),
            "limit": m.limit,
            "direction": m.direction.word(),
        })).collect::<Vec<_>>(),
        "queries": cause.queries,
        "paired_queries": cause.paired,
        "evidence": cause.evidence,
        "top_slice": cause.top_slice.as_ref().map(|(slice, queries)| json!({
            "slice": slice,
            "queries": queries,
        })),
        "fix": cause.kind.fix(),
        "text": cause.describe(),
    })
}

/// For an inconclusive check decided by a test (not a "prove it" one): how far past its limit
/// the point estimate is and what would decide it, as the summary says it; else null.
fn undecided(outcome: &CheckOutcome) -> Value {
    if outcome.status != CheckStatus::Inconclusive || outcome.proof.is_some() {
        return Value::Null;
    }
    let Some(limit) = outcome.limit.filter(|_| outcome.delta.is_finite()) else {
        return Value::Null;
    };
    let worsening = if higher_is_better(&outcome.metric) {
        -outcome.delta
    } else {
        outcome.delta
    };
    json!({
        "past_limit_by": finite(worsening - limit),
        "text": point_past_limit(outcome),
    })
}

/// JSON has no NaN or infinity: a value that is not a number is `null`.
fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// The status word as records store it (the table's `FAIL` is `fail` here).
fn status(status: CheckStatus) -> String {
    status.word().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::annotations::sample_report;

    #[test]
    fn every_check_is_listed_with_its_numbers_and_no_nan() {
        let report = sample_report();
        let text = render(&report, None);
        assert!(!text.contains("NaN"), "{text}");
        let document: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(document["format"], FORMAT);
        assert_eq!(document["exit_code"], report.exit_code());
        let checks = document["checks"].as_array().unwrap();
        assert_eq!(checks.len(), report.outcomes.len());
        for (json, outcome) in checks.iter().zip(&report.outcomes) {
            assert_eq!(json["name"], outcome.name.as_str());
            assert_eq!(json["status"], status(outcome.status));
            assert_eq!(json["n"], outcome.n);
            assert_eq!(json["limit"].as_f64(), outcome.limit);
            if outcome.delta.is_finite() {
                assert_eq!(json["delta"].as_f64(), Some(outcome.delta));
            } else {
                assert!(json["delta"].is_null());
            }
        }
        assert!(document["results"].is_null());
    }

    #[test]
    fn no_number_is_written_as_negative_zero() {
        let mut report = sample_report();
        report.outcomes[0].delta = -0.0;
        report.outcomes[0].limit = Some(-0.0);
        let text = render(&report, None);
        assert!(
            !text.contains("-0.0,") && !text.contains("-0.0\n"),
            "{text}"
        );
        let document: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(document["checks"][0]["delta"].as_f64(), Some(0.0));
    }

    #[test]
    fn an_error_document_has_the_status_error_and_the_message() {
        let text = render_error(
            "smoke",
            "eval-config.yaml: version: unsupported version 2",
            false,
        );
        let document: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(document["format"], FORMAT);
        assert_eq!(document["status"], "error");
        assert_eq!(document["exit_code"], 2);
        assert_eq!(
            document["error"],
            "eval-config.yaml: version: unsupported version 2"
        );
        assert_eq!(document["checks"], json!([]));
    }
}
