//! A slice whose every answer is left out (`empty_answer: exclude`) has no mean of an answer
//! metric: no `"mean": -0.0, "n": 0` in any JSON output, and no diagnosis drawn from it.

use std::path::Path;

use serde_json::Value;

use crate::accept_baseline;

/// 10 queries of class `a` answered from their context, 10 of class `b` with empty answers.
fn setup(dir: &Path) {
    let mut qrels = String::new();
    let mut run = String::new();
    for class in ["a", "b"] {
        for i in 0..10 {
            let qid = format!("{class}{i}");
            let context = format!("Policy {qid} keeps objects for {} days.", 10 + i);
            let answer = if class == "a" { context.as_str() } else { "" };
            qrels.push_str(&format!(
                "{}\n",
                serde_json::json!({"qid": qid, "query": format!("how long does policy {qid} keep objects"), "gold_doc_ids": [format!("{qid}-g")], "class": class})
            ));
            run.push_str(&format!(
                "{}\n",
                serde_json::json!({"qid": qid, "retrieved": [{"doc_id": format!("{qid}-g")}], "answer": answer, "contexts": [context]})
            ));
        }
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        "version: 1
metrics: [ndcg@10, { name: faithfulness, empty_answer: exclude }]
slices: [class]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baseline.json }
gate:
  rules:
    - { metric: ndcg@10, max_drop: 0.1 }
",
    )
    .unwrap();
}

/// Whether `text` writes a number as negative zero.
fn has_negative_zero(text: &str) -> bool {
    ["-0.0,", "-0.0\n", "-0.0}", "-0.0]", "-0,", "-0\n", "-0}"]
        .iter()
        .any(|z| text.contains(z))
}

#[test]
fn an_empty_slice_has_no_mean_no_negative_zero_and_no_diagnosis() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let gate = || {
        crate::Ragate::gate("smoke", "run.jsonl", "out")
            .args(["--format", "json"])
            .run_in(dir)
    };
    let first = gate();
    assert_eq!(first.code, 2, "no baseline yet: {}", first.stderr);
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    let gated = gate();
    let document: Value = serde_json::from_str(&gated.stdout).unwrap();
    let summary = &document["results"]["summary"];
    assert!(
        summary["class=b"].get("faithfulness").is_none(),
        "no mean of nothing: {summary:#}"
    );
    assert_eq!(summary["class=b"]["ndcg@10"]["n"], 10);
    assert_eq!(summary["class=a"]["faithfulness"]["n"], 10);
    for name in ["results.json", "run-stats.json", "trace.jsonl"] {
        let text = std::fs::read_to_string(dir.join("out").join(name)).unwrap();
        assert!(!has_negative_zero(&text), "{name}: {text}");
    }
    assert!(!has_negative_zero(&gated.stdout), "{}", gated.stdout);
    let markdown = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        !markdown.contains("[class=b] generator"),
        "a diagnosis from a slice without answers: {markdown}"
    );
}
