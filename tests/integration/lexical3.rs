//! `{ kind: lexical, version: 3 }` through the real gate: a bare `yes` and a meta sentence are
//! "nothing checkable" (in the trace and results, left out of binary faithfulness), joined
//! passages part at the join, a contradiction still fails, a comparison the context does not
//! state fails with its reason in the trace, summary.md and report.html; `judge-eval` on the
//! committed development set (tests/fixtures/judge_set/lexical3_dev.jsonl) and on the items over
//! PubMedQA assembled from ../shared/data (skipped, saying so, without it) (issue 45).

use std::fmt::Write as _;

use serde_json::Value;

use crate::{Ragate, accept_baseline, fixture, path_str, ragate_in};

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

/// The `judge-eval` JSON report of `lexical-2` and `lexical-3` on `items`, run in `dir`.
fn judge_eval(dir: &std::path::Path, items: &std::path::Path) -> Value {
    let outcome = Ragate::new(["judge-eval", "--items", path_str(items)])
        .args(["--judge", "lexical-2,lexical-3", "--format", "json"])
        .status(0)
        .run_in(dir);
    serde_json::from_str(&outcome.stdout).unwrap()
}

fn score(report: &Value, judge: usize, name: &str) -> f64 {
    report["judges"][judge]["scores"][name]["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn judge_eval_measures_lexical_3_on_the_development_set() {
    let dir = tempfile::tempdir().unwrap();
    let report = judge_eval(dir.path(), &fixture("judge_set/lexical3_dev.jsonl"));
    assert_eq!(report["items"], 273);
    assert_eq!(report["judges"][1]["name"], "lexical-3");
    // The figures of docs/metrics.md (2026-12-07).
    assert!((score(&report, 0, "balanced_accuracy") - 0.594).abs() < 0.001);
    assert!((score(&report, 1, "balanced_accuracy") - 0.706).abs() < 0.001);
    assert!((score(&report, 0, "tpr") - 0.738).abs() < 0.001);
    assert!((score(&report, 1, "tpr") - 0.925).abs() < 0.001);
    assert!((score(&report, 1, "tnr") - 0.487).abs() < 0.001);
    let comparison = &report["judges"][1]["classes"]["comparison"]["balanced_accuracy"];
    assert!(comparison["value"].as_f64().unwrap() > 0.7, "{comparison}");
}

/// The PubMedQA abstracts: `$RAGATE_REAL_DATA/pubmedqa`, else ../shared/data beside the repo.
fn pubmedqa_corpus() -> Option<std::path::PathBuf> {
    let data = std::env::var_os("RAGATE_REAL_DATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let corpus = data.join("pubmedqa/corpus.jsonl");
    corpus.is_file().then_some(corpus)
}

/// The items of tests/fixtures/judge_set/lexical3_pubmedqa.jsonl (passage ids) with their
/// abstracts from `corpus`, as judge-eval reads them (what `lexical3_pubmedqa.py --assemble`
/// writes).
fn assemble_pubmedqa(corpus: &std::path::Path) -> String {
    let mut texts = std::collections::HashMap::new();
    for line in std::fs::read_to_string(corpus).unwrap().lines() {
        let doc: Value = serde_json::from_str(line).unwrap();
        texts.insert(
            doc["doc_id"].as_str().unwrap().to_string(),
            doc["text"].clone(),
        );
    }
    let rows = std::fs::read_to_string(fixture("judge_set/lexical3_pubmedqa.jsonl")).unwrap();
    let mut items = String::new();
    for line in rows.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let passages: Vec<&str> = row["doc_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| texts[id.as_str().unwrap()].as_str().unwrap())
            .collect();
        let mut item = serde_json::json!({
            "id": row["id"], "answer": row["answer"], "label": row["label"], "class": row["class"],
        });
        if row["joined"] == true {
            item["context"] = passages.concat().into();
        } else {
            item["contexts"] = passages.into();
        }
        writeln!(items, "{item}").unwrap();
    }
    items
}

#[test]
fn judge_eval_measures_lexical_3_on_pubmedqa_items() {
    let Some(corpus) = pubmedqa_corpus() else {
        eprintln!("lexical3 pubmedqa: skipped (../shared/data/pubmedqa/corpus.jsonl not found)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let items = dir.path().join("pubmedqa.jsonl");
    std::fs::write(&items, assemble_pubmedqa(&corpus)).unwrap();
    let report = judge_eval(dir.path(), &items);
    assert_eq!(report["items"], 54);
    // The figures of docs/metrics.md (2026-12-07).
    assert!((score(&report, 0, "balanced_accuracy") - 0.511).abs() < 0.001);
    assert!((score(&report, 1, "balanced_accuracy") - 0.614).abs() < 0.001);
    assert!((score(&report, 0, "tpr") - 0.935).abs() < 0.001);
    assert!((score(&report, 1, "tpr") - 0.968).abs() < 0.001);
}

const STORAGE: &str = "Standard costs $0.021 per GB-month. Archive is the cheapest class.";

#[test]
fn a_comparison_reason_is_in_the_trace_summary_and_report() {
    let dir = tempfile::tempdir().unwrap();
    // 30 queries, so that the check is decided, each answered with `answer`.
    let run = |answer: &str| {
        let mut run = String::new();
        for i in 0..30 {
            let line = serde_json::json!({
                "qid": format!("q{i}"),
                "retrieved": [{"doc_id": format!("d{i}"), "text": STORAGE}],
                "answer": answer,
            });
            writeln!(run, "{line}").unwrap();
        }
        run
    };
    let mut qrels = String::new();
    for i in 0..30 {
        writeln!(qrels, "{{\"qid\":\"q{i}\",\"query\":\"which class is cheapest {i}\",\"gold_doc_ids\":[\"d{i}\"]}}").unwrap();
    }
    Ragate::gate("smoke", "run.jsonl", "out")
        .file("eval-config.yaml", CONFIG)
        .file("qrels.jsonl", &qrels)
        .file("run.jsonl", &run("Archive is the cheapest class."))
        .status(2)
        .run_in(dir.path());
    accept_baseline(dir.path(), "smoke", "out/results.json", &[]);
    let reason = "the comparison \"cheaper\" is not stated in the best-matching context window";
    Ragate::gate("smoke", "run.jsonl", "out")
        .file("run.jsonl", &run("Standard is cheaper than Archive."))
        .status(1)
        .file_has(
            "out/trace.jsonl",
            "the comparison \\\"cheaper\\\" is not stated in the best-matching context window",
        )
        .file_has("out/summary.md", reason)
        .run_in(dir.path());
    let outcome = ragate_in(
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
    );
    assert!(outcome.code <= 1, "{}", outcome.stderr);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("the comparison &quot;cheaper&quot; is not stated") || html.contains(reason),
        "{html}"
    );
}
