//! A tier of TSV qrels whose texts come from its `queries:` file, run through a real command
//! pipeline end to end; a query without text fails `validate` and the gate's preflight, naming it.

use std::path::Path;

use crate::{accept_baseline, fixture, path_str, ragate_in};

const QRELS: &str =
    "query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\t2\n3\td3\t1\n4\td4\t1\n5\td5\t1\n6\td6\t1\n";

/// Texts that retrieve each query's relevant doc (queries 1 to 3 first, the others second), and
/// one query (9) that nothing judges.
const QUERIES: &str = "1\td1 d9\n2\td2\n3\td3\n4\td9 d4\n5\td9 d5\n6\td9 d6\n9\td1\n";

fn setup(dir: &Path) {
    let pipeline = fixture("pipeline/text_pipeline.py");
    std::fs::write(
        dir.join("eval-config.yaml"),
        format!(
            r#"version: 1
metrics: [recall@5, mrr]
pipeline:
  command: [python3, "{}"]
tiers:
  smoke: {{ qrels: qrels.tsv, queries: queries.tsv, baseline: baselines/smoke.json }}
gate:
  min_queries: 5
  rules:
    - {{ metric: mrr, max_drop: 0.1 }}
"#,
            path_str(&pipeline)
        ),
    )
    .unwrap();
    std::fs::write(dir.join("qrels.tsv"), QRELS).unwrap();
    std::fs::write(dir.join("queries.tsv"), QUERIES).unwrap();
}

#[test]
fn tsv_qrels_with_a_queries_file_gate_through_a_command_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let first = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "first"]);
    assert_eq!(first.code, 2, "no baseline yet: {}", first.stderr);
    assert!(
        first
            .stderr
            .contains("1 queries of queries.tsv have no judgments"),
        "{}",
        first.stderr
    );
    let run = std::fs::read_to_string(dir.join("first/run.jsonl")).unwrap();
    assert!(
        run.contains(r#"{"qid":"4","retrieved":[{"doc_id":"d9"},{"doc_id":"d4"}]"#),
        "the pipeline was sent the text of queries.tsv: {run}"
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("first/results.json")).unwrap())
            .unwrap();
    assert_eq!(results["summary"]["all"]["mrr"]["mean"], 0.75, "{results}");
    accept_baseline(dir, "smoke", "first/results.json", &[]);
    let validate = ragate_in(dir, &["validate"]);
    assert_eq!(validate.code, 0, "{}{}", validate.stdout, validate.stderr);
    assert!(
        validate.stderr.contains(
            "warning: tier `smoke`: 1 queries of queries.tsv have no judgments in the qrels and are not evaluated"
        ),
        "{}",
        validate.stderr
    );

    let second = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "second"]);
    assert_eq!(second.code, 0, "{}{}", second.stdout, second.stderr);
    assert!(second.stdout.contains("mrr"), "{}", second.stdout);
}

#[test]
fn a_query_without_text_fails_validate_and_the_gate_before_the_pipeline_runs() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    std::fs::write(dir.join("queries.tsv"), QUERIES.replace("4\td9 d4\n", "")).unwrap();
    let validate = ragate_in(dir, &["validate"]);
    assert_eq!(validate.code, 2, "{}", validate.stderr);
    let expected = "tiers.smoke.queries: 1 of 6 queries of ";
    assert!(validate.stderr.contains(expected), "{}", validate.stderr);
    assert!(
        validate
            .stderr
            .contains("qrels.tsv have no text, which the command pipeline is sent: `4`; not in "),
        "{}",
        validate.stderr
    );

    let gate = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "out"]);
    assert_eq!(gate.code, 2, "{}", gate.stderr);
    assert!(
        gate.stderr
            .contains("have no text, which the command pipeline is sent: `4`"),
        "{}",
        gate.stderr
    );
    assert!(
        !dir.join("out/run.jsonl").exists(),
        "the pipeline never ran"
    );
}
