//! A metric listed under `metrics:` without a rule is measured and shown "reported, not gated"
//! in the terminal table, summary.md, `--format json` and junit.xml, and cannot fail the gate.

use std::path::Path;

use serde_json::Value;

use crate::json_schema::Schema;
use crate::{accept_baseline, fixture, path_str, ragate_in};

const QRELS: &str = "1\td1\t1\n2\td2\t1\n3\td3\t1\n4\td4\t1\n5\td5\t1\n6\td6\t1\n";

/// The relevant doc first: mrr 1 and recall@5 1 for every query.
const FIRST: &str = "1\td1\n2\td2\n3\td3\n4\td4\n5\td5\n6\td6\n";

/// The relevant doc second: recall@5 stays 1, mrr halves.
const SECOND: &str = "1\tx d1\n2\tx d2\n3\tx d3\n4\tx d4\n5\tx d5\n6\tx d6\n";

fn write(dir: &Path, queries: &str) {
    let pipeline = fixture("pipeline/text_pipeline.py");
    let config = format!(
        r#"version: 1
metrics: [recall@5, mrr]
pipeline:
  command: [python3, "{}"]
tiers:
  smoke: {{ qrels: qrels.tsv, queries: queries.tsv, baseline: baselines/smoke.json }}
gate:
  decision: point
  min_queries: 5
  rules:
    - {{ metric: recall@5, max_drop: 0.01 }}
"#,
        path_str(&pipeline)
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    std::fs::write(dir.join("qrels.tsv"), QRELS).unwrap();
    std::fs::write(dir.join("queries.tsv"), queries).unwrap();
}

#[test]
fn an_ungated_metric_is_reported_everywhere_and_cannot_fail_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write(dir, FIRST);
    let first = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "first"]);
    assert_eq!(first.code, 2, "no baseline yet: {}", first.stderr);
    accept_baseline(dir, "smoke", "first/results.json", &[]);
    write(dir, SECOND);

    let table = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "table"]);
    assert_eq!(
        table.code, 0,
        "mrr halved but has no rule: {}{}",
        table.stdout, table.stderr
    );
    let rows: Vec<&str> = table.stdout.lines().collect();
    assert!(
        rows.iter()
            .any(|r| r.starts_with("pass ") && r.contains("recall@5 [all]")),
        "{}",
        table.stdout
    );
    assert!(
        rows.iter().any(|r| r.starts_with("reported ")
            && r.contains("mrr [all]")
            && r.contains("1.0000   0.5000  -0.5000")
            && r.ends_with("  6")),
        "{}",
        table.stdout
    );
    assert!(
        table
            .stdout
            .contains("1 metrics reported, not gated (no rule): mrr\n"),
        "{}",
        table.stdout
    );

    let summary = std::fs::read_to_string(dir.join("table/summary.md")).unwrap();
    let section = summary
        .find("**Reported, not gated** · 1 metrics without a rule")
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(
        summary[..section].contains("All 1 checks"),
        "after the gated checks: {summary}"
    );
    assert!(
        summary[section..].contains("| mrr [all] | 1.0000 | 0.5000 | -0.5000 | 6 |"),
        "{summary}"
    );

    let junit = std::fs::read_to_string(dir.join("table/junit.xml")).unwrap();
    assert!(!junit.contains("<failure"), "{junit}");
    assert!(
        junit.contains(
            r#"<testcase name="mrr [all]" time="0" classname="ragate.smoke.mrr"><skipped type="reported" message="reported, not gated: 1.0000 -&gt; 0.5000 (delta -0.5000, n = 6)"/>"#
        ),
        "{junit}"
    );

    let json = ragate_in(
        dir,
        &[
            "gate", "--tier", "smoke", "--out", "json", "--format", "json",
        ],
    );
    assert_eq!(json.code, 0, "{}", json.stderr);
    let document: Value = serde_json::from_str(&json.stdout).unwrap();
    let errors = Schema::published("gate.schema.json").errors(&document);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(document["checks"].as_array().unwrap().len(), 1);
    // The run's error budget (issue 23, item 6): this tier decides on point estimates, so the
    // gate says it has no error control rather than printing a bound.
    assert_eq!(document["error_budget"]["alpha_scope"], "family");
    assert!(document["error_budget"]["bound"].is_null());
    assert_eq!(
        document["error_budget"]["statement"],
        "error control: none for the metric checks (`decision: point` fails on the point \
         estimate, with no test)"
    );
    assert!(document["checks"][0]["p_adjusted"].is_null());
    assert_eq!(
        document["reported"],
        serde_json::json!([{
            "name": "mrr [all]", "metric": "mrr", "slice": "all", "status": "reported",
            "n": 6, "baseline": 1.0, "current": 0.5, "delta": -0.5
        }])
    );
}
