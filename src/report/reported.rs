//! How the reports show the metrics no rule gates ("reported, not gated"): a short Markdown
//! section after the gated checks, rows of the terminal table, JSON objects and skipped JUnit
//! testcases. None of them can fail a run.

use serde_json::{Value, json};

use crate::gate::GateReport;
use crate::gate::reported::{REPORTED, Reported, SLICE};
use crate::report::format::{MISSING, signed, value};

/// The summary.md section, or nothing when every listed metric is gated.
pub(crate) fn markdown(report: &GateReport) -> String {
    if report.reported.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "**Reported, not gated** · {} metrics without a rule, measured on the paired queries; \
         they do not decide the verdict\n\n| metric | baseline | current | delta | n |\n|---|---:|---:|---:|---:|\n",
        report.reported.len()
    );
    for r in &report.reported {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            crate::report::inert::cell(&r.name(), 1000),
            value(r.baseline),
            value(r.current),
            signed(r.delta),
            r.n
        ));
    }
    out.push('\n');
    out
}

/// The rows of the terminal table: `reported  mrr [all]  baseline  current  delta  –  n`.
pub(crate) fn table_rows(report: &GateReport) -> impl Iterator<Item = [String; 7]> + '_ {
    report.reported.iter().map(|r| {
        [
            "reported".to_string(),
            r.name(),
            value(r.baseline),
            value(r.current),
            signed(r.delta),
            MISSING.to_string(),
            r.n.to_string(),
        ]
    })
}

/// The line under the terminal table's totals, or None when every listed metric is gated.
pub(crate) fn totals(report: &GateReport) -> Option<String> {
    let names: Vec<&str> = report.reported.iter().map(|r| r.metric.as_str()).collect();
    (!names.is_empty()).then(|| {
        format!(
            "{} metrics {REPORTED} (no rule): {}",
            names.len(),
            names.join(", ")
        )
    })
}

/// The `reported` array of `--format json`.
pub(crate) fn json(report: &GateReport) -> Value {
    Value::Array(report.reported.iter().map(object).collect())
}

fn object(r: &Reported) -> Value {
    let finite = |v: f64| v.is_finite().then_some(v);
    json!({
        "name": r.name(),
        "metric": r.metric,
        "slice": SLICE,
        "status": "reported",
        "n": r.n,
        "baseline": finite(r.baseline),
        "current": finite(r.current),
        "delta": finite(r.delta),
    })
}

/// The message of a reported metric's skipped JUnit testcase.
pub(crate) fn junit_message(r: &Reported) -> String {
    format!(
        "{REPORTED}: {} -> {} (delta {}, n = {})",
        value(r.baseline),
        value(r.current),
        signed(r.delta),
        r.n
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::annotations::sample_report;

    fn with_reported() -> GateReport {
        let mut report = sample_report();
        report.reported = vec![
            Reported {
                metric: "mrr".into(),
                n: 40,
                baseline: 0.5,
                current: 0.25,
                delta: -0.25,
            },
            Reported {
                metric: "ndcg@10".into(),
                n: 0,
                baseline: f64::NAN,
                current: f64::NAN,
                delta: f64::NAN,
            },
        ];
        report
    }

    #[test]
    fn every_output_shows_the_numbers_and_no_nan() {
        let report = with_reported();
        let md = markdown(&report);
        assert!(
            md.starts_with("**Reported, not gated** · 2 metrics"),
            "{md}"
        );
        assert!(
            md.contains("| mrr [all] | 0.5000 | 0.2500 | -0.2500 | 40 |\n"),
            "{md}"
        );
        assert!(md.contains("| ndcg@10 [all] | – | – | – | 0 |\n"), "{md}");
        let rows: Vec<_> = table_rows(&report).collect();
        assert_eq!(
            rows[0],
            [
                "reported",
                "mrr [all]",
                "0.5000",
                "0.2500",
                "-0.2500",
                "–",
                "40"
            ]
        );
        assert_eq!(
            totals(&report).unwrap(),
            "2 metrics reported, not gated (no rule): mrr, ndcg@10"
        );
        let json = json(&report);
        assert_eq!(json[0]["delta"], -0.25);
        assert!(json[1]["baseline"].is_null());
        assert_eq!(
            junit_message(&report.reported[0]),
            "reported, not gated: 0.5000 -> 0.2500 (delta -0.2500, n = 40)"
        );
        let none = sample_report();
        assert_eq!(markdown(&none), "");
        assert_eq!(totals(&none), None);
    }
}
