//! `gate --shard I/N` and `merge`: the merged outputs are byte for byte those of an unsharded
//! run (results.json, junit.xml, summary.md) with the same exit code; a missing or repeated shard
//! is an error.

use std::path::Path;

use crate::gate_flow::setup;
use crate::{accept_baseline, ragate_in};

fn accept_base_run(dir: &Path) {
    let first = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "base.jsonl",
            "--out",
            "ref",
        ],
    );
    assert_eq!(first.code, 2, "{}", first.stderr);
    accept_baseline(dir, "regression", "ref/results.json", &[]);
}

fn read(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn merged_shards_give_the_unsharded_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    accept_base_run(dir);
    let whole = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "regressed.jsonl",
            "--out",
            "whole",
        ],
    );
    assert_eq!(whole.code, 1, "the regressed run fails: {}", whole.stderr);

    let mut sizes = Vec::new();
    for index in 1..=3 {
        let shard = format!("{index}/3");
        let out = format!("shard{index}");
        let outcome = ragate_in(
            dir,
            &[
                "gate",
                "--tier",
                "regression",
                "--run",
                "regressed.jsonl",
                "--shard",
                &shard,
                "--out",
                &out,
            ],
        );
        assert_eq!(
            outcome.code, 0,
            "a shard only evaluates: {}",
            outcome.stderr
        );
        assert!(!dir.join(&out).join("results.json").exists());
        let partial: serde_json::Value =
            serde_json::from_slice(&read(dir, &format!("{out}/shard.json"))).unwrap();
        sizes.push(
            partial["evaluated"]["results"]["queries"]
                .as_object()
                .unwrap()
                .len(),
        );
    }
    assert_eq!(sizes.iter().sum::<usize>(), 120, "{sizes:?}");
    assert!(sizes.iter().all(|&n| n > 20), "roughly balanced: {sizes:?}");

    let merged = ragate_in(
        dir,
        &[
            "merge",
            "--tier",
            "regression",
            "--out",
            "merged",
            "shard3",
            "shard1",
            "shard2",
        ],
    );
    assert_eq!(merged.code, whole.code, "{}", merged.stderr);
    for file in ["results.json", "junit.xml", "summary.md", "trace.jsonl"] {
        assert!(
            read(dir, &format!("merged/{file}")) == read(dir, &format!("whole/{file}")),
            "{file} differs between merged and unsharded runs"
        );
    }
    assert_eq!(merged.stdout, whole.stdout);
}

#[test]
fn a_missing_or_repeated_shard_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    accept_base_run(dir);
    for index in 1..=3 {
        let shard = format!("{index}/3");
        let out = format!("s{index}");
        let outcome = ragate_in(
            dir,
            &[
                "gate",
                "--tier",
                "regression",
                "--run",
                "base.jsonl",
                "--shard",
                &shard,
                "--out",
                &out,
            ],
        );
        assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    }
    let missing = ragate_in(dir, &["merge", "--tier", "regression", "s1", "s3"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("missing shard(s) 2/3"),
        "{}",
        missing.stderr
    );

    let repeated = ragate_in(
        dir,
        &["merge", "--tier", "regression", "s1", "s2", "s3", "s2"],
    );
    assert_eq!(repeated.code, 2);
    assert!(
        repeated
            .stderr
            .contains("shard 2/3 is also in s2/shard.json"),
        "{}",
        repeated.stderr
    );

    let bad = ragate_in(dir, &["gate", "--tier", "regression", "--shard", "4/3"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("expected I/N"), "{}", bad.stderr);

    let complete = ragate_in(dir, &["merge", "--tier", "regression", "s1", "s2", "s3"]);
    assert_eq!(complete.code, 0, "{}", complete.stderr);
}
