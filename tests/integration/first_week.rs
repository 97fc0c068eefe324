//! A team's first week: a sampled tier that stays put as its qrels grow, the headline that says
//! when only part of the tier was compared, and `validate` predicting each refusal of the gate
//! that can be known before the pipeline runs.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Outcome, Ragate, accept_baseline, ragate_in};

const LENGTHS: [&str; 3] = ["short", "medium", "long"];

/// `eval-config.yaml` of a smoke tier sampled from `qrels.jsonl` (40 queries, stratified by
/// `length`, seed `seed`), its qrels of the queries `qids` and a run that retrieves each one's
/// relevant document first.
fn write_sampled_tier(dir: &Path, qids: &[usize], seed: u64) {
    let config = format!(
        "version: 1
metrics: [recall@5, mrr]
tiers:
  smoke: {{ from: qrels.jsonl, sample: 40, stratify: length, seed: {seed}, baseline: baselines/smoke.json }}
gate:
  decision: point
  rules:
    - {{ metric: mrr, max_drop: 0.1 }}
"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let (mut qrels, mut run) = (String::new(), String::new());
    for &i in qids {
        let length = LENGTHS[(i * 7 + i / 3) % 3];
        let line = json!({"qid": format!("c{i:03}"), "query": "q", "gold_doc_ids": [format!("d{i}")], "length": length});
        writeln!(qrels, "{line}").unwrap();
        let line = json!({"qid": format!("c{i:03}"), "retrieved": [{"doc_id": format!("d{i}")}]});
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

/// The qids of a results file.
fn qids_of(path: &Path) -> BTreeSet<String> {
    let results: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    results["queries"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

fn gate(dir: &Path, out: &str) -> Outcome {
    Ragate::gate("smoke", "run.jsonl", out).run_in(dir)
}

/// The tier `write` sets up in `dir`, gated once (exit 2: no baseline yet) and that run accepted
/// as its baseline.
fn accept_first_run(dir: &Path, write: impl FnOnce()) {
    write();
    assert_eq!(gate(dir, "first").code, 2, "no baseline yet");
    accept_baseline(dir, "smoke", "first/results.json", &[]);
}

#[test]
fn appended_queries_change_the_sample_by_about_as_many_and_a_removed_one_leaves_alone() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let first: Vec<usize> = (0..225).collect();
    accept_first_run(dir, || write_sampled_tier(dir, &first, 1));
    let accepted = qids_of(&dir.join("baselines/smoke.json"));
    assert_eq!(accepted.len(), 40);

    for (added, least) in [(1, 39), (5, 35)] {
        let grown: Vec<usize> = (0..225 + added).collect();
        write_sampled_tier(dir, &grown, 1);
        let out = format!("grown{added}");
        let outcome = gate(dir, &out);
        assert_eq!(
            outcome.code, 0,
            "+{added}: {}{}",
            outcome.stdout, outcome.stderr
        );
        let sampled = qids_of(&dir.join(&out).join("results.json"));
        let shared = sampled.intersection(&accepted).count();
        assert!(
            shared >= least,
            "+{added} queries: the baseline shares {shared} of 40 sampled queries, expected at least {least}"
        );
        // Below 90% of the tier (36 of 40), the totals say how many were compared.
        let compared = format!("compared {shared} of 40 queries");
        assert_eq!(
            outcome.stdout.contains(&compared),
            shared < 36,
            "{}",
            outcome.stdout
        );
    }

    // A sampled query leaves the file: only it leaves the sample.
    let removed: usize = accepted.iter().next().unwrap()[1..].parse().unwrap();
    let fewer: Vec<usize> = (0..225).filter(|&i| i != removed).collect();
    write_sampled_tier(dir, &fewer, 1);
    assert_eq!(gate(dir, "fewer").code, 0);
    let sampled = qids_of(&dir.join("fewer/results.json"));
    assert_eq!(sampled.intersection(&accepted).count(), 39);
    assert!(!sampled.contains(&format!("c{removed:03}")));

    // Eight of the baseline's queries gone: 32 of 40 (80%) compared, said beside the verdict.
    let gone: Vec<usize> = accepted
        .iter()
        .take(8)
        .map(|qid| qid[1..].parse().unwrap())
        .collect();
    let rest: Vec<usize> = (0..225).filter(|i| !gone.contains(i)).collect();
    write_sampled_tier(dir, &rest, 1);
    let outcome = gate(dir, "part");
    assert_eq!(outcome.code, 0, "{}{}", outcome.stdout, outcome.stderr);
    let shared = qids_of(&dir.join("part/results.json"))
        .intersection(&accepted)
        .count();
    assert_eq!(shared, 32);
    assert!(
        outcome.stdout.contains("; compared 32 of 40 queries"),
        "{}",
        outcome.stdout
    );
    let summary = std::fs::read_to_string(dir.join("part/summary.md")).unwrap();
    let headline = summary.lines().next().unwrap();
    assert!(
        headline.contains("checks passed · compared 32 of 40 queries**"),
        "{headline}"
    );
    let json = Ragate::gate("smoke", "run.jsonl", "part-json")
        .args(["--format", "json"])
        .status(0)
        .run_in(dir);
    let document: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["compared"], "compared 32 of 40 queries");

    // Half of them gone: fewer than half of the tier pairs, so the run is not decided.
    let gone: Vec<usize> = accepted
        .iter()
        .take(21)
        .map(|qid| qid[1..].parse().unwrap())
        .collect();
    let rest: Vec<usize> = (0..225).filter(|i| !gone.contains(i)).collect();
    write_sampled_tier(dir, &rest, 1);
    Ragate::gate("smoke", "run.jsonl", "minority")
        .status(2)
        .stderr_has("the baseline shares 19 of 40 queries with tier `smoke`")
        .stderr_has("fewer than 50% of them")
        .stderr_has("ragate baseline accept --tier smoke")
        .run_in(dir);
}

#[test]
fn a_new_seed_is_a_new_sample_and_the_gate_says_so_with_the_command_that_replaces_the_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let all: Vec<usize> = (0..225).collect();
    accept_first_run(dir, || write_sampled_tier(dir, &all, 1));
    write_sampled_tier(dir, &all, 2);
    Ragate::gate("smoke", "run.jsonl", "second")
        .status(2)
        .stderr_has("the sample changed since it was accepted (40 queries, stratify length, seed 1, stable-v2 -> 40 queries, stratify length, seed 2, stable-v2), so it is a new sample")
        .stderr_has("ragate baseline accept --tier smoke")
        .run_in(dir);
    Ragate::new(["validate"])
        .status(2)
        .stderr_has("the sample changed since it was accepted")
        .run_in(dir);
}

/// A tier of six queries with answers judged by the lexical judge at `threshold`, `extra` lines
/// added to the config's top level.
fn write_answer_tier(dir: &Path, threshold: f64, metrics: &str, extra: &str) {
    let config = format!(
        "version: 1
corpus: corpus.jsonl
metrics: [{metrics}]
judges:
  default: {{ kind: lexical, version: 1, threshold: {threshold} }}
cache: {{ mode: off }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
{extra}"
    );
    let config = if config.contains("\ngate:") {
        config
    } else {
        format!(
            "{config}gate:\n  decision: point\n  min_queries: 1\n  rules:\n    - {{ metric: recall@5, max_drop: 0.05 }}\n"
        )
    };
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let (mut qrels, mut corpus, mut run) = (String::new(), String::new(), String::new());
    for i in 0..6 {
        let (qid, doc) = (format!("q{i}"), format!("d{i}"));
        let line = json!({"qid": qid, "query": "how long do backups stay", "gold_doc_ids": [doc]});
        writeln!(qrels, "{line}").unwrap();
        let line = json!({"doc_id": doc, "title": "", "text": "Backups stay for 30 days."});
        writeln!(corpus, "{line}").unwrap();
        let line = json!({"qid": qid, "retrieved": [{"doc_id": doc}], "answer": "Backups stay for 30 days."});
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

/// `validate` exits 2 within a second naming `expected`, and so does the gate, before it reads
/// the run (a run file that does not exist would be its first error otherwise).
fn validate_and_gate_refuse(dir: &Path, expected: &str) {
    let started = Instant::now();
    Ragate::new(["validate"])
        .status(2)
        .stderr_has(expected)
        .run_in(dir);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    Ragate::gate("smoke", "no-such-run.jsonl", "refused")
        .status(2)
        .stderr_has(expected)
        .run_in(dir);
}

/// Each exit-2 refusal of `gate`, and what `validate` says of it: either it reports the same
/// problem (exit 2 in under a second, before any pipeline), or the reason it cannot be known
/// before the pipeline runs. The refusals `validate` has long reported (a slice field or
/// `stratify` field no query has, a rule on a slice value no query has, an unreadable baseline or
/// one of another tier, a baseline that no longer pairs, a query without the text the pipeline
/// is sent, an unset API key, a bad SOURCE_DATE_EPOCH) have their tests beside their code
/// (config_positions.rs, tier_queries.rs, setup_checks.rs, baseline_swap.rs).
const KNOWN_ONLY_AFTER_THE_PIPELINE: [(&str, &str); 5] = [
    (
        "the pipeline fails, times out or writes a line that is not a run line",
        "it is the pipeline's own output",
    ),
    (
        "every answer is empty, so an answer metric has no value",
        "a pipeline's answers exist only once it ran (a run file's lines without `answer` are found by validate: the test below)",
    ),
    (
        "a judge call fails after its retries",
        "only a call shows it (the endpoint probe before the pipeline finds an endpoint that is down)",
    ),
    (
        "a judged metric's cost exceeds gate.budget",
        "the number of claims depends on the answers (validate warns of a max_cost it cannot check)",
    ),
    (
        "a check errs on non-finite values",
        "values exist only once the run is scored",
    ),
];

#[test]
fn validate_reports_every_refusal_the_gate_can_know_before_the_pipeline() {
    for (refusal, why) in KNOWN_ONLY_AFTER_THE_PIPELINE {
        assert!(!refusal.is_empty() && why.contains(' '));
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    accept_first_run(dir, || {
        write_answer_tier(dir, 0.4, "recall@5, faithfulness", "")
    });
    Ragate::new(["validate"]).status(0).run_in(dir);

    // A judge other than the baseline's.
    write_answer_tier(dir, 0.5, "recall@5, faithfulness", "");
    validate_and_gate_refuse(dir, "judge `default` differs from the baseline's");
    Ragate::new(["validate", "--allow-judge-change"])
        .status(0)
        .run_in(dir);

    // An answer metric whose gold field no query has.
    write_answer_tier(dir, 0.4, "recall@5, faithfulness, answer_contains", "");
    validate_and_gate_refuse(
        dir,
        "metrics[2]: no query of qrels.jsonl has a `gold_answer_substring`, which answer_contains compares the answer with",
    );
    write_answer_tier(dir, 0.4, "recall@5, faithfulness, answer_f1", "");
    validate_and_gate_refuse(dir, "has a `reference_answer`, which answer_f1 compares");

    // Other conventions than the baseline's.
    write_answer_tier(dir, 0.4, "recall@5, faithfulness", "");
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    let config = config.replace(
        "baseline: baseline.json }",
        "baseline: baseline.json, relevance_level: 2 }",
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    // The gate runs to give results to accept at the new level, then refuses (its own test:
    // relevance_conventions.rs); validate says so before.
    Ragate::new(["validate"])
        .status(2)
        .stderr_has("relevance_level 1 (the baseline) vs 2 (the tier's config): values computed with another relevance_level or no_relevant are not comparable, so `ragate gate --tier smoke` exits 2 after its run")
        .run_in(dir);

    // A rule that can never pass: proof asked for within a limit of 0.
    write_answer_tier(
        dir,
        0.4,
        "recall@5, faithfulness",
        "gate:\n  inconclusive: fail\n  rules:\n    - { metric: recall@5, max_drop: 0 }\n",
    );
    validate_and_gate_refuse(
        dir,
        "gate.rules[0].max_drop: 0 with `inconclusive: fail`, which passes a check only when the data prove its change within the limit",
    );
}

#[test]
fn a_judge_change_is_refused_before_the_pipeline_runs() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    accept_first_run(dir, || {
        write_answer_tier(dir, 0.4, "recall@5, faithfulness", "")
    });
    write_answer_tier(dir, 0.5, "recall@5, faithfulness", "");
    // A pipeline that would leave a mark: the gate stops before it starts.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    let config = format!(
        "{config}pipeline:\n  command: [python3, -c, \"open('started', 'w').write('x')\"]\n"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let outcome = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "second"]);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(
        outcome
            .stderr
            .contains("judge `default` differs from the baseline's"),
        "{}",
        outcome.stderr
    );
    assert!(!dir.join("started").exists(), "the pipeline ran");
}

#[test]
fn a_run_file_without_answers_for_answer_metrics_fails_validate_as_it_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_answer_tier(dir, 0.4, "recall@5, faithfulness", "");
    let run = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    let unanswered: String = run
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            value.as_object_mut().unwrap().remove("answer");
            format!("{value}\n")
        })
        .collect();
    std::fs::write(dir.join("retrieval.jsonl"), unanswered).unwrap();
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    let config = format!("{config}pipeline: {{ run_file: retrieval.jsonl }}\n");
    std::fs::write(dir.join("eval-config.yaml"), &config).unwrap();
    Ragate::new(["validate"])
        .status(2)
        .stderr_has("retrieval.jsonl: query `q0` has no \"answer\" (nor may any line of the tier's queries lack one), and faithfulness, empty_answers need answers")
        .run_in(dir);
    Ragate::new(["gate", "--tier", "smoke"])
        .status(2)
        .stderr_has("query `q0` has no \"answer\": expected one for the answer metrics")
        .run_in(dir);
    // A retrieval-only tier of its own: both pass.
    let config = config.replace(
        "baseline: baseline.json }",
        "baseline: baseline.json, metrics: [recall@5] }",
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    Ragate::new(["validate"]).status(0).run_in(dir);
}
