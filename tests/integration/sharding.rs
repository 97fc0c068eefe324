//! `gate --shard I/N` and `merge`: the merged outputs are byte for byte those of an unsharded
//! run (results.json, junit.xml, summary.md) with the same exit code; a missing or repeated shard
//! is an error.

use std::path::Path;

use crate::gate_flow::setup;
use crate::{accept_baseline, ragate_env, ragate_in};

/// junit.xml carries the run's start and duration unless `SOURCE_DATE_EPOCH` pins them.
const REPRODUCIBLE: &[(&str, &str)] = &[("SOURCE_DATE_EPOCH", "1796056735")];

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
    let whole = ragate_env(
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
        REPRODUCIBLE,
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

    let merged = ragate_env(
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
        REPRODUCIBLE,
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

/// Writes shards 1..=3 of the base run into `s1`..`s3`.
fn write_shards(dir: &Path) {
    for index in 1..=3 {
        let (shard, out) = (format!("{index}/3"), format!("s{index}"));
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
}

fn edit_shard(dir: &Path, shard: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join(shard).join("shard.json");
    let mut value: serde_json::Value =
        serde_json::from_slice(&read(dir, &format!("{shard}/shard.json"))).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

#[test]
fn a_shard_that_lost_queries_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    accept_base_run(dir);
    write_shards(dir);
    let recorded: serde_json::Value = serde_json::from_slice(&read(dir, "s2/shard.json")).unwrap();
    let count = recorded["queries"]["count"].as_u64().unwrap();
    assert!(count > 20, "{recorded:?}");
    // Keep one query of shard 2: before, the merge evaluated the 1 + the other shards' queries.
    edit_shard(dir, "s2", |shard| {
        let queries = shard["evaluated"]["results"]["queries"]
            .as_object_mut()
            .unwrap();
        let first = queries.keys().next().unwrap().clone();
        queries.retain(|qid, _| *qid == first);
    });
    let merged = ragate_in(dir, &["merge", "--tier", "regression", "s1", "s2", "s3"]);
    assert_eq!(merged.code, 2, "{}", merged.stderr);
    assert!(
        merged.stderr.contains(&format!(
            "s2/shard.json: shard 2/3 holds 1 queries but recorded {count} when it was written"
        )) && merged
            .stderr
            .contains("run `ragate gate --shard 2/3` again"),
        "{}",
        merged.stderr
    );
    // A record edited to match the loss does not fool the merge: the qrels say what the shard
    // must hold.
    edit_shard(dir, "s2", |shard| {
        let qids: Vec<&str> = shard["evaluated"]["results"]["queries"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let record = shard_record(qids);
        shard["queries"] = serde_json::to_value(record).unwrap();
    });
    let merged = ragate_in(dir, &["merge", "--tier", "regression", "s1", "s2", "s3"]);
    assert_eq!(merged.code, 2, "{}", merged.stderr);
    assert!(
        merged
            .stderr
            .contains("shard 2/3 holds 1 queries, but that shard of ")
            && merged
                .stderr
                .contains(&format!("has {count} scored queries")),
        "{}",
        merged.stderr
    );
}

#[test]
fn shard_counts_out_of_bounds_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    accept_base_run(dir);
    write_shards(dir);
    for (count, index) in [(0u64, 1u64), (u64::MAX, 1)] {
        edit_shard(dir, "s1", |shard| {
            shard["shard"] = serde_json::json!({"index": index, "count": count});
        });
        let merged = ragate_in(dir, &["merge", "--tier", "regression", "s1", "s2", "s3"]);
        assert_eq!(merged.code, 2, "{count}: {}", merged.stderr);
        assert!(
            merged.stderr.contains("s1/shard.json")
                && merged
                    .stderr
                    .contains("expected I/N with 1 <= I <= N <= 1000"),
            "{count}: {}",
            merged.stderr
        );
    }
    let huge = ragate_in(
        dir,
        &["gate", "--tier", "regression", "--shard", "1/1000000000000"],
    );
    assert_eq!(huge.code, 2, "{}", huge.stderr);
    assert!(
        huge.stderr
            .contains("expected I/N with 1 <= I <= N <= 1000"),
        "{}",
        huge.stderr
    );
}

/// The `queries` record of a shard holding exactly `qids`, as `shard.json` spells it: their
/// count and the SHA-256 (lowercase hex) of the JSON array of them, sorted.
fn shard_record(mut qids: Vec<&str>) -> serde_json::Value {
    use sha2::Digest;
    qids.sort_unstable();
    let digest = sha2::Sha256::digest(serde_json::to_vec(&qids).unwrap());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    serde_json::json!({"count": qids.len(), "qids_sha256": hex})
}
