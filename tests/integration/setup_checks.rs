//! `validate` finds everything the gate refuses before its pipeline runs (it makes the gate's own
//! checks), and config values that could only write outside the output folder or never decide
//! anything are refused when the config is read.

use std::path::Path;

use crate::{Ragate, accept_baseline, ragate_in};

/// 10 queries of class `a` with texts, a run that finds every gold doc.
fn write_tier(dir: &Path, config: &str) {
    let mut qrels = String::new();
    let mut run = String::new();
    for i in 0..10 {
        qrels.push_str(&format!(
            "{{\"qid\":\"q{i}\",\"query\":\"question {i}\",\"gold_doc_ids\":[\"d{i}\"],\"class\":\"a\"}}\n"
        ));
        run.push_str(&format!(
            "{{\"qid\":\"q{i}\",\"retrieved\":[{{\"doc_id\":\"d{i}\"}}]}}\n"
        ));
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
}

const LABELLED: &str = "version: 1
metrics: [recall@5]
slices: [class]
tiers:
  smoke: { qrels: qrels.jsonl, baseline: baseline.json, labels: labels.jsonl }
gate:
  rules:
    - { metric: recall@5, max_drop: 0.05 }
";

#[test]
fn validate_refuses_the_labels_the_gate_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_tier(dir, LABELLED);
    // No labels file: the gate stops before its pipeline; validate says so.
    let expected = "cannot read labels.jsonl (named by tiers.smoke.labels)";
    let gated = Ragate::gate("smoke", "run.jsonl", "out").run_in(dir);
    assert_eq!(gated.code, 2);
    assert!(gated.stderr.contains(expected), "{}", gated.stderr);
    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 2, "{}", validated.stderr);
    assert!(
        validated
            .stderr
            .contains(&format!("error: tier `smoke`: {expected}: ")),
        "{}",
        validated.stderr
    );
    // A misspelt metric key in the labels.
    std::fs::write(
        dir.join("labels.jsonl"),
        "{\"qid\":\"q1\",\"answer\":\"x\",\"faithfulnes\":1}\n",
    )
    .unwrap();
    let expected = "labels.jsonl:1: `faithfulnes` is not a judged metric";
    let gated = Ragate::gate("smoke", "run.jsonl", "out").run_in(dir);
    assert_eq!(gated.code, 2);
    assert!(gated.stderr.contains(expected), "{}", gated.stderr);
    let validated = ragate_in(dir, &["validate", "--format", "json"]);
    assert_eq!(validated.code, 2, "{}", validated.stdout);
    let document: serde_json::Value = serde_json::from_str(&validated.stdout).unwrap();
    let errors = document["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].as_str().unwrap().contains(expected)
            && errors[0]
                .as_str()
                .unwrap()
                .contains("(did you mean `faithfulness`?)"),
        "{errors:?}"
    );
    // Labels that parse: no error.
    std::fs::write(
        dir.join("labels.jsonl"),
        "{\"qid\":\"q1\",\"answer\":\"x\",\"faithfulness\":1}\n",
    )
    .unwrap();
    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 0, "{}", validated.stdout);
}

#[test]
fn an_unknown_run_file_placeholder_fails_validate_and_the_gate_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_tier(
        dir,
        &LABELLED.replace(", labels: labels.jsonl", "").replace(
            "slices: [class]",
            "slices: [class]\npipeline: { run_file: \"runs/{tierr}.jsonl\" }",
        ),
    );
    let expected = "eval-config.yaml:4:23: pipeline.run_file: `runs/{tierr}.jsonl` has `{tierr}`, \
                    which is not a placeholder: expected `{tier}`";
    for args in [
        &["validate"][..],
        &["gate", "--tier", "smoke", "--out", "out"],
    ] {
        let outcome = ragate_in(dir, args);
        assert_eq!(outcome.code, 2, "{args:?}");
        assert!(
            outcome.stderr.contains(expected),
            "{args:?}: {}",
            outcome.stderr
        );
    }
}

#[test]
fn validate_warns_of_an_api_key_the_gate_would_stop_for() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    write_tier(
        dir,
        &LABELLED
            .replace(", labels: labels.jsonl", "")
            .replace("metrics: [recall@5]", "metrics: [recall@5, faithfulness]")
            .replace(
                "slices: [class]",
                "slices: [class]\njudges:\n  default: { kind: openai, base_url: \"http://127.0.0.1:9/v1\", model: m, api_key_env: RAGATE_TEST_UNSET_KEY }",
            ),
    );
    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 0, "{}", validated.stderr);
    assert!(
        validated.stderr.contains(
            "warning: eval-config.yaml: judges.default.api_key_env: the variable it names is not \
             set in this environment: `ragate gate` would stop before its pipeline runs"
        ),
        "{}",
        validated.stderr
    );
}

#[test]
fn a_tier_name_that_is_not_one_path_component_is_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("a/b");
    std::fs::create_dir_all(&work).unwrap();
    write_tier(
        &work,
        &LABELLED
            .replace(", labels: labels.jsonl", "")
            .replace("  smoke:", "  \"../../x\":"),
    );
    for args in [
        &["validate"][..],
        &["gate", "--tier", "../../x", "--run", "run.jsonl"],
        &["baseline", "show", "--tier", "../../x"],
    ] {
        let outcome = ragate_in(&work, args);
        assert_eq!(outcome.code, 2, "{args:?}");
        // In the config (validate), or after --tier (refused before anything is read or written).
        let located = if args[0] == "validate" {
            "eval-config.yaml:5:3: tiers: "
        } else {
            "for '--tier <TIER>': "
        };
        assert!(
            outcome.stderr.contains(&format!(
                "{located}tier name `../../x`: expected letters, digits"
            )),
            "{args:?}: {}",
            outcome.stderr
        );
    }
    assert!(!dir.path().join("x").exists(), "nothing written outside");
    assert!(!work.join(".ragate").exists());
}

#[test]
fn validate_warns_of_a_zero_limit_where_the_test_does_not_hold_its_level() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let config = LABELLED
        .replace(", labels: labels.jsonl", "")
        .replace("max_drop: 0.05", "max_drop: 0");
    let warned = |queries: usize, config: &str| {
        let qrels: String = (0..queries)
            .map(|i| {
                format!(
                    "{{\"qid\":\"q{i}\",\"query\":\"question {i}\",\"gold_doc_ids\":[\"d{i}\"],\"class\":\"a\"}}\n"
                )
            })
            .collect();
        std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
        std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
        let validated = ragate_in(dir, &["validate"]);
        assert_eq!(validated.code, 0, "{}", validated.stderr);
        validated
            .stderr
            .lines()
            .find(|line| line.contains("tolerates no change"))
            .map(str::to_string)
    };
    let line = warned(40, &config).expect("a zero limit on 40 queries is warned of");
    assert!(
        line.starts_with(
            "warning: tier `smoke`: the rule for recall@5 tolerates no change (max_drop: 0) \
             on 40 queries: below 1000 queries a limit of 0, or one below 15% of the metric's \
             range, does not hold the false-failure rate"
        ),
        "{line}"
    );
    // Below 30 queries the exact test holds it; from 1,000 the analytic test; a limit above 0
    // (disclosed by the gate where a check fails, issue 47, item 3) and `decision: point` (no
    // test) are not warned of.
    assert_eq!(warned(29, &config), None);
    assert_eq!(warned(1_000, &config), None);
    assert_eq!(
        warned(40, &config.replace("max_drop: 0", "max_drop: 0.01")),
        None
    );
    let point = config.replace("gate:\n", "gate:\n  decision: point\n");
    assert_eq!(warned(40, &point), None);

    // The gate says it beside a check that failed there: 40 queries with two gold docs each,
    // found both in the baseline and one of them in 35 queries now (the t test decides alone).
    let run = |found_one: usize| -> String {
        (0..40)
            .map(|i| {
                let second = if i < found_one {
                    String::new()
                } else {
                    format!(",{{\"doc_id\":\"d{i}b\"}}")
                };
                format!("{{\"qid\":\"q{i}\",\"retrieved\":[{{\"doc_id\":\"d{i}a\"}}{second}]}}\n")
            })
            .collect()
    };
    let qrels: String = (0..40)
        .map(|i| {
            format!(
                "{{\"qid\":\"q{i}\",\"query\":\"question {i}\",\"gold_doc_ids\":[\"d{i}a\",\"d{i}b\"],\"class\":\"a\"}}\n"
            )
        })
        .collect();
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("eval-config.yaml"), &config).unwrap();
    std::fs::write(dir.join("run.jsonl"), run(0)).unwrap();
    // No baseline yet: exit 2, the results to accept written.
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    std::fs::write(dir.join("run.jsonl"), run(35)).unwrap();
    let failed = Ragate::gate("smoke", "run.jsonl", "out")
        .status(1)
        .run_in(dir);
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    for text in [&failed.stderr, &summary] {
        assert!(
            text.contains(
                "recall@5 [all] (40 queries) and recall@5 [class=a] (40 queries) failed with a \
                 limit of 0 or below 15% of the range: the verdict may be a false failure, since \
                 below 1000 queries"
            ),
            "{text}"
        );
    }
}
