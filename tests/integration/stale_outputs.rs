//! A failed run never leaves the previous run's outputs behind, and no output path may replace
//! an input of the run.

use crate::gate_flow::setup;
use crate::{accept_baseline, ragate_in};

#[test]
fn a_failed_gate_replaces_the_previous_outputs_with_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let gate = |run: &str| crate::Ragate::gate("regression", run, "out").run_in(dir);
    assert_eq!(gate("base.jsonl").code, 2);
    accept_baseline(dir, "regression", "out/results.json", &[]);
    assert_eq!(gate("base.jsonl").code, 0);
    assert!(dir.join("out/results.json").exists());
    // The next run fails (its run file is missing): nothing of the passing run may remain.
    let failed = gate("missing.jsonl");
    assert_eq!(failed.code, 2, "{}", failed.stderr);
    assert!(
        !dir.join("out/results.json").exists(),
        "a stale results.json would be accepted"
    );
    assert!(!dir.join("out/trace.jsonl").exists());
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    assert!(
        junit.contains("<error") && junit.contains("missing.jsonl"),
        "{junit}"
    );
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary
            .starts_with("**⚠️ Not evaluated: an input cannot be read** · tier\u{a0}regression\n")
            && summary.contains("missing.jsonl"),
        "{summary}"
    );
    let accept = ragate_in(
        dir,
        &[
            "baseline",
            "accept",
            "--tier",
            "regression",
            "--from",
            "out/results.json",
        ],
    );
    assert_eq!(accept.code, 2, "{}", accept.stdout);
    // A broken config also clears the stale outputs.
    assert_eq!(gate("base.jsonl").code, 0);
    std::fs::write(dir.join("broken.yaml"), "version: 1\n").unwrap();
    let broken = ragate_in(
        dir,
        &[
            "gate",
            "--config",
            "broken.yaml",
            "--tier",
            "regression",
            "--run",
            "base.jsonl",
            "--out",
            "out",
        ],
    );
    assert_eq!(broken.code, 2, "{}", broken.stderr);
    assert!(!dir.join("out/results.json").exists());
    assert!(
        std::fs::read_to_string(dir.join("out/junit.xml"))
            .unwrap()
            .contains("<error")
    );
}

#[test]
fn no_output_may_overwrite_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    assert_eq!(
        ragate_in(
            dir,
            &[
                "gate",
                "--tier",
                "regression",
                "--run",
                "base.jsonl",
                "--out",
                "out"
            ]
        )
        .code,
        2
    );
    accept_baseline(dir, "regression", "out/results.json", &[]);
    let baseline = std::fs::read(dir.join("baselines/regression.json")).unwrap();
    let over_baseline = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "base.jsonl",
            "--out",
            "out",
            "--junit",
            "baselines/regression.json",
        ],
    );
    assert_eq!(over_baseline.code, 2, "{}", over_baseline.stdout);
    assert!(
        over_baseline
            .stderr
            .contains("is tier `regression`'s baseline: refusing to overwrite an input"),
        "{}",
        over_baseline.stderr
    );
    assert_eq!(
        std::fs::read(dir.join("baselines/regression.json")).unwrap(),
        baseline
    );
    let over_qrels = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "base.jsonl",
            "--junit",
            "qrels.jsonl",
        ],
    );
    assert_eq!(over_qrels.code, 2);
    assert!(over_qrels.stderr.contains("qrels"), "{}", over_qrels.stderr);
    // The pipeline's saved run may be gated again from the output directory it lives in.
    std::fs::copy(dir.join("base.jsonl"), dir.join("out/run.jsonl")).unwrap();
    let again = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "out/run.jsonl",
            "--out",
            "out",
        ],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(dir.join("out/run.jsonl").exists());
}
