//! Every metric equals values computed independently (pytrec_eval and direct Python code,
//! see tests/fixtures/generate_expected.py) to 1e-9, through every reader.

use serde_json::Value;

use crate::{fixture, path_str, ragate};

const TOLERANCE: f64 = 1e-9;

fn load_expected(relative: &str) -> Value {
    let text = std::fs::read_to_string(fixture(relative)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Runs `ragate eval --format json --per-query` with every metric named in `expected`.
fn evaluate(expected: &Value, qrels: &str, run: &str) -> Value {
    let qrels = fixture(qrels);
    let run = fixture(run);
    let mut args = vec!["eval", "--qrels", path_str(&qrels), "--run", path_str(&run)];
    let metrics: Vec<&str> = expected["metrics"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert!(
        metrics.len() >= 40,
        "the fixture covers every metric and cut"
    );
    for metric in &metrics {
        args.extend(["-m", metric]);
    }
    args.extend(["--format", "json", "--per-query"]);
    let out = ragate(&args);
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    serde_json::from_str(&out.stdout).expect("one JSON object")
}

fn assert_matches(actual: &Value, expected: &Value, context: &str) {
    for count in [
        "queries",
        "excluded_no_relevant",
        "missing_from_run",
        "run_queries_not_in_qrels",
    ] {
        assert_eq!(actual[count], expected[count], "{context}: {count}");
    }
    let compare = |a: &Value, e: &Value, what: &str| {
        let (a, e) = (a.as_object().unwrap(), e.as_object().unwrap());
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            e.keys().collect::<Vec<_>>(),
            "{context}: keys of {what}"
        );
        for (name, want) in e {
            let got = a[name].as_f64().unwrap();
            let want = want.as_f64().unwrap();
            assert!(
                (got - want).abs() <= TOLERANCE,
                "{context}: {what} {name}: got {got}, expected {want}"
            );
        }
    };
    compare(&actual["metrics"], &expected["metrics"], "means");
    let (actual_q, expected_q) = (
        actual["per_query"].as_object().unwrap(),
        expected["per_query"].as_object().unwrap(),
    );
    assert_eq!(
        actual_q.keys().collect::<Vec<_>>(),
        expected_q.keys().collect::<Vec<_>>(),
        "{context}: qids"
    );
    for (qid, values) in expected_q {
        compare(&actual_q[qid], values, qid);
    }
}

#[test]
fn seed_fixture_matches_independent_values() {
    let expected = load_expected("seed/expected.json");
    let actual = evaluate(&expected, "seed/qrels.jsonl", "seed/run.jsonl");
    assert_matches(&actual, &expected, "seed");
}

#[test]
fn seed_q1_values_by_hand() {
    // q1: gold d3 (grade 3) and d1 (grade 2), d2 graded 1 but not gold; ranking d2 d3 d7 d1 d12 d6.
    let qrels = fixture("seed/qrels.jsonl");
    let run = fixture("seed/run.jsonl");
    let out = ragate(&[
        "eval",
        "--qrels",
        path_str(&qrels),
        "--run",
        path_str(&run),
        "-m",
        "precision@5",
        "-m",
        "recall@5",
        "-m",
        "mrr",
        "-m",
        "map",
        "--format",
        "json",
        "--per-query",
    ]);
    let q1 = &serde_json::from_str::<Value>(&out.stdout).unwrap()["per_query"]["q1"];
    assert_eq!(q1["precision@5"], 0.4);
    assert_eq!(q1["recall@5"], 1.0);
    assert_eq!(q1["mrr"], 0.5);
    // (1/2 + 2/4) / 2
    assert_eq!(q1["map"], 0.5);
}

#[test]
fn random_trec_run_matches_pytrec_eval() {
    let expected = load_expected("random/expected.json");
    let actual = evaluate(&expected, "random/qrels.trec", "random/run.trec");
    assert_matches(&actual, &expected, "run.trec");
}

#[test]
fn ungrouped_trec_run_gives_the_same_values() {
    let expected = load_expected("random/expected.json");
    let actual = evaluate(&expected, "random/qrels.trec", "random/run_shuffled.trec");
    assert_matches(&actual, &expected, "run_shuffled.trec");
}

#[test]
fn native_run_in_trec_order_gives_the_same_values() {
    let expected = load_expected("random/expected.json");
    let actual = evaluate(&expected, "random/qrels.trec", "random/run.jsonl");
    assert_matches(&actual, &expected, "run.jsonl");
}

#[test]
fn tsv_output_lists_every_value_and_the_means() {
    let qrels = fixture("random/qrels.trec");
    let run = fixture("random/run.trec");
    let out = ragate(&[
        "eval",
        "--qrels",
        path_str(&qrels),
        "--run",
        path_str(&run),
        "-m",
        "map",
        "--format",
        "tsv",
        "--per-query",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected = load_expected("random/expected.json");
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split('\t').collect())
        .collect();
    let map_rows: Vec<&Vec<&str>> = rows
        .iter()
        .filter(|r| r[0] == "map" && r[1] != "all")
        .collect();
    assert_eq!(map_rows.len(), 190);
    for row in map_rows {
        let want = expected["per_query"][row[1]]["map"].as_f64().unwrap();
        assert!((row[2].parse::<f64>().unwrap() - want).abs() <= TOLERANCE);
    }
    assert!(rows.iter().any(|r| r == &["queries", "all", "190"]));
}
