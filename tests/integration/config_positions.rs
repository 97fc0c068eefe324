//! Misspelt names in a config (a judge, a slice field, a metric) are reported at
//! `eval-config.yaml:LINE:COLUMN` with "did you mean", like unknown keys.

use crate::{fixture, path_str, ragate_in};

/// `ragate ARGS --config config_positions/CASE/eval-config.yaml` in a temporary folder: exit 2
/// and stderr.
fn error_of(case: &str, args: &[&str]) -> String {
    let config = fixture(&format!("config_positions/{case}/eval-config.yaml"));
    let dir = tempfile::tempdir().unwrap();
    let mut args = args.to_vec();
    args.extend(["--config", path_str(&config)]);
    let outcome = ragate_in(dir.path(), &args);
    assert_eq!(outcome.code, 2, "{}\n{}", outcome.stdout, outcome.stderr);
    outcome.stderr + &outcome.stdout
}

#[test]
fn an_unknown_judge_is_named_at_its_line_and_column_with_a_suggestion() {
    let error = error_of("unknown-judge", &["validate"]);
    assert!(
        error.contains(
            "unknown-judge/eval-config.yaml:5:34: metrics[1].judge: no judge `strikt`: expected one of the judges section (default, strict) (did you mean `strict`?)"
        ),
        "{error}"
    );
}

#[test]
fn a_rule_slice_field_outside_the_slices_list_is_named_at_its_line_and_column() {
    let error = error_of("unknown-rule-slice", &["validate"]);
    assert!(
        error.contains(
            "unknown-rule-slice/eval-config.yaml:11:14: gate.rules[1].slice: `clas` is not a slice field: expected one of the slices list (class) (did you mean `class`?)"
        ),
        "{error}"
    );
}

#[test]
fn a_slice_field_no_query_has_is_named_at_its_line_and_column_by_validate_and_gate() {
    let expected = "unknown-qrels-field/eval-config.yaml:4:10: slices[0]: no query of";
    let suggestion =
        "has a `klass` field: expected a field the qrels carry (did you mean `class`?)";
    let validate = error_of("unknown-qrels-field", &["validate"]);
    assert!(validate.contains("error: tier `smoke`: "), "{validate}");
    assert!(validate.contains(expected), "{validate}");
    assert!(validate.contains(suggestion), "{validate}");
    let run = fixture("config_positions/run.jsonl");
    let gate = error_of(
        "unknown-qrels-field",
        &[
            "gate",
            "--tier",
            "smoke",
            "--run",
            path_str(&run),
            "--out",
            "out",
        ],
    );
    assert!(gate.contains(expected), "{gate}");
    assert!(gate.contains(suggestion), "{gate}");
}

#[test]
fn an_unknown_metric_is_named_at_its_line_and_column_with_a_suggestion() {
    let error = error_of("unknown-metric", &["validate"]);
    assert!(
        error.contains(
            "unknown-metric/eval-config.yaml:3:21: metrics[1]: unknown metric `ndgc@10` (did you mean `ndcg@10`?)"
        ),
        "{error}"
    );
}

#[test]
fn a_stratify_field_no_query_has_is_named_at_its_line_and_column_by_validate_and_gate() {
    let expected =
        "unknown-stratify-field/eval-config.yaml:6:57: tiers.nightly.stratify: no query of";
    let suggestion = "has a `klass` field, so the sample could not be stratified: expected a field \
                      the queries carry (the queries carry `class`) (did you mean `class`?)";
    let validate = error_of("unknown-stratify-field", &["validate"]);
    assert!(validate.contains("error: tier `nightly`: "), "{validate}");
    assert!(validate.contains(expected), "{validate}");
    assert!(validate.contains(suggestion), "{validate}");
    let run = fixture("config_positions/run.jsonl");
    let gate = error_of(
        "unknown-stratify-field",
        &[
            "gate",
            "--tier",
            "nightly",
            "--run",
            path_str(&run),
            "--out",
            "out",
        ],
    );
    assert!(gate.contains(expected), "{gate}");
    assert!(gate.contains(suggestion), "{gate}");
}
