//! A judge that differs from the baseline's: an error naming both identities, unless
//! `--allow-judge-change`, which re-judges the baseline's stored answers (contexts rebuilt from
//! the corpus and the stored ranked doc ids) so that the verdicts compare like for like; in
//! `gate` and in `compare`.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::{Ragate, accept_baseline, ragate_in};

/// Six queries whose contexts come from the corpus. Odd answers repeat their document; even
/// ones say "90 days" where the document says 30: 5 of the claim's 6 tokens are in the
/// context, supported by `lexical-1` at threshold 0.4, not at 0.9.
fn setup(dir: &Path, threshold: f64) {
    let config = format!(
        "version: 1
corpus: corpus.jsonl
metrics: [recall@5, faithfulness]
judges:
  default: {{ kind: lexical, version: 1, threshold: {threshold} }}
cache: {{ mode: off }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  decision: point
  min_queries: 1
  rules:
    - {{ metric: faithfulness, max_drop: 0.05 }}
"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let (mut qrels, mut corpus, mut run) = (String::new(), String::new(), String::new());
    for i in 0..6 {
        let qid = format!("q{i}");
        let doc = format!("d{i}");
        writeln!(
            qrels,
            "{}",
            json!({"qid": qid, "query": "how long do backups stay", "gold_doc_ids": [doc]})
        )
        .unwrap();
        writeln!(corpus, "{}", json!({"doc_id": doc, "title": "", "text": "Backups stay in the Frankfurt region for 30 days."})).unwrap();
        let answer = if i % 2 == 1 {
            "Backups stay in the Frankfurt region for 30 days."
        } else {
            "Backups stay in the Frankfurt region for 90 days."
        };
        writeln!(
            run,
            "{}",
            json!({"qid": qid, "retrieved": [{"doc_id": doc}], "answer": answer})
        )
        .unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

fn accepted_baseline(dir: &Path) {
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    accept_baseline(dir, "smoke", "out/results.json", &[]);
}

#[test]
fn a_changed_judge_is_refused_or_re_judges_the_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 0.4);
    accepted_baseline(dir);
    let baseline: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("baseline.json")).unwrap()).unwrap();
    assert_eq!(baseline["summary"]["all"]["faithfulness"]["mean"], 1.0);

    setup(dir, 0.9);
    let refused = Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    assert!(
        refused.stderr.contains(
            "judge `default` differs from the baseline's (lexical-1 threshold=0.4 stem=true claims=sentences-1 -> lexical-1 threshold=0.9 stem=true claims=sentences-1)"
        ) && refused.stderr.contains("--allow-judge-change"),
        "{}",
        refused.stderr
    );

    // Re-judged, the baseline's even answers lose support too: no drop, a pass. (Compared
    // without re-judging, faithfulness would fall from 1.0 to 0.5.)
    Ragate::gate("smoke", "run.jsonl", "out")
        .args(["--allow-judge-change"])
        .status(0)
        .run_in(dir);
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap();
    assert_eq!(results["summary"]["all"]["faithfulness"]["mean"], 0.5);
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary
            .contains("the baseline was re-judged with the current judges (--allow-judge-change)"),
        "{summary}"
    );
    assert!(summary.contains("threshold=0.9"), "{summary}");
    // The baseline is re-judged in memory: no rebuilt run is left beside the outputs.
    assert!(!dir.join("out/baseline-rejudge-run.jsonl").exists());

    // A real regression still fails after re-judging: every answer now says 90 days.
    let run = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    std::fs::write(dir.join("run.jsonl"), run.replace("30 days", "90 days")).unwrap();
    Ragate::gate("smoke", "run.jsonl", "out")
        .args(["--allow-judge-change"])
        .status(1)
        .run_in(dir);
}

#[test]
fn contexts_that_cannot_be_rebuilt_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 0.4);
    accepted_baseline(dir);
    setup(dir, 0.9);
    // Without a corpus (the current run carries its texts) the baseline's contexts are lost.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace("corpus: corpus.jsonl\n", ""),
    )
    .unwrap();
    let mut run = String::new();
    for i in 0..6 {
        writeln!(run, "{}", json!({"qid": format!("q{i}"), "retrieved": [{"doc_id": format!("d{i}"), "text": "Backups stay in the Frankfurt region for 30 days."}], "answer": "Backups stay in the Frankfurt region for 30 days."})).unwrap();
    }
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
    let out = Ragate::gate("smoke", "run.jsonl", "out")
        .args(["--allow-judge-change"])
        .status(2)
        .run_in(dir);
    assert!(
        out.stderr.contains("cannot be re-judged") && out.stderr.contains("no `corpus:`"),
        "{}",
        out.stderr
    );
}

#[test]
fn compare_refuses_or_re_judges_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, 0.4);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    std::fs::rename(dir.join("out/results.json"), dir.join("a.json")).unwrap();
    setup(dir, 0.9);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    std::fs::rename(dir.join("out/results.json"), dir.join("b.json")).unwrap();
    let refused = ragate_in(dir, &["compare", "a.json", "b.json"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("threshold=0.4") && refused.stderr.contains("threshold=0.9"),
        "{}",
        refused.stderr
    );
    let allowed = ragate_in(
        dir,
        &["compare", "a.json", "b.json", "--allow-judge-change"],
    );
    assert_eq!(allowed.code, 0, "{}{}", allowed.stdout, allowed.stderr);
    assert!(
        allowed.stderr.contains("a.json was re-judged"),
        "{}",
        allowed.stderr
    );
    // B judged otherwise than the config says: re-judging A with the config would not match.
    setup(dir, 0.7);
    let mismatch = ragate_in(
        dir,
        &["compare", "a.json", "b.json", "--allow-judge-change"],
    );
    assert_eq!(mismatch.code, 2, "{}", mismatch.stderr);
    assert!(
        mismatch.stderr.contains("was not judged by them"),
        "{}",
        mismatch.stderr
    );
}
