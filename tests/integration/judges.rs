//! The `command` judge as a real subprocess: verdicts in any order, and every way a judge can
//! break the contract fails closed (exit 2, naming the judge and the request).

use std::fmt::Write as _;
use std::path::Path;

use crate::{Ragate, fixture, path_str, ragate_in};

fn setup(dir: &Path, mode: &str, timeout_s: u64) {
    let script = fixture("judges/keyword_judge.py");
    let config = format!(
        "version: 1
metrics: [recall@5, {{ name: faithfulness, judge: ext }}, {{ name: answer_relevance, judge: ext }}]
judges:
  ext: {{ kind: command, command: [python3, \"{}\", {mode}], timeout_s: {timeout_s} }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  rules:
    - {{ metric: faithfulness, max_drop: 0.05 }}
",
        path_str(&script)
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let (mut qrels, mut run) = (String::new(), String::new());
    for i in 0..12 {
        writeln!(qrels, "{{\"qid\":\"q{i:02}\",\"query\":\"which region stores backups {i}\",\"gold_doc_ids\":[\"d{i}\"]}}").unwrap();
        let extra = if i % 4 == 0 {
            " Backups are encrypted twice."
        } else {
            ""
        };
        let line = serde_json::json!({
            "qid": format!("q{i:02}"),
            "retrieved": [{"doc_id": format!("d{i}"), "text": format!("Backups for tenant {i} stay in the Frankfurt region.")}],
            "answer": format!("Backups stay in the Frankfurt region.{extra}"),
        });
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

#[test]
fn a_command_judge_decides_faithfulness() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), "ok", 30);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir.path()); // no baseline yet, but evaluated
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/results.json")).unwrap(),
    )
    .unwrap();
    // q00, q04, q08 add an unsupported sentence: 1/2; the others 1
    assert_eq!(results["queries"]["q00"]["metrics"]["faithfulness"], 0.5);
    assert_eq!(results["queries"]["q01"]["metrics"]["faithfulness"], 1.0);
    assert_eq!(
        results["queries"]["q01"]["metrics"]["answer_relevance"],
        1.0
    );
    assert_eq!(results["queries"]["q00"]["claims"][1]["grade"], 0);
    assert!(
        results["provenance"]["judges"]["ext"]
            .as_str()
            .unwrap()
            .starts_with("command `python3 ")
    );
}

#[test]
fn a_broken_judge_fails_closed() {
    let long_id = format!(
        "unknown request id `{}… (10000 characters)`",
        "7".repeat(200)
    );
    let cases = [
        ("contradict", 30, "grade 0 contradicts verdict true"),
        ("crash", 30, "): it exited with code 3"),
        ("killed", 30, "): it was killed by signal 9 (SIGKILL)"),
        ("hang", 1, "timed out after 1s"),
        ("skip", 30, "): it exited with code 0"),
        (
            "garbage",
            30,
            "expected {\"id\", \"verdict\", \"grade\"?} (the line: `not json`)",
        ),
        ("unknown", 30, "unknown request id `999999`"),
        ("long-id", 30, long_id.as_str()),
    ];
    for (mode, timeout, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), mode, timeout);
        let out = Ragate::gate("smoke", "run.jsonl", "out").run_in(dir.path());
        assert_eq!(out.code, 2, "{mode}: {}", out.stderr);
        assert!(
            out.stderr.contains("judge `ext`: `python3 "),
            "{mode}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains(expected),
            "{mode}: expected `{expected}` in {}",
            out.stderr
        );
        if ["crash", "killed", "skip"].contains(&mode) {
            assert!(
                out.stderr
                    .contains("closed its output without answering request 0 ("),
                "{mode}: {}",
                out.stderr
            );
        }
        assert!(
            !out.stderr.contains("Some(") && out.stderr.len() < 2000,
            "{mode}: plain values, echoes cut short: {}",
            out.stderr
        );
        assert!(
            !dir.path().join("out/results.json").exists(),
            "{mode}: nothing is written as if evaluated"
        );
    }
}

#[test]
fn judge_agreement_compares_two_judges_on_the_same_claims() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), "ok", 30);
    let out = ragate_in(
        dir.path(),
        &[
            "judge-agreement",
            "--tier",
            "smoke",
            "--judges",
            "default,ext",
            "--run",
            "run.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // 12 answers: 9 with one claim, 3 with two; both judges support the first claim and reject
    // "Backups are encrypted twice." (no context word), so they agree on all 15.
    assert!(out.stdout.starts_with("judges `default` and `ext` on 15 claims of tier `smoke`\nagreement 1.000, Cohen's kappa 1.000\n"), "{}", out.stdout);
    let as_json = ragate_in(
        dir.path(),
        &[
            "judge-agreement",
            "--tier",
            "smoke",
            "--judges",
            "default,ext",
            "--run",
            "run.jsonl",
            "--format",
            "json",
        ],
    );
    let document: serde_json::Value = serde_json::from_str(&as_json.stdout).unwrap();
    assert_eq!(document["claims"], 15);
    assert_eq!(document["agreement"], 1.0);
    assert_eq!(document["kappa"], 1.0);
    assert_eq!(document["confusion"]["both_supported"], 12);
    assert_eq!(document["confusion"]["both_unsupported"], 3);
    let unknown = ragate_in(
        dir.path(),
        &[
            "judge-agreement",
            "--tier",
            "smoke",
            "--judges",
            "default,extt",
            "--run",
            "run.jsonl",
        ],
    );
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("no judge `extt`")
            && unknown.stderr.contains("(did you mean `ext`?)"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_judge_asked_again_reports_its_flips() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir, "flaky", 30);
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace(
            "baseline: baseline.json }",
            "baseline: baseline.json, judge_repeats: 2 }",
        ),
    )
    .unwrap();
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    // The gate keeps the first asking: q00's second claim is unsupported.
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap();
    assert_eq!(results["queries"]["q00"]["metrics"]["faithfulness"], 0.5);
    crate::accept_baseline(dir, "smoke", "out/results.json", &[]);
    // Both askings now come from the cache (each under its own key): the flips stay.
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(0)
        .run_in(dir);
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/run-stats.json")).unwrap())
            .unwrap();
    let consistency = &stats["judge_consistency"];
    assert_eq!(consistency["askings"], 2, "{stats}");
    // 12 answers, 3 of them with a second claim ("Backups are encrypted twice"): 15 claims, and
    // the second asking reversed the 3 about encryption.
    assert_eq!(consistency["claims"], 15);
    assert_eq!(consistency["flipped_claims"].as_array().unwrap().len(), 3);
    assert_eq!(consistency["flipped_claims"][0]["qid"], "q00");
    assert_eq!(
        consistency["metrics"]["faithfulness"],
        serde_json::json!([12, 3])
    );
    assert_eq!(
        consistency["metrics"]["answer_relevance"],
        serde_json::json!([12, 0])
    );
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("judge self-consistency over 2 askings of the same answers: 3 of 15 claims (20.0%) changed their support verdict"),
        "{summary}"
    );
    assert!(
        summary.contains("claim whose verdict flipped, `q00`: Backups are encrypted twice"),
        "{summary}"
    );
}
