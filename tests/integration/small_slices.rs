//! A smoke slice of 7 paired queries against a large limit is decided by the exact sign-flip test
//! (issue 47, item 4): `{ metric: recall@10, slice: "part=01", max_drop: 0.5 }` passes when the 7
//! queries are unchanged (exit 0) and fails when each lost 0.6 (exit 1). The betting check left
//! both `skipped (underpowered)`, so the run exited 2.

use std::path::Path;

use serde_json::Value;

use crate::accept_baseline;

/// Each query has 5 relevant documents; `found` of them are retrieved (recall@10 = found / 5).
fn write_run(dir: &Path, name: &str, found: usize) {
    let mut run = String::new();
    for i in 0..7 {
        let retrieved: Vec<Value> = (0..found)
            .map(|d| serde_json::json!({"doc_id": format!("q{i}-g{d}")}))
            .chain((0..10 - found).map(|d| serde_json::json!({"doc_id": format!("q{i}-x{d}")})))
            .collect();
        run.push_str(&format!(
            "{}\n",
            serde_json::json!({"qid": format!("q{i}"), "retrieved": retrieved})
        ));
    }
    std::fs::write(dir.join(name), run).unwrap();
}

fn setup(dir: &Path) {
    let mut qrels = String::new();
    for i in 0..7 {
        let gold: Vec<String> = (0..5).map(|d| format!("q{i}-g{d}")).collect();
        qrels.push_str(&format!(
            "{}\n",
            serde_json::json!({"qid": format!("q{i}"), "query": format!("question {i}"), "gold_doc_ids": gold, "part": "01"})
        ));
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        "version: 1
metrics: [recall@10]
slices: [part]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baseline.json }
gate:
  rules:
    - { metric: recall@10, slice: \"part=01\", max_drop: 0.5 }
",
    )
    .unwrap();
    write_run(dir, "baseline.jsonl", 5);
    write_run(dir, "same.jsonl", 5);
    write_run(dir, "worse.jsonl", 2);
}

/// The one check of the rule in the gate's JSON output: its status and its method.
fn the_check(text: &str) -> (String, String) {
    let document: Value = serde_json::from_str(text).unwrap();
    let checks = document["checks"].as_array().expect("checks");
    let check = checks
        .iter()
        .find(|c| c["name"] == "recall@10 [part=01]")
        .unwrap_or_else(|| panic!("no check of the rule: {text}"));
    (
        check["status"].as_str().unwrap().to_string(),
        check["method"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn seven_unchanged_queries_pass_and_seven_each_worse_by_more_than_the_limit_fail() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let first = crate::Ragate::gate("smoke", "baseline.jsonl", "base").run_in(dir);
    assert_eq!(first.code, 2, "no baseline yet: {}", first.stderr);
    accept_baseline(dir, "smoke", "base/results.json", &[]);

    let gate = |run: &str| {
        crate::Ragate::gate("smoke", run, "out")
            .args(["--format", "json"])
            .run_in(dir)
    };
    let same = gate("same.jsonl");
    assert_eq!(same.code, 0, "{}\n{}", same.stdout, same.stderr);
    let (status, method) = the_check(&same.stdout);
    assert_eq!(status, "pass", "{method}");

    let worse = gate("worse.jsonl");
    assert_eq!(worse.code, 1, "{}\n{}", worse.stdout, worse.stderr);
    let (status, method) = the_check(&worse.stdout);
    assert_eq!(status, "fail");
    assert!(method.contains("exact sign-flip"), "{method}");
    assert!(!method.contains("betting"), "{method}");
}
