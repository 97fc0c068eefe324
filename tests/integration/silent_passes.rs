//! Nothing passes unseen: a generator that stops answering fails the gate through the default
//! `empty_answers` check (also with `empty_answer: exclude`, and against a baseline recorded
//! before the metric existed), and a floor counts every current query of its slice, new queries
//! and new slice values included.

use std::path::Path;

use serde_json::Value;

use crate::{Ragate, accept_baseline, ragate_in};

const CONFIG: &str = r#"version: 1
metrics:
  - recall@5
  - { name: faithfulness, empty_answer: exclude }
  - answer_length
slices: [class]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baselines/smoke.json }
gate:
  min_queries: 5
  rules:
    - { metric: recall@5, max_drop: 0.05, min: 0.9 }
    - { metric: faithfulness, max_drop: 0.05 }
    - { metric: answer_length, max_increase_pct: 50 }
"#;

const ANSWER: &str = "Stowbox keeps deleted objects for 11 days.";

/// `n` queries `q00`..: class `old` for the first `old`, `new` for the rest.
fn qrels(n: usize, old: usize) -> String {
    (0..n)
        .map(|i| {
            let class = if i < old { "old" } else { "new" };
            format!(
                "{{\"qid\":\"q{i:02}\",\"query\":\"how long are deleted objects kept {i}\",\
                 \"class\":\"{class}\",\"graded_relevance\":{{\"d{i}\":1}}}}\n"
            )
        })
        .collect()
}

/// A run of `n` queries: the relevant doc first unless `missed(i)`, the answer empty when
/// `empty(i)`.
fn run(n: usize, missed: impl Fn(usize) -> bool, empty: impl Fn(usize) -> bool) -> String {
    (0..n)
        .map(|i| {
            let first = if missed(i) { "x" } else { "d" };
            let answer = if empty(i) { "" } else { ANSWER };
            format!(
                "{{\"qid\":\"q{i:02}\",\"retrieved\":[{{\"doc_id\":\"{first}{i}\"}}],\
                 \"contexts\":[\"{ANSWER}\"],\"answer\":\"{answer}\"}}\n"
            )
        })
        .collect()
}

/// A tier of 40 queries with a baseline where every query is found and answered.
fn baselined(dir: &Path) {
    std::fs::write(dir.join("eval-config.yaml"), CONFIG).unwrap();
    std::fs::write(dir.join("qrels.jsonl"), qrels(40, 40)).unwrap();
    std::fs::write(dir.join("base.jsonl"), run(40, |_| false, |_| false)).unwrap();
    Ragate::gate("smoke", "base.jsonl", "first")
        .args(["--format", "json"])
        .status(2)
        .run_in(dir); // no baseline yet
    accept_baseline(dir, "smoke", "first/results.json", &[]);
}

fn check<'a>(document: &'a Value, name: &str) -> &'a Value {
    document["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {document:#}"))
}

/// The report of a run whose generator answers only 2 of 40 queries.
fn assert_empty_answers_fail(dir: &Path, out: &str, outcome: &crate::Outcome) {
    assert_eq!(outcome.code, 1, "{}\n{}", outcome.stdout, outcome.stderr);
    let document: Value = serde_json::from_str(&outcome.stdout).unwrap();
    let empty = check(&document, "empty_answers [all]");
    assert_eq!(empty["status"], "fail", "{empty:#}");
    assert_eq!(empty["baseline"], 0.0);
    assert_eq!(empty["current"], 0.95);
    assert_eq!(empty["limit"], 0.05);
    // What hid it before: faithfulness leaves the empty answers out, answer_length got shorter.
    let faithfulness = check(&document, "faithfulness [all]");
    assert_eq!(faithfulness["status"], "skipped", "{faithfulness:#}");
    assert_eq!(faithfulness["n"], 2);
    let summary = std::fs::read_to_string(dir.join(out).join("summary.md")).unwrap();
    let headline = summary.lines().next().unwrap();
    assert!(headline.starts_with("**❌ "), "{summary}");
    assert!(
        headline.contains("worst empty_answers [all] +0.9500 (limit +0.0500)"),
        "{summary}"
    );
    assert!(
        summary.contains("38 of 40 answers are empty or missing (baseline: 0 of 40); `empty_answer: exclude` leaves them out of faithfulness"),
        "{summary}"
    );
    let junit = std::fs::read_to_string(dir.join(out).join("junit.xml")).unwrap();
    let case = junit
        .split("<testcase ")
        .find(|case| case.starts_with("name=\"empty_answers [all]\""))
        .unwrap_or_else(|| panic!("{junit}"));
    let case = &case[..case.find("</testcase>").unwrap_or(case.len())];
    assert!(case.contains("<failure"), "{case}");
    // results.json keeps the per-query values, so the next run can pair them.
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(out).join("results.json")).unwrap())
            .unwrap();
    assert_eq!(results["queries"]["q00"]["metrics"]["empty_answers"], 1.0);
    assert_eq!(results["queries"]["q39"]["metrics"]["empty_answers"], 0.0);
    assert_eq!(results["summary"]["all"]["empty_answers"]["mean"], 0.95);
}

#[test]
fn a_generator_that_stops_answering_fails_the_default_empty_answers_check() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    let same = Ragate::gate("smoke", "base.jsonl", "same")
        .args(["--format", "json"])
        .status(0)
        .run_in(dir);
    let document: Value = serde_json::from_str(&same.stdout).unwrap();
    assert_eq!(check(&document, "empty_answers [all]")["status"], "pass");
    assert_eq!(
        check(&document, "empty_answers [class=old]")["status"],
        "pass"
    );

    std::fs::write(dir.join("empty.jsonl"), run(40, |_| false, |i| i < 38)).unwrap();
    let empty = Ragate::gate("smoke", "empty.jsonl", "empty")
        .args(["--format", "json"])
        .run_in(dir);
    assert_empty_answers_fail(dir, "empty", &empty);
    // The HTML report decides the same checks and carries the warning.
    let report = ragate_in(
        dir,
        &[
            "report",
            "--tier",
            "smoke",
            "--from",
            "empty",
            "--out",
            "report.html",
        ],
    );
    assert_eq!(report.code, 0, "{}", report.stderr);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("empty_answers [all] regressed"), "{html}");
    assert!(
        html.contains("38 of 40 answers are empty or missing"),
        "{html}"
    );
}

#[test]
fn with_empty_answer_zero_faithfulness_and_empty_answers_both_fail() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    let zero = CONFIG.replace(
        "{ name: faithfulness, empty_answer: exclude }",
        "faithfulness",
    );
    assert_ne!(zero, CONFIG);
    std::fs::write(dir.join("eval-config.yaml"), zero).unwrap();
    std::fs::write(dir.join("empty.jsonl"), run(40, |_| false, |i| i < 38)).unwrap();
    let outcome = Ragate::gate("smoke", "empty.jsonl", "zero")
        .args(["--format", "json"])
        .status(1)
        .run_in(dir);
    let document: Value = serde_json::from_str(&outcome.stdout).unwrap();
    // An empty answer scores 0: faithfulness sees all 40 queries and drops; the share of empty
    // answers fails on its own, and the warning names no excluded metric.
    let faithfulness = check(&document, "faithfulness [all]");
    assert_eq!(faithfulness["status"], "fail", "{faithfulness:#}");
    assert_eq!(faithfulness["n"], 40);
    assert_eq!(check(&document, "empty_answers [all]")["status"], "fail");
    let summary = std::fs::read_to_string(dir.join("zero/summary.md")).unwrap();
    assert!(
        summary.contains("38 of 40 answers are empty or missing (baseline: 0 of 40); the `empty_answers` checks gate their share"),
        "{summary}"
    );
}

#[test]
fn a_baseline_from_before_empty_answers_is_gated_on_its_stored_answers() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    // The baseline as an older ragate wrote it: no `empty_answers` anywhere.
    let path = dir.join("baselines/smoke.json");
    let mut baseline: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let text = baseline.to_string();
    assert!(text.contains("empty_answers"), "{text}");
    baseline["metrics"]
        .as_array_mut()
        .unwrap()
        .retain(|m| m != "empty_answers");
    for slice in baseline["summary"].as_object_mut().unwrap().values_mut() {
        slice.as_object_mut().unwrap().remove("empty_answers");
    }
    for query in baseline["queries"].as_object_mut().unwrap().values_mut() {
        query["metrics"]
            .as_object_mut()
            .unwrap()
            .remove("empty_answers");
    }
    assert!(!baseline.to_string().contains("empty_answers"));
    std::fs::write(&path, serde_json::to_string_pretty(&baseline).unwrap()).unwrap();

    std::fs::write(dir.join("empty.jsonl"), run(40, |_| false, |i| i < 38)).unwrap();
    let empty = Ragate::gate("smoke", "empty.jsonl", "empty")
        .args(["--format", "json"])
        .run_in(dir);
    assert_empty_answers_fail(dir, "empty", &empty);
    let summary = std::fs::read_to_string(dir.join("empty/summary.md")).unwrap();
    assert!(
        summary.contains("the baseline predates the `empty_answers` metric"),
        "{summary}"
    );
    assert!(
        summary.contains("accept a new baseline to record them"),
        "{summary}"
    );
}

#[test]
fn twenty_new_queries_scoring_zero_fail_the_floor_and_their_slice_gets_its_floor() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    baselined(dir);
    // 20 new queries, class `new` (a slice value the baseline does not have), none found.
    std::fs::write(dir.join("qrels.jsonl"), qrels(60, 40)).unwrap();
    std::fs::write(dir.join("grown.jsonl"), run(60, |i| i >= 40, |_| false)).unwrap();
    let grown = Ragate::gate("smoke", "grown.jsonl", "grown")
        .args(["--format", "json"])
        .status(1)
        .run_in(dir);
    let document: Value = serde_json::from_str(&grown.stdout).unwrap();
    let all = check(&document, "recall@5 [all]");
    assert_eq!(all["status"], "fail", "{all:#}");
    assert_eq!(all["n"], 40, "the change is paired on the 40 old queries");
    assert_eq!(all["floor"]["n"], 60);
    assert!(
        all["verdict"]
            .as_str()
            .unwrap()
            .contains("0.6667 is below min 0.9 (the current mean over 60 queries)"),
        "{all:#}"
    );
    let new = check(&document, "recall@5 [class=new]");
    assert_eq!(new["status"], "fail", "{new:#}");
    assert_eq!(new["n"], 0);
    assert_eq!(new["current"], 0.0);
    assert_eq!(new["floor"]["n"], 20);
    assert!(
        new["verdict"]
            .as_str()
            .unwrap()
            .contains("0.0000 is below min 0.9 (the current mean over 20 queries)"),
        "{new:#}"
    );
    let summary = std::fs::read_to_string(dir.join("grown/summary.md")).unwrap();
    let headline = summary.lines().next().unwrap();
    assert!(
        headline.contains("worst recall@5 [all] 0.6667 (min 0.9, 60 queries)"),
        "{summary}"
    );
    assert!(
        summary.contains("| ❌ recall@5 [all] | 1.0000 → 1.0000 · +0.0000 (+0.0%); all 60 now: 0.6667 | min 0.9 |"),
        "{summary}"
    );
    assert!(
        summary.contains("| ❌ recall@5 [class=new] | 0.0000 · – | min 0.9 |"),
        "{summary}"
    );
    let junit = std::fs::read_to_string(dir.join("grown/junit.xml")).unwrap();
    assert!(junit.contains("name=\"recall@5 [class=new]\""), "{junit}");
}

#[test]
fn a_first_run_reports_its_floors_without_gating_them() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("eval-config.yaml"), CONFIG).unwrap();
    std::fs::write(dir.join("qrels.jsonl"), qrels(40, 30)).unwrap();
    std::fs::write(dir.join("half.jsonl"), run(40, |i| i % 2 == 0, |_| false)).unwrap();
    let first = Ragate::gate("smoke", "half.jsonl", "first")
        .args(["--format", "json"])
        .status(2)
        .run_in(dir); // no baseline: nothing is gated
    let summary = std::fs::read_to_string(dir.join("first/summary.md")).unwrap();
    assert!(summary.contains("**Floors on this run**"), "{summary}");
    for line in [
        "❌ recall@5 [all]: 0.5000 is below min 0.9 (the current mean over 40 queries)",
        "❌ recall@5 [class=old]: 0.5000 is below min 0.9 (the current mean over 30 queries)",
    ] {
        assert!(summary.contains(line), "{summary}");
        assert!(first.stderr.contains(line), "{}", first.stderr);
    }
}
