//! `{ kind: lexical, version: 3 }` through the real gate: a bare `yes` and a meta sentence are
//! "nothing checkable" (in the trace and results, left out of binary faithfulness), joined
//! passages part at the join, a contradiction still fails; `judge-eval` on the committed
//! development set (tests/fixtures/judge_set/lexical3_dev.jsonl, issue 45).

use std::fmt::Write as _;

use serde_json::Value;

use crate::{Ragate, fixture, path_str};

const CONFIG: &str = "version: 1
metrics: [recall@5, { name: faithfulness, judge: l3 }, { name: faithfulness_graded, judge: l3 }]
judges:
  l3: { kind: lexical, version: 3 }
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baseline.json }
gate:
  rules:
    - { metric: faithfulness, max_drop: 0.05 }
";

/// (answer, context) per query.
const ANSWERS: [(&str, &str); 5] = [
    ("Yes.", "Backups stay in the Frankfurt region."),
    (
        "Here is what the document says:\nBackups stay in the Frankfurt region.",
        "Backups stay in the Frankfurt region.",
    ),
    (
        "Yes. Backups stay in the Paris region.",
        "Backups stay in the Frankfurt region.",
    ),
    (
        "Anna Berg runs the backups.",
        "Backups stay in the Frankfurt region.Anna Berg runs them.",
    ),
    (
        "Based on the provided context, backups do not stay in the Frankfurt region.",
        "Backups stay in the Frankfurt region.",
    ),
];

#[test]
fn lexical_3_leaves_out_what_asserts_nothing_and_keeps_contradictions() {
    let (mut qrels, mut run) = (String::new(), String::new());
    for (i, (answer, context)) in ANSWERS.iter().enumerate() {
        writeln!(qrels, "{{\"qid\":\"q{i}\",\"query\":\"where are backups kept {i}\",\"gold_doc_ids\":[\"d{i}\"]}}").unwrap();
        let line = serde_json::json!({
            "qid": format!("q{i}"),
            "retrieved": [{"doc_id": format!("d{i}"), "text": context}],
            "answer": answer,
        });
        writeln!(run, "{line}").unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    Ragate::gate("smoke", "run.jsonl", "out")
        .file("eval-config.yaml", CONFIG)
        .file("qrels.jsonl", &qrels)
        .file("run.jsonl", &run)
        .status(2) // evaluated, but no baseline yet
        .file_has("out/trace.jsonl", "nothing checkable: a bare yes or no")
        .file_has("out/trace.jsonl", "nothing checkable: a meta sentence")
        .run_in(dir.path());
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/results.json")).unwrap(),
    )
    .unwrap();
    let query = |i: usize| &results["queries"][format!("q{i}")];
    let metric = |i: usize, name: &str| query(i)["metrics"][name].as_f64().unwrap();
    // A bare yes: nothing counted in binary faithfulness, grade 1 in the graded one.
    assert_eq!(metric(0, "faithfulness"), 1.0);
    assert_eq!(metric(0, "faithfulness_graded"), 0.5);
    assert_eq!(query(0)["claims"][0]["grade"], 1);
    // A preamble on its own line asserts nothing; the fact after it is supported.
    assert_eq!(metric(1, "faithfulness"), 1.0);
    assert_eq!(metric(1, "faithfulness_graded"), 1.0);
    let reason = query(1)["claims"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("nothing checkable: a meta sentence"),
        "{reason}"
    );
    // A leading yes does not dilute an unsupported claim: 0 of 1 counted, not 1 of 2.
    assert_eq!(metric(2, "faithfulness"), 0.0);
    assert_eq!(metric(2, "faithfulness_graded"), 0.25);
    // Passages joined without a space part at the join: the name is in the context.
    assert_eq!(metric(3, "faithfulness"), 1.0, "{}", query(3));
    // A negation behind a meta opening is still a contradiction.
    assert_eq!(metric(4, "faithfulness"), 0.0);
    let reason = query(4)["claims"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("contradicted: "), "{reason}");
    let judge = results["provenance"]["judges"]["l3"].as_str().unwrap();
    assert!(
        judge.starts_with("lexical-3 threshold=0.4 stem=true"),
        "{judge}"
    );
}

#[test]
fn a_lexical_version_past_3_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    Ragate::new(["validate"])
        .file(
            "eval-config.yaml",
            &CONFIG.replace("version: 3", "version: 4"),
        )
        .file("qrels.jsonl", "")
        .status(2)
        .stderr_has("4: expected 1 (lexical-1), 2 (lexical-2) or 3 (lexical-3)")
        .run_in(dir.path());
}

#[test]
fn judge_eval_measures_lexical_3_on_the_development_set() {
    let items = fixture("judge_set/lexical3_dev.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let outcome = Ragate::new(["judge-eval", "--items", path_str(&items)])
        .args(["--judge", "lexical-2,lexical-3", "--format", "json"])
        .status(0)
        .run_in(dir.path());
    let report: Value = serde_json::from_str(&outcome.stdout).unwrap();
    assert!(
        report["items"].as_u64().unwrap() >= 120,
        "{}",
        report["items"]
    );
    let score = |judge: usize, name: &str| {
        report["judges"][judge]["scores"][name]["value"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(report["judges"][1]["name"], "lexical-3");
    // The figures of docs/metrics.md (2026-12-07).
    assert!((score(0, "balanced_accuracy") - 0.718).abs() < 0.001);
    assert!((score(1, "balanced_accuracy") - 0.794).abs() < 0.001);
    assert!(score(1, "tpr") > score(0, "tpr"));
}
