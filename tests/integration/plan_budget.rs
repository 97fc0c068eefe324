//! `ragate plan` and `gate.budget` with the real binary: a plan counts exactly the tasks a gate
//! run puts to its judges (lexical, and `openai` against the loopback test server with a cache
//! filled by a real gate run, so that its cache hits are real), the `ragate-plan/1` JSON shape
//! (docs/schema/plan.schema.json),
//! and the gate refusing a run over budget before any request reaches the server.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::json_schema::Schema;
use crate::openai_judge::{Server, setup_gate};
use crate::{SMOKE_GATE, accept_baseline, ragate_in};

/// `ragate plan --tier smoke --format json` in `dir`, checked against the published schema.
fn plan_json(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["plan", "--tier", "smoke", "--format", "json"];
    args.extend_from_slice(extra);
    let outcome = ragate_in(dir, &args);
    assert_eq!(outcome.code, 0, "plan: {}", outcome.stderr);
    let plan: Value = serde_json::from_str(&outcome.stdout).expect("one JSON document");
    let errors = Schema::published("plan.schema.json").errors(&plan);
    assert!(errors.is_empty(), "{errors:#?} in {plan:#}");
    plan
}

fn run_stats(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("out/run-stats.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A tier judged by the lexical judge: 6 queries, a corpus for the contexts, no pipeline.
fn setup_lexical(dir: &Path) {
    std::fs::write(
        dir.join("eval-config.yaml"),
        "version: 1
corpus: corpus.jsonl
metrics: [recall@5, { name: faithfulness, k: 2 }, answer_relevance]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baseline.json }
gate:
  decision: point
  rules:
    - { metric: faithfulness, max_drop: 0.05 }
",
    )
    .unwrap();
    let (mut qrels, mut run, mut corpus) = (String::new(), String::new(), String::new());
    for i in 0..6 {
        writeln!(qrels, "{}", json!({"qid": format!("q{i}"), "query": format!("where are backups of tenant {i}"), "gold_doc_ids": [format!("d{i}")]})).unwrap();
        writeln!(corpus, "{}", json!({"doc_id": format!("d{i}"), "title": "", "text": format!("Backups of tenant {i} stay in Frankfurt. They are encrypted.")})).unwrap();
        // Queries 0 and 3 answer in two sentences (two claims), query 5 not at all.
        let answer = match i {
            0 | 3 => "Backups stay in Frankfurt. They are encrypted twice.",
            5 => "",
            _ => "Backups stay in Frankfurt.",
        };
        writeln!(run, "{}", json!({"qid": format!("q{i}"), "retrieved": [{"doc_id": format!("d{i}")}, {"doc_id": "shared"}], "answer": answer})).unwrap();
    }
    writeln!(
        corpus,
        "{}",
        json!({"doc_id": "shared", "title": "Regions", "text": "Frankfurt is a region."})
    )
    .unwrap();
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
    std::fs::write(dir.join("corpus.jsonl"), corpus).unwrap();
}

#[test]
fn a_plan_with_the_lexical_judge_counts_the_gates_tasks_at_no_cost() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_lexical(dir);
    let plan = plan_json(dir, &["--run", "run.jsonl"]);
    assert!(
        !dir.join(".ragate").exists(),
        "a plan creates no cache file"
    );
    assert_eq!(plan["format"], "ragate-plan/1");
    assert_eq!(plan["source"]["kind"], "run");
    assert_eq!(
        (plan["queries"].as_u64(), plan["answers"].as_u64()),
        (Some(6), Some(5))
    );
    let judge = &plan["judges"][0];
    assert_eq!(
        (judge["judge"].as_str(), judge["kind"].as_str()),
        (Some("default"), Some("lexical"))
    );
    // 7 claims of 5 non-empty answers, one relevance task per non-empty answer.
    assert_eq!(
        (judge["support"].as_u64(), judge["relevance"].as_u64()),
        (Some(7), Some(5))
    );
    assert_eq!(judge["cache_hits"], 0);
    assert_eq!(
        (judge["calls"].as_u64(), judge["cost"].as_f64()),
        (Some(0), Some(0.0))
    );
    assert_eq!(plan["total"]["tasks"], 12);
    assert_eq!(
        plan["total"]["seconds"], 0.0,
        "in-process judges take no call time"
    );

    // The gate asks exactly what was planned, and then the cache holds all of it.
    let gate = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(gate.code, 2, "no baseline yet: {}", gate.stderr);
    let again = plan_json(dir, &["--run", "run.jsonl"]);
    assert_eq!(again["total"]["cache_hits"], 12);
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    let gate = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(gate.code, 0, "{}", gate.stderr);
    let stats = run_stats(dir);
    assert_eq!(stats["judge_tasks"], plan["total"]["tasks"], "{stats}");
    assert_eq!(stats["judge_cache_hits"], 12, "{stats}");

    // Without --run and with no pipeline, the baseline's answers stand in: an estimate.
    let estimated = plan_json(dir, &[]);
    assert_eq!(estimated["source"]["kind"], "baseline");
    assert_eq!(estimated["total"]["tasks"], 12, "{estimated:#}");
    assert_eq!(
        estimated["total"]["cache_hits"],
        Value::Null,
        "not known for new answers"
    );
    let table = ragate_in(dir, &["plan", "--tier", "smoke"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(
        table.stdout.contains("estimated from the baseline"),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains("default  lexical"),
        "{}",
        table.stdout
    );

    // Without a corpus the baseline's contexts cannot be rebuilt: unknown, with the reason.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace("corpus: corpus.jsonl\n", ""),
    )
    .unwrap();
    let unknown = plan_json(dir, &[]);
    assert_eq!(unknown["source"]["kind"], "none");
    assert_eq!(unknown["total"], Value::Null);
    let reason = unknown["source"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("corpus") && reason.contains("--run"),
        "{reason}"
    );
}

/// The first `n` lines of the run at `from`, written to `to`.
fn head(dir: &Path, from: &str, to: &str, n: usize) {
    let text = std::fs::read_to_string(dir.join(from)).unwrap();
    let lines: Vec<&str> = text.lines().take(n).collect();
    std::fs::write(dir.join(to), lines.join("\n") + "\n").unwrap();
}

fn edit_config(dir: &Path, from: &str, to: &str) {
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    assert!(config.contains(from), "{config}");
    std::fs::write(dir.join("eval-config.yaml"), config.replacen(from, to, 1)).unwrap();
}

#[test]
fn a_plan_with_an_openai_judge_reads_real_cache_hits_and_matches_the_gates_calls() {
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    edit_config(
        dir,
        "max_calls: 100 }",
        "max_calls: 100, price_per_1k_tokens: { input: 0.5, output: 1.5 }, latency_s: 2 }",
    );
    // A gate on the first 4 answers fills the cache with their verdicts.
    head(dir, "run.jsonl", "part.jsonl", 4);
    let part = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "smoke",
            "--run",
            "part.jsonl",
            "--out",
            "out",
        ],
    );
    assert_eq!(part.code, 2, "no baseline yet: {}", part.stderr);
    let asked = server.bodies().len();
    assert_eq!(
        asked, 8,
        "4 support calls (one per answer) and 4 relevance calls"
    );

    let plan = plan_json(dir, &["--run", "run.jsonl"]);
    assert_eq!(server.bodies().len(), asked, "a plan asks nothing");
    let judge = &plan["judges"][0];
    assert_eq!(
        (judge["judge"].as_str(), judge["kind"].as_str()),
        (Some("llm"), Some("openai"))
    );
    // 8 answers: 10 claims (2 answers have two) and 8 relevance tasks; the first 4 answers'
    // 5 claims and 4 relevance tasks are cached.
    assert_eq!(
        (judge["support"].as_u64(), judge["relevance"].as_u64()),
        (Some(10), Some(8))
    );
    assert_eq!(
        (judge["tasks"].as_u64(), judge["cache_hits"].as_u64()),
        (Some(18), Some(9))
    );
    assert_eq!(
        judge["calls"], 8,
        "one call per uncached answer's claims, one per relevance task"
    );
    let (input, output) = (
        judge["input_tokens"].as_u64().unwrap(),
        judge["output_tokens"].as_u64().unwrap(),
    );
    assert!(input > 8 * 100, "the prompt templates are counted: {input}");
    assert!(output > 0 && output < input, "{output}");
    let cost = judge["cost"].as_f64().unwrap();
    let expected = (input as f64 * 0.5 + output as f64 * 1.5) / 1000.0;
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
    // 8 calls at concurrency 4 take 2 rounds of 2 s.
    assert_eq!(
        (judge["concurrency"].as_u64(), judge["seconds"].as_f64()),
        (Some(4), Some(4.0))
    );
    assert_eq!(plan["total"]["calls"], 8);
    assert_eq!(plan["total"]["at_least"], false);
    assert_eq!(plan["budget"], Value::Null);
    assert!(
        plan["notes"].as_array().unwrap().is_empty(),
        "{:#}",
        plan["notes"]
    );
    for key in [
        "format",
        "tier",
        "source",
        "queries",
        "answers",
        "runs",
        "judge_repeats",
        "judges",
        "total",
        "budget",
        "notes",
    ] {
        assert!(plan.get(key).is_some(), "`{key}` in {plan:#}");
    }

    // The full gate sends exactly the planned calls.
    let full = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(full.code, 2, "no baseline yet: {}", full.stderr);
    assert_eq!(
        server.bodies().len() - asked,
        8,
        "the planned calls, no more, no fewer"
    );
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    let rerun = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    let stats = run_stats(dir);
    assert_eq!(
        (stats["judge_tasks"].as_u64(), stats["judge_calls"].as_u64()),
        (Some(18), Some(0)),
        "{stats}"
    );
    let cached = plan_json(dir, &["--run", "run.jsonl"]);
    assert_eq!(
        (
            cached["total"]["cache_hits"].as_u64(),
            cached["total"]["calls"].as_u64()
        ),
        (Some(18), Some(0))
    );

    // Without a price or a latency the plan says what is missing instead of a number.
    edit_config(
        dir,
        ", price_per_1k_tokens: { input: 0.5, output: 1.5 }, latency_s: 2",
        "",
    );
    std::fs::remove_dir_all(dir.join("cache")).unwrap();
    let plan = plan_json(dir, &["--run", "run.jsonl"]);
    assert_eq!(
        (
            plan["total"]["cost"].clone(),
            plan["total"]["seconds"].clone()
        ),
        (Value::Null, Value::Null)
    );
    let notes = plan["notes"].to_string();
    assert!(notes.contains("judges.llm.price_per_1k_tokens"), "{notes}");
    assert!(
        notes.contains("16 calls at concurrency 4") && notes.contains("latency_s"),
        "{notes}"
    );
}

#[test]
fn the_gate_refuses_a_run_over_budget_before_any_call_and_runs_one_within_it() {
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    edit_config(dir, "gate:\n", "gate:\n  budget: { max_calls: 15 }\n");
    let over = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(over.code, 2, "{}", over.stderr);
    assert_eq!(server.bodies().len(), 0, "refused before any request");
    for part in [
        "eval-config.yaml",
        "gate.budget.max_calls",
        "16 judge calls",
        "over the budget of 15",
        "`llm`: 16 calls for 18 of 18 tasks",
        "raise `max_calls`",
    ] {
        assert!(over.stderr.contains(part), "`{part}` in {}", over.stderr);
    }
    let validate = ragate_in(dir, &["validate"]);
    assert!(
        validate
            .stdout
            .contains("tier `smoke`: budget (gate.budget): max_calls 15"),
        "{}",
        validate.stdout
    );
    let validate = ragate_in(dir, &["validate", "--format", "json"]);
    let document: Value = serde_json::from_str(&validate.stdout).unwrap();
    assert_eq!(
        document["budgets"]["smoke"],
        json!({"key": "gate.budget", "max_calls": 15, "max_cost": null})
    );
    let plan = plan_json(dir, &["--run", "run.jsonl"]);
    assert_eq!(
        plan["budget"],
        json!({"key": "gate.budget", "max_calls": 15, "max_cost": null, "within": false})
    );

    // Within the budget the run is judged; once cached, even a budget of 0 calls passes.
    edit_config(dir, "max_calls: 15", "max_calls: 16");
    let within = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(within.code, 2, "no baseline yet: {}", within.stderr);
    assert_eq!(server.bodies().len(), 16);
    assert!(
        within
            .stderr
            .contains("budget (gate.budget): this run plans 16 judge calls"),
        "{}",
        within.stderr
    );
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    edit_config(dir, "max_calls: 16", "max_calls: 0");
    let cached = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(cached.code, 0, "passes: {}", cached.stderr);
    assert_eq!(server.bodies().len(), 16, "all cached");

    // max_cost: a judge without a price cannot be checked; with one, an expensive run stops.
    std::fs::remove_dir_all(dir.join("cache")).unwrap();
    edit_config(
        dir,
        "budget: { max_calls: 0 }",
        "budget: { max_cost: 0.01 }",
    );
    let unpriced = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(unpriced.code, 2);
    assert!(
        unpriced.stderr.contains("gate.budget.max_cost") && unpriced.stderr.contains("`llm`"),
        "{}",
        unpriced.stderr
    );
    assert!(
        unpriced.stderr.contains("price_per_1k_tokens"),
        "{}",
        unpriced.stderr
    );
    let lint = ragate_in(dir, &["validate"]);
    assert!(
        lint.stderr
            .contains("needs `judges.llm.price_per_1k_tokens`"),
        "{}",
        lint.stderr
    );
    edit_config(
        dir,
        "max_calls: 100 }",
        "max_calls: 100, price_per_1k_tokens: { input: 5, output: 5 } }",
    );
    let expensive = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(expensive.code, 2);
    assert!(
        expensive.stderr.contains("gate.budget.max_cost")
            && expensive.stderr.contains("over the budget of 0.01"),
        "{}",
        expensive.stderr
    );
    assert_eq!(server.bodies().len(), 16, "no call");

    // A tier's own budget replaces the top-level one, and its key is named.
    edit_config(
        dir,
        "baseline: baseline.json }",
        "baseline: baseline.json, gate: { budget: { max_calls: 1 } } }",
    );
    let tier = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(tier.code, 2);
    assert!(
        tier.stderr.contains("tiers.smoke.gate.budget.max_calls"),
        "{}",
        tier.stderr
    );
    assert_eq!(server.bodies().len(), 16, "no call");
}

#[test]
fn a_budget_must_name_a_limit() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_lexical(dir);
    edit_config(dir, "gate:\n", "gate:\n  budget: {}\n");
    let outcome = ragate_in(dir, &["validate"]);
    assert_eq!(outcome.code, 2);
    assert!(
        outcome.stderr.contains("gate.budget")
            && outcome
                .stderr
                .contains("expected `max_calls`, `max_cost` or both"),
        "{}",
        outcome.stderr
    );
}

#[test]
fn a_plan_counts_the_texts_embedded_for_answer_relevance() {
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    edit_config(
        dir,
        "{ name: answer_relevance, judge: llm }",
        "answer_relevance",
    );
    edit_config(
        dir,
        "cache:",
        &format!(
            "embeddings: {{ base_url: \"{}\", model: e5, latency_s: 0.5 }}\ncache:",
            server.url
        ),
    );
    let plan = plan_json(dir, &["--run", "run.jsonl"]);
    let embeddings = &plan["judges"][1];
    assert_eq!(embeddings["judge"], "embeddings", "{plan:#}");
    // 8 questions and 2 distinct answers, in one request of up to 64 texts.
    assert_eq!(
        (
            embeddings["embeddings"].as_u64(),
            embeddings["calls"].as_u64()
        ),
        (Some(10), Some(1))
    );
    assert_eq!(embeddings["seconds"], 0.5);
    assert_eq!(
        plan["judges"][0]["relevance"], 0,
        "relevance is not the judge's"
    );
    let gate = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(gate.code, 2, "no baseline yet: {}", gate.stderr);
    let bodies = server.bodies();
    let embedded = bodies.iter().filter(|b| b.get("input").is_some()).count();
    assert_eq!(embedded, 1, "the planned embeddings request");
    assert_eq!(bodies.len() - embedded, 8, "the planned support calls");
    let cached = plan_json(dir, &["--run", "run.jsonl"]);
    assert_eq!(cached["total"]["calls"], 0, "{cached:#}");
}

#[test]
fn a_plan_counts_every_asking_of_the_judges() {
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    edit_config(
        dir,
        "baseline: baseline.json }",
        "baseline: baseline.json, judge_repeats: 2 }",
    );
    let plan = plan_json(dir, &["--run", "run.jsonl"]);
    assert_eq!(plan["judge_repeats"], 2);
    assert_eq!(
        (
            plan["total"]["tasks"].as_u64(),
            plan["total"]["calls"].as_u64()
        ),
        (Some(36), Some(32))
    );
    let gate = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(gate.code, 2, "no baseline yet: {}", gate.stderr);
    assert_eq!(
        server.bodies().len(),
        32,
        "each asking has its own cache keys"
    );
    let cached = plan_json(dir, &["--run", "run.jsonl"]);
    assert_eq!(cached["total"]["cache_hits"], 36);
}

#[test]
fn answers_the_judge_has_not_split_yet_count_their_calls_but_not_their_claims() {
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    edit_config(
        dir,
        "{ name: faithfulness, judge: llm }",
        "{ name: faithfulness, judge: llm, claims: llm }",
    );
    let plan = plan_json(dir, &["--run", "run.jsonl"]);
    let judge = &plan["judges"][0];
    assert_eq!(
        (
            judge["decompositions"].as_u64(),
            judge["undecomposed"].as_u64()
        ),
        (Some(8), Some(8))
    );
    assert_eq!(
        (judge["support"].as_u64(), judge["relevance"].as_u64()),
        (Some(0), Some(8))
    );
    // 8 decompositions, 8 relevance calls and at most one support call per answer.
    assert_eq!(judge["calls"], 24);
    assert_eq!(plan["total"]["at_least"], true);
    assert!(
        plan["notes"][0]
            .as_str()
            .unwrap()
            .contains("the claims of 8 answers are not known")
    );
    let gate = ragate_in(dir, &SMOKE_GATE);
    assert_eq!(gate.code, 2, "no baseline yet: {}", gate.stderr);
    assert_eq!(server.bodies().len(), 24);

    // Decomposed once, the claims are read from the cache: every task is known.
    let known = plan_json(dir, &["--run", "run.jsonl"]);
    let judge = &known["judges"][0];
    assert_eq!(
        (judge["support"].as_u64(), judge["undecomposed"].as_u64()),
        (Some(10), Some(0))
    );
    assert_eq!(
        (judge["tasks"].as_u64(), judge["cache_hits"].as_u64()),
        (Some(26), Some(26))
    );
    assert_eq!(known["total"]["at_least"], false);
}
