//! The run's decision through the real binary: `compare` and `gate` list the same checks
//! (calibrated floors included), a rule naming a slice value no query has is an error, a
//! baseline of another tier is an error, and a tier whose rules all name a slice is decided by
//! them.

use crate::gate_flow::{setup, setup_answer_tier, write_run};
use crate::{Ragate, accept_baseline, ragate_in};

/// Every `<testcase ...>` element of a JUnit file, in order, up to the next testcase or the
/// suite's end.
fn testcases(junit: &str) -> Vec<String> {
    junit
        .split("<testcase ")
        .skip(1)
        .map(|case| {
            let end = case
                .find("<system-out><![CDATA[baseline")
                .unwrap_or(case.len());
            format!("<testcase {}", &case[..end])
        })
        .collect()
}

#[test]
fn compare_and_gate_list_the_same_checks_calibrated_floors_included() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_answer_tier(dir);
    Ragate::gate("smoke", "base.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    Ragate::gate("smoke", "unfaithful.jsonl", "out")
        .status(1)
        .run_in(dir);
    let compared = ragate_in(
        dir,
        &[
            "compare",
            "baseline.json",
            "out/results.json",
            "--junit",
            "compare.xml",
        ],
    );
    assert_eq!(compared.code, 1, "{}\n{}", compared.stdout, compared.stderr);
    let from_gate = testcases(&std::fs::read_to_string(dir.join("out/junit.xml")).unwrap());
    let from_compare = testcases(&std::fs::read_to_string(dir.join("compare.xml")).unwrap());
    assert!(
        from_gate
            .iter()
            .any(|case| case.starts_with("<testcase name=\"faithfulness_ppi [all]\"")),
        "{from_gate:?}"
    );
    assert_eq!(from_gate, from_compare);
}

#[test]
fn a_rule_on_a_slice_value_no_query_has_is_an_error_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace(
            "    - { metric: mrr, max_drop: 0.05 }\n",
            "    - { metric: mrr, max_drop: 0.05 }\n    - { metric: recall@5, slice: class=Paraphrased, max_drop: 0.01 }\n",
        ),
    )
    .unwrap();
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir);
    accept_baseline(dir, "regression", "out/results.json", &[]);
    let outcome = Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir);
    assert!(
        outcome.stdout.contains(
            "recall@5 [class=Paraphrased]: no query has class=Paraphrased (the slice values are class=literal, class=multi-topic, class=paraphrased): expected a slice value the queries have (did you mean `class=paraphrased`?)"
        ),
        "{}",
        outcome.stdout
    );
    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 2, "{}", validated.stderr);
    assert!(
        validated.stderr.contains(
            "tier `regression`: the rule for recall@5 names class=Paraphrased, which no query has (the slice values are class=literal, class=multi-topic, class=paraphrased) (did you mean `class=paraphrased`?)"
        ),
        "{}",
        validated.stderr
    );
}

#[test]
fn a_baseline_of_another_tier_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir);
    let mut results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap();
    results["tier"] = "smoke".into();
    std::fs::create_dir_all(dir.join("baselines")).unwrap();
    std::fs::write(
        dir.join("baselines/regression.json"),
        serde_json::to_string_pretty(&results).unwrap(),
    )
    .unwrap();
    let outcome = Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir);
    assert!(
        outcome
            .stderr
            .contains("a baseline of tier `smoke`, but tier `regression` is gated"),
        "{}",
        outcome.stderr
    );
    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 2, "{}", validated.stderr);
    assert!(
        validated
            .stderr
            .contains("a baseline of tier `smoke`, but tier `regression` is gated"),
        "{}",
        validated.stderr
    );
}

#[test]
fn a_tier_whose_rules_all_name_a_slice_passes_when_they_pass() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config
            .replace(
                "    - { metric: recall@5, max_drop: 0.02 }\n    - { metric: mrr, max_drop: 0.05 }\n",
                "    - { metric: recall@5, slice: class=literal, max_drop: 0.02 }\n    - { metric: mrr, slice: class=paraphrased, max_drop: 0.05 }\n",
            ),
    )
    .unwrap();
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir);
    accept_baseline(dir, "regression", "out/results.json", &[]);
    let same = Ragate::gate("regression", "base.jsonl", "out")
        .status(0)
        .run_in(dir);
    assert!(
        same.stdout.contains("2 checks: 2 passed"),
        "{}",
        same.stdout
    );
    // The literal slice collapses: its check fails.
    write_run(&dir.join("broken.jsonl"), |i, class| {
        if class == "literal" {
            [9, 11]
        } else {
            [1, 2 + i % 3]
        }
    });
    Ragate::gate("regression", "broken.jsonl", "out")
        .status(1)
        .run_in(dir);
}
