//! `gate`, `report` and `compare` of the same run make one decision: a run whose retrieved docs
//! are mostly unjudged warns about judged@10 in summary.md, in the HTML report and in `compare`
//! alike (measured against the qrels the run was evaluated with, so not once they changed).

use std::fmt::Write as _;

use crate::{Ragate, accept_baseline, ragate_env};

const WARNING: &str = "judged@10 is 0.20: most retrieved docs are unjudged";

#[test]
fn the_judged_at_k_warning_is_in_the_summary_the_html_report_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    // A retrieval tier of 20 queries with one judged doc each, and a run that retrieves it and
    // four unjudged docs per query (judged@10 = 0.2); its baseline accepted and out/ the gated
    // run.
    let (mut qrels, mut run) = (String::new(), String::new());
    for i in 0..20 {
        let judged = serde_json::json!({
            "qid": format!("q{i:02}"),
            "query": format!("question {i}"),
            "gold_doc_ids": [format!("q{i:02}-g0")],
        });
        writeln!(qrels, "{judged}").unwrap();
        let retrieved: Vec<serde_json::Value> = std::iter::once(format!("q{i:02}-g0"))
            .chain((1..5).map(|k| format!("other-{i}-{k}")))
            .map(|doc| serde_json::json!({ "doc_id": doc }))
            .collect();
        let line = serde_json::json!({ "qid": format!("q{i:02}"), "retrieved": retrieved });
        writeln!(run, "{line}").unwrap();
    }
    let config = "version: 1
metrics: [recall@5]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baseline.json }
gate:
  rules:
    - { metric: recall@5, max_drop: 0.02 }
";
    Ragate::gate("smoke", "run.jsonl", "out")
        .file("qrels.jsonl", &qrels)
        .file("run.jsonl", &run)
        .file("eval-config.yaml", config)
        .status(2) // no baseline yet
        .run_in(dir.path());
    accept_baseline(dir.path(), "smoke", "out/results.json", &[]);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(0)
        .run_in(dir.path());
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(summary.contains(WARNING), "{summary}");

    let report = ragate_env(
        dir.path(),
        &[
            "report",
            "--tier",
            "smoke",
            "--from",
            "out",
            "--out",
            "report.html",
        ],
        &[],
    );
    assert_eq!(report.code, 0, "{}", report.stderr);
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        page.contains(WARNING),
        "the HTML report warns as the gate did"
    );

    let compare = ragate_env(
        dir.path(),
        &["compare", "baseline.json", "out/results.json"],
        &[],
    );
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    assert!(
        compare.stderr.contains(WARNING) || compare.stdout.contains(WARNING),
        "{}\n{}",
        compare.stdout,
        compare.stderr
    );

    // Other qrels than the run's: judged@10 of these results is not measured against them.
    let qrels = dir.path().join("qrels.jsonl");
    let changed = std::fs::read_to_string(&qrels).unwrap() + "\n";
    std::fs::write(&qrels, changed).unwrap();
    let compare = ragate_env(
        dir.path(),
        &["compare", "baseline.json", "out/results.json"],
        &[],
    );
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    assert!(
        !compare.stderr.contains("judged@10") && !compare.stdout.contains("judged@10"),
        "{}\n{}",
        compare.stdout,
        compare.stderr
    );
}
