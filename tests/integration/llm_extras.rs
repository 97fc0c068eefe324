//! Embedding-based answer_relevance and `claims: llm` against the loopback OpenAI-compatible
//! server of `openai_judge`: values checked against hand-computed cosines, the per-query parts
//! and `embeddings.jsonl`, recomputing the normalisation from the vectors (what a merge of
//! shards does), cached re-runs, and claim decomposition by the `openai` and `command` judges.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use ragate::baseline::embeddings::{read, renormalise};
use ragate::baseline::results::Results;
use serde_json::{Value, json};

use crate::openai_judge::{Server, inputs};
use crate::{Ragate, accept_baseline, fixture, path_str};

fn results(dir: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    let value = serde_json::from_str(&text).unwrap();
    (text, value)
}

/// Three queries; embeddings are (backup, invoice, frankfurt, 1) word counts:
/// q0 "where do backups stay" (1,0,0,1), answer "Backups stay in Frankfurt." (1,0,1,1);
/// q1 "how are invoices sent" (0,1,0,1), answer "Invoices are sent by email." (0,1,0,1);
/// q2 "which backups expire" (1,0,0,1), answer "Invoices expire." (0,1,0,1).
fn setup_embeddings(dir: &Path, url: &str) {
    let config = format!(
        "version: 1
metrics: [recall@5, answer_relevance]
embeddings: {{ base_url: \"{url}\", model: test-embed, timeout_s: 5, max_retries: 2, concurrency: 2 }}
cache: {{ path: cache/judge.sqlite }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  decision: point
  min_queries: 1
  rules:
    - {{ metric: answer_relevance, max_drop: 0.05 }}
"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let queries = [
        ("where do backups stay", "Backups stay in Frankfurt."),
        ("how are invoices sent", "Invoices are sent by email."),
        ("which backups expire", "Invoices expire."),
    ];
    let (mut qrels, mut run) = (String::new(), String::new());
    for (i, (query, answer)) in queries.iter().enumerate() {
        writeln!(
            qrels,
            "{}",
            json!({"qid": format!("q{i}"), "query": query, "gold_doc_ids": [format!("d{i}")]})
        )
        .unwrap();
        writeln!(
            run,
            "{}",
            json!({"qid": format!("q{i}"), "retrieved": [{"doc_id": format!("d{i}")}], "answer": answer})
        )
        .unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

#[test]
fn embedding_relevance_is_normalised_against_the_other_answers() {
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_embeddings(dir, &server.url);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    let (first_text, results) = results(dir);
    let part = |qid: &str, key: &str| {
        results["queries"][qid]["answer_relevance_embedding"][key]
            .as_f64()
            .unwrap()
    };
    let value = |qid: &str| {
        results["queries"][qid]["metrics"]["answer_relevance"]
            .as_f64()
            .unwrap()
    };
    let r6 = 6f64.sqrt();
    // q0: cos = 2/√6; the others: cos(q0, a1) = cos(q0, a2) = 1/2; score (2/√6 - 1/2) / (1/2).
    assert!((part("q0", "cosine") - 2.0 / r6).abs() < 1e-12);
    assert!((part("q0", "others_mean") - 0.5).abs() < 1e-12);
    assert_eq!(
        results["queries"]["q0"]["answer_relevance_embedding"]["others"],
        2
    );
    assert!(
        (value("q0") - (4.0 / r6 - 1.0)).abs() < 1e-12,
        "{}",
        value("q0")
    );
    // q1: cos = 1; others cos(q1, a0) = 1/√6, cos(q1, a2) = 1: b < 1, score 1.
    assert!((part("q1", "others_mean") - (1.0 / r6 + 1.0) / 2.0).abs() < 1e-12);
    assert!((value("q1") - 1.0).abs() < 1e-12, "{}", value("q1"));
    // q2: cos = 1/2 below its others' mean (2/√6 + 1/2) / 2: score 0.
    assert!((part("q2", "cosine") - 0.5).abs() < 1e-12);
    assert!((part("q2", "others_mean") - (2.0 / r6 + 0.5) / 2.0).abs() < 1e-12);
    assert_eq!(value("q2"), 0.0);
    let mean = results["summary"]["all"]["answer_relevance"]["mean"]
        .as_f64()
        .unwrap();
    assert!((mean - (4.0 / r6) / 3.0).abs() < 1e-12, "{mean}");
    assert!(
        results["provenance"]["embeddings"]
            .as_str()
            .unwrap()
            .starts_with("embeddings test-embed @ http://127.0.0.1:"),
        "{results}"
    );
    assert!(
        results["provenance"].get("judges").is_none(),
        "no judge was used: {results}"
    );
    let errors = crate::json_schema::Schema::published("results.schema.json").errors(&results);
    assert!(errors.is_empty(), "{errors:?}");
    // Six distinct texts in one batch.
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert_eq!(bodies[0]["model"], "test-embed");
    assert_eq!(bodies[0]["input"].as_array().unwrap().len(), 6);

    // embeddings.jsonl holds the vectors; recomputing from them (as a merge of shards does)
    // restores scrambled values exactly.
    let embedded = read(&dir.join("out/embeddings.jsonl")).unwrap();
    let qids: Vec<&str> = embedded.iter().map(|e| e.qid.as_str()).collect();
    assert_eq!(qids, ["q0", "q1", "q2"]);
    assert_eq!(embedded[0].answer, vec![1.0, 0.0, 1.0, 1.0]);
    let mut scrambled: Results = serde_json::from_str(&first_text).unwrap();
    for record in scrambled.queries.values_mut() {
        record.metrics.insert("answer_relevance".into(), 0.123);
        record.answer_relevance_embedding = None;
    }
    scrambled.summary.clear();
    renormalise(&mut scrambled, &embedded).unwrap();
    assert_eq!(scrambled.to_json(), first_text);
    // Only one shard's vectors cannot stand for the tier.
    let one_shard = renormalise(&mut scrambled, &embedded[..1]).unwrap_err();
    assert!(one_shard.to_string().contains("at least 2"), "{one_shard}");

    // Accepted, a re-run embeds nothing, passes and writes the same bytes.
    let sidecar = std::fs::read_to_string(dir.join("out/embeddings.jsonl")).unwrap();
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(0)
        .run_in(dir);
    assert_eq!(server.bodies().len(), 1, "all from the cache");
    assert_eq!(
        results_text(dir).replace("\"status\": \"pass\"", "\"status\": \"no-baseline\""),
        first_text
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("out/embeddings.jsonl")).unwrap(),
        sidecar
    );
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/run-stats.json")).unwrap())
            .unwrap();
    assert_eq!(stats["judge_calls"], 0, "{stats}");
    assert_eq!(stats["judge_cache_hits"], 6, "{stats}");
}

fn results_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("out/results.json")).unwrap()
}

#[test]
fn embedding_relevance_fails_closed() {
    // One answered query has nothing to be normalised against.
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_embeddings(dir, &server.url);
    let run = std::fs::read_to_string(dir.join("run.jsonl")).unwrap();
    let emptied = run
        .replace("Invoices are sent by email.", "")
        .replace("Invoices expire.", " ");
    std::fs::write(dir.join("run.jsonl"), emptied).unwrap();
    let out = Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    assert!(out.stderr.contains("at least 2 queries"), "{}", out.stderr);
    assert!(!dir.join("out/results.json").exists());

    // An endpoint that keeps failing.
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let failing = Server::start(
        vec![crate::openai_judge::Step::Status(503, None); 10],
        Duration::ZERO,
    );
    setup_embeddings(dir, &failing.url);
    let out = Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    assert!(
        out.stderr.contains("judge `embeddings`") && out.stderr.contains("HTTP 503"),
        "{}",
        out.stderr
    );
    assert_eq!(failing.bodies().len(), 3, "1 attempt + max_retries 2");

    // `judge:` on answer_relevance contradicts `embeddings:`.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace(
            "answer_relevance]",
            "{ name: answer_relevance, judge: default }]",
        ),
    )
    .unwrap();
    let out = Ragate::gate("smoke", "run.jsonl", "out").run_in(dir);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("metrics[1].judge"), "{}", out.stderr);
}

/// Two answers: "... and ..." makes one sentence but two atomic claims, the second unsupported.
fn setup_claims(dir: &Path, judge: &str) {
    let config = format!(
        "version: 1
metrics: [recall@5, {{ name: faithfulness, judge: dec, claims: llm }}, {{ name: faithfulness_graded, judge: dec }}]
judges:
  dec: {judge}
cache: {{ path: cache/judge.sqlite }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  rules:
    - {{ metric: faithfulness, max_drop: 0.05 }}
"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let (mut qrels, mut run) = (String::new(), String::new());
    for i in 0..2 {
        writeln!(qrels, "{{\"qid\":\"q{i}\",\"query\":\"which region stores backups\",\"gold_doc_ids\":[\"d{i}\"]}}").unwrap();
        let answer = if i == 0 {
            "Backups stay in the Frankfurt region and are encrypted twice."
        } else {
            "Backups stay in the Frankfurt region."
        };
        let line = json!({
            "qid": format!("q{i}"),
            "retrieved": [{"doc_id": format!("d{i}"), "text": "Backups stay in the Frankfurt region."}],
            "answer": answer,
        });
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

fn check_decomposed(dir: &Path) {
    let (_, results) = results(dir);
    let q0 = &results["queries"]["q0"];
    // claims: llm splits at "and": one of two claims supported.
    assert_eq!(q0["metrics"]["faithfulness"], 0.5, "{results}");
    assert_eq!(
        q0["claims"][0]["claim"],
        "Backups stay in the Frankfurt region"
    );
    assert_eq!(q0["claims"][1]["claim"], "are encrypted twice");
    // The sentence splitter (faithfulness_graded) sees one unsupported sentence.
    assert_eq!(q0["metrics"]["faithfulness_graded"], 0.0, "{results}");
    assert_eq!(results["queries"]["q1"]["metrics"]["faithfulness"], 1.0);
    assert!(
        results["provenance"]["judges"]["dec"]
            .as_str()
            .unwrap()
            .ends_with(" claims=llm:claims-1"),
        "{results}"
    );
    let trace = std::fs::read_to_string(dir.join("out/trace.jsonl")).unwrap();
    let first: Value = serde_json::from_str(trace.lines().next().unwrap()).unwrap();
    assert_eq!(first["claims_splitter"], "llm:claims-1");
    assert_eq!(first["claims"][1]["supported"], false);
}

#[test]
fn the_openai_judge_decomposes_answers_into_claims() {
    let server = Server::start(vec![crate::openai_judge::Step::Malformed], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let judge = format!(
        "{{ kind: openai, base_url: \"{}\", model: test-model, concurrency: 1, timeout_s: 5, max_retries: 2 }}",
        server.url
    );
    setup_claims(dir, &judge);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    check_decomposed(dir);
    let bodies = server.bodies();
    let claims_calls: Vec<Value> = bodies
        .iter()
        .map(inputs)
        .filter(|i| i["task"] == "claims")
        .collect();
    // Two answers, the first reply malformed and retried.
    assert_eq!(claims_calls.len(), 3, "{claims_calls:?}");
    assert!(claims_calls.contains(&json!({
        "task": "claims",
        "question": "which region stores backups",
        "answer": "Backups stay in the Frankfurt region and are encrypted twice.",
    })));
    let calls = bodies.len();
    let text = results_text(dir);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    assert_eq!(server.bodies().len(), calls, "a re-run asks nothing");
    assert_eq!(results_text(dir), text);
}

#[test]
fn the_command_judge_decomposes_answers_and_lexical_judges_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let script = fixture("judges/keyword_judge.py");
    setup_claims(
        dir,
        &format!(
            "{{ kind: command, command: [python3, \"{}\", ok], timeout_s: 30 }}",
            path_str(&script)
        ),
    );
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    check_decomposed(dir);

    setup_claims(dir, "{ kind: lexical }");
    let out = Ragate::gate("smoke", "run.jsonl", "out").run_in(dir);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("metrics[1].claims")
            && out.stderr.contains("needs an openai or command judge"),
        "{}",
        out.stderr
    );
}
