//! Must-pass queries and pass^k (issue 49): in a 2,000-query tier, the one must-pass query that
//! loses its relevant document fails the run, named first in every output, while the statistics
//! over the tier see nothing; the same tier without `must_pass` passes. With `repeats: 3`, a
//! must-pass query that passes 2 of its 3 runs fails under "3 of 3" and passes under "2 of 3".

use std::fmt::Write as _;
use std::path::Path;

use crate::{Ragate, accept_baseline, ragate_env};

const QUERIES: usize = 2_000;
/// The must-pass query, the one that breaks.
const GOLDEN: usize = 1_717;

const CONFIG: &str = "version: 1
metrics: [recall@10, mrr]
slices: [class]
tiers:
  regression: { qrels: qrels.jsonl, baseline: baselines/regression.json }
gate:
  rules:
    - { metric: recall@10, max_drop: 0.02 }
    - { metric: mrr, max_drop: 0.02 }
";

/// The tier's qrels: query i has gold doc `q{i}-g`, class `a` or `b`; [`GOLDEN`] is marked
/// must-pass when `must_pass`.
fn write_tier(dir: &Path, must_pass: bool) {
    let mut qrels = String::new();
    for i in 0..QUERIES {
        let flag = if must_pass && i == GOLDEN {
            ",\"must_pass\":true"
        } else {
            ""
        };
        let class = if i % 2 == 0 { "a" } else { "b" };
        writeln!(
            qrels,
            "{{\"qid\":\"q{i:04}\",\"query\":\"question {i}\",\"gold_doc_ids\":[\"q{i:04}-g\"],\"class\":\"{class}\"{flag}}}"
        )
        .unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("eval-config.yaml"), CONFIG).unwrap();
}

/// A run where every query ranks its gold doc first, but `lost`, which ranks fillers only.
fn write_run(path: &Path, lost: Option<usize>) {
    let mut text = String::new();
    for i in 0..QUERIES {
        let mut docs: Vec<String> = (1..10).map(|r| format!("filler-{r}")).collect();
        if Some(i) != lost {
            docs.insert(0, format!("q{i:04}-g"));
        }
        let docs: Vec<String> = docs
            .iter()
            .map(|doc| format!("{{\"doc_id\":\"{doc}\"}}"))
            .collect();
        writeln!(
            text,
            "{{\"qid\":\"q{i:04}\",\"retrieved\":[{}]}}",
            docs.join(",")
        )
        .unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// The tier with its baseline accepted from the perfect run, and the run that loses the golden
/// query's document.
fn tier_with_baseline(dir: &Path, must_pass: bool) {
    write_tier(dir, must_pass);
    write_run(&dir.join("base.jsonl"), None);
    write_run(&dir.join("lost.jsonl"), Some(GOLDEN));
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir);
    accept_baseline(dir, "regression", "out/results.json", &[]);
}

/// The test case that `xml` starts with, up to the next one.
fn testcase(xml: &str) -> &str {
    let end = xml[1..].find("<testcase").map_or(xml.len(), |at| at + 1);
    &xml[..end]
}

#[test]
fn a_must_pass_query_that_loses_its_document_fails_a_2000_query_tier_named_first() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    tier_with_baseline(dir, true);
    Ragate::gate("regression", "base.jsonl", "out")
        .status(0)
        .run_in(dir);
    let failed = Ragate::gate("regression", "lost.jsonl", "out")
        .status(1)
        .run_in(dir);
    // summary.md writes the arrows as one glyph.
    let broke = "must-pass q1717 broke: recall@10 1.0000 → 0.0000, mrr 1.0000 → 0.0000; lost \
                 its relevant document q1717-g (rank 1 in the baseline)";
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    let headline = summary.lines().next().unwrap();
    assert!(headline.contains(broke), "{summary}");
    // The statistics over 2,000 queries see nothing: both `all` checks pass.
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let first_case = &junit[junit.find("<testcase ").unwrap()..];
    assert!(
        first_case.starts_with("<testcase name=\"must-pass q1717\""),
        "{junit}"
    );
    assert!(testcase(first_case).contains("<failure"), "{junit}");
    for check in ["recall@10 [all]", "mrr [all]"] {
        let case = &junit[junit.find(&format!("<testcase name=\"{check}\"")).unwrap()..];
        assert!(!testcase(case).contains("<failure"), "{check}: {junit}");
    }
    let json = Ragate::new([
        "gate",
        "--tier",
        "regression",
        "--run",
        "lost.jsonl",
        "--out",
        "out",
        "--format",
        "json",
    ])
    .status(1)
    .run_in(dir);
    let gate: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let first = &gate["checks"][0];
    assert_eq!(first["name"], "must-pass q1717", "{gate:#}");
    assert_eq!(first["family"], "must_pass");
    assert_eq!(first["status"], "fail");
    let errors = crate::json_schema::Schema::published("gate.schema.json").errors(&gate);
    assert!(errors.is_empty(), "{errors:?}");
    // The terminal's table lists it first too.
    let first_row = failed.stdout.lines().find(|line| line.starts_with("FAIL"));
    assert!(
        first_row.is_some_and(|row| row.contains("must-pass q1717")),
        "{}",
        failed.stdout
    );
}

#[test]
fn merged_shards_decide_the_must_pass_query_as_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    tier_with_baseline(dir, true);
    let reproducible = [("SOURCE_DATE_EPOCH", "1796056735")];
    let gate = |extra: &[&str]| {
        let mut args = vec!["gate", "--tier", "regression", "--run", "lost.jsonl"];
        args.extend(extra);
        ragate_env(dir, &args, &reproducible)
    };
    assert_eq!(gate(&["--out", "whole"]).code, 1);
    for index in 1..=3 {
        let (shard, out) = (format!("{index}/3"), format!("shard{index}"));
        assert_eq!(gate(&["--shard", &shard, "--out", &out]).code, 0);
    }
    let merged = ragate_env(
        dir,
        &[
            "merge",
            "--tier",
            "regression",
            "--out",
            "merged",
            "shard1",
            "shard2",
            "shard3",
        ],
        &reproducible,
    );
    assert_eq!(merged.code, 1, "{}", merged.stderr);
    for file in ["results.json", "junit.xml", "summary.md"] {
        let read = |folder: &str| std::fs::read(dir.join(folder).join(file)).unwrap();
        assert!(read("merged") == read("whole"), "{file} differs");
    }
    let summary = std::fs::read_to_string(dir.join("merged/summary.md")).unwrap();
    assert!(
        summary
            .lines()
            .next()
            .unwrap()
            .contains("must-pass q1717 broke"),
        "{summary}"
    );
}

#[test]
fn with_a_history_the_must_pass_query_is_recorded_and_still_decides() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    tier_with_baseline(dir, true);
    std::fs::create_dir(dir.join("hist")).unwrap();
    for (night, (run, status)) in [("base.jsonl", 0), ("lost.jsonl", 1)]
        .into_iter()
        .enumerate()
    {
        let sha = format!("{night:040}");
        Ragate::gate("regression", run, "out")
            .args(["--history", "hist"])
            .sha(&sha)
            .status(status)
            .run_in(dir);
        let epoch = (1_796_056_735 + 86_400 * night).to_string();
        let added = ragate_env(
            dir,
            &[
                "history",
                "add",
                "--tier",
                "regression",
                "--from",
                "out/results.json",
                "--history",
                "hist",
            ],
            &[("SOURCE_DATE_EPOCH", &epoch), ("GITHUB_SHA", &sha)],
        );
        assert_eq!(added.code, 0, "{}", added.stderr);
    }
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary
            .lines()
            .next()
            .unwrap()
            .contains("must-pass q1717 broke"),
        "{summary}"
    );
    // Every record file under the history folder.
    let mut records = Vec::new();
    let mut folders = vec![dir.join("hist")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                records.push(std::fs::read_to_string(path).unwrap());
            }
        }
    }
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(
        records
            .iter()
            .all(|record| record.contains("\"must-pass q1717\"")),
        "{records:?}"
    );
}

#[test]
fn the_same_tier_without_must_pass_passes() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    tier_with_baseline(dir, false);
    let passed = Ragate::gate("regression", "lost.jsonl", "out")
        .status(0)
        .run_in(dir);
    assert!(!passed.stdout.contains("must-pass"), "{}", passed.stdout);
}

/// A pipeline that answers its n-th invocation from `run.<n>.jsonl`.
const CYCLING_PIPELINE: &str = r#"import json, os, sys
count = 1
if os.path.exists("invocations.txt"):
    count = int(open("invocations.txt").read()) + 1
open("invocations.txt", "w").write(str(count))
answers = {}
for line in open(f"run.{count}.jsonl"):
    answers[json.loads(line)["qid"]] = line.strip()
for request in sys.stdin:
    print(answers[json.loads(request)["qid"]], flush=True)
"#;

/// A 40-query tier run 3 times by [`CYCLING_PIPELINE`], must-pass query q0003 answered from
/// `runs` (whether each run keeps its gold doc), with `must_pass_key` in the tier.
fn repeated_tier(dir: &Path, runs: [bool; 3], must_pass_key: &str) {
    let mut qrels = String::new();
    for i in 0..40 {
        let flag = if i == 3 { ",\"must_pass\":true" } else { "" };
        writeln!(
            qrels,
            "{{\"qid\":\"q{i:04}\",\"query\":\"question {i}\",\"gold_doc_ids\":[\"q{i:04}-g\"]{flag}}}"
        )
        .unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("pipeline.py"), CYCLING_PIPELINE).unwrap();
    let config = format!(
        "version: 1\nmetrics: [recall@10]\npipeline:\n  command: [python3, pipeline.py]\n\
         tiers:\n  regression: {{ qrels: qrels.jsonl, baseline: baselines/regression.json, \
         repeats: 3{must_pass_key} }}\n\
         gate:\n  rules:\n    - {{ metric: recall@10, max_drop: 0.02 }}\n"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    for (run, keeps) in runs.iter().enumerate() {
        let lost = (!keeps).then_some(3);
        let path = dir.join(format!("run.{}.jsonl", run + 1));
        let mut text = String::new();
        for i in 0..40 {
            let doc = if Some(i) == lost {
                "filler".to_string()
            } else {
                format!("q{i:04}-g")
            };
            writeln!(
                text,
                "{{\"qid\":\"q{i:04}\",\"retrieved\":[{{\"doc_id\":\"{doc}\"}}],\"answer\":\"a\"}}"
            )
            .unwrap();
        }
        std::fs::write(path, text).unwrap();
    }
    let _ = std::fs::remove_file(dir.join("invocations.txt"));
}

/// Gates the tier of `repeated_tier` against a baseline of perfect runs: its exit code and
/// summary.
fn gate_repeated(runs: [bool; 3], must_pass_key: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    repeated_tier(dir, [true; 3], must_pass_key);
    Ragate::new(["gate", "--tier", "regression", "--out", "out"])
        .status(2)
        .run_in(dir);
    accept_baseline(dir, "regression", "out/results.json", &[]);
    repeated_tier(dir, runs, must_pass_key);
    let gated = Ragate::new(["gate", "--tier", "regression", "--out", "out"]).run_in(dir);
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    (gated.code, summary)
}

#[test]
fn with_three_repeats_all_three_must_pass_by_default() {
    let (code, summary) = gate_repeated([true, false, true], "");
    assert_eq!(code, 1, "{summary}");
    assert!(
        summary.contains(
            "must-pass q0003 broke: recall@10 1.0000 → 0.0000; passed 2 of 3 runs (3 required): \
             pass, fail, pass"
        ),
        "{summary}"
    );
    let (code, summary) = gate_repeated([true, true, true], "");
    assert_eq!(code, 0, "{summary}");
    let (code, summary) = gate_repeated([true, false, true], ", must_pass: { min_repeats: 3 }");
    assert_eq!(code, 1, "{summary}");
}

#[test]
fn min_repeats_lets_a_must_pass_query_pass_k_of_n() {
    let key = ", must_pass: { min_repeats: 2 }";
    let (code, summary) = gate_repeated([true, false, true], key);
    assert_eq!(code, 0, "{summary}");
    let (code, summary) = gate_repeated([false, false, true], key);
    assert_eq!(code, 1, "{summary}");
    assert!(
        summary.contains("passed 1 of 3 runs (2 required): fail, fail, pass"),
        "{summary}"
    );
}
