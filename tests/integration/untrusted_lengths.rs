//! Untrusted lengths and values that once panicked (exit 101, no outputs): a slice value of 70,000
//! characters in every table that shows it (the first run's measured means, `baseline accept`,
//! `baseline show`, the gate's table against the baseline), and a `SOURCE_DATE_EPOCH` past the
//! year 9999 in `baseline accept`.

use std::path::Path;

use crate::gate_flow::setup;
use crate::{Outcome, Ragate, ragate_env};

fn accept(dir: &Path, env: &[(&str, &str)]) -> Outcome {
    ragate_env(
        dir,
        &[
            "baseline",
            "accept",
            "--tier",
            "regression",
            "--from",
            "out/results.json",
        ],
        env,
    )
}

#[test]
fn a_slice_value_of_70000_characters_is_cut_for_display_and_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let long = "p".repeat(70_000);
    let qrels = std::fs::read_to_string(dir.join("qrels.jsonl")).unwrap();
    std::fs::write(
        dir.join("qrels.jsonl"),
        qrels.replace(
            "\"class\":\"paraphrased\"",
            &format!("\"class\":\"{long}\""),
        ),
    )
    .unwrap();
    let shown_label = format!("class={}…", "p".repeat(74));

    let first = Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    assert!(first.stdout.contains(&shown_label), "{}", first.stdout);
    assert!(!first.stdout.contains(&long), "the label is cut");
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(summary.contains("No baseline yet"), "{summary}");

    let accepted = accept(dir, &[]);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    assert!(
        format!("{}{}", accepted.stdout, accepted.stderr).contains(&shown_label),
        "{}\n{}",
        accepted.stdout,
        accepted.stderr
    );
    let shown = ragate_env(dir, &["baseline", "show", "--tier", "regression"], &[]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(shown.stdout.contains(&shown_label), "{}", shown.stdout);
    assert!(!shown.stdout.contains(&long));

    Ragate::gate("regression", "regressed.jsonl", "out")
        .status(1)
        .run_in(dir);
    // The full value stays in the results: only the display is cut.
    let results = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    assert!(results.contains(&long));
}

#[test]
fn a_source_date_epoch_past_the_year_9999_is_refused_by_baseline_accept() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    for epoch in ["253402300800", "18446744073709551615", "-1"] {
        let refused = accept(dir, &[("SOURCE_DATE_EPOCH", epoch)]);
        assert_eq!(refused.code, 2, "{epoch}: {}", refused.stderr);
        assert!(
            refused
                .stderr
                .contains(&format!("SOURCE_DATE_EPOCH is `{epoch}`"))
                && refused.stderr.contains("before the year 10000"),
            "{}",
            refused.stderr
        );
        assert!(!dir.join("baselines/regression.json").exists());
    }
    let accepted = accept(dir, &[("SOURCE_DATE_EPOCH", "253402300799")]);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    let baseline = std::fs::read_to_string(dir.join("baselines/regression.json")).unwrap();
    assert!(baseline.contains("9999-12-31T23:59:59Z"), "{baseline}");
}
