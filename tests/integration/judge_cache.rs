//! The judge cache shared by concurrent gates (real processes of the binary on one SQLite file),
//! and replay from a cache that must not be written.

use std::fmt::Write as _;
use std::path::Path;

use crate::{Outcome, Ragate, accept_baseline};

/// A tier of `queries` queries whose answers have three claims each, judged by the default
/// (lexical) judge through the cache at `cache/judge.sqlite` in `mode`.
fn setup(dir: &Path, queries: usize, mode: &str) {
    let config = format!(
        "version: 1
metrics: [recall@5, faithfulness, answer_relevance]
cache: {{ path: cache/judge.sqlite, mode: {mode} }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  rules:
    - {{ metric: faithfulness, max_drop: 0.05 }}
"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let (mut qrels, mut run) = (String::new(), String::new());
    for i in 0..queries {
        writeln!(
            qrels,
            "{{\"qid\":\"q{i:04}\",\"query\":\"where are the backups of tenant {i} kept\",\"gold_doc_ids\":[\"d{i}\"]}}"
        )
        .unwrap();
        let line = serde_json::json!({
            "qid": format!("q{i:04}"),
            "retrieved": [{"doc_id": format!("d{i}"), "text": format!("Backups of tenant {i} are kept in Frankfurt. They are encrypted.")}],
            "answer": format!("Backups of tenant {i} are kept in Frankfurt. They are encrypted. Restores take {i} minutes."),
        });
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

/// Accepts a baseline evaluated without the cache, so that the gates under test pass.
fn accept_uncached_baseline(dir: &Path, queries: usize) {
    setup(dir, queries, "off");
    Ragate::gate("smoke", "run.jsonl", "base")
        .status(2)
        .run_in(dir); // no baseline yet
    accept_baseline(dir, "smoke", "base/results.json", &[]);
    assert!(!dir.join("cache").exists());
}

/// The gate passed (the run is the baseline's) and its run stats.
fn evaluated(dir: &Path, out: &str, outcome: &Outcome) -> serde_json::Value {
    assert!(
        outcome.code == 0 && !outcome.stderr.contains("locked"),
        "{out}: {}",
        outcome.stderr
    );
    serde_json::from_slice(&std::fs::read(dir.join(out).join("run-stats.json")).unwrap()).unwrap()
}

fn cached_rows(dir: &Path) -> i64 {
    let connection = rusqlite::Connection::open(dir.join("cache/judge.sqlite")).unwrap();
    connection
        .query_row("SELECT count(*) FROM verdicts", [], |row| row.get(0))
        .unwrap()
}

/// `gates` gates started at once on one fresh cache: all succeed, and the cache then holds every
/// verdict once (a replay gate answers everything from it).
fn concurrent_gates_share_one_cache(gates: usize) {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    accept_uncached_baseline(dir, 400);
    setup(dir, 400, "read-write");
    let outcomes: Vec<(String, Outcome)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..gates)
            .map(|g| {
                scope.spawn(move || {
                    let out = format!("out{g}");
                    let outcome = Ragate::gate("smoke", "run.jsonl", &out).run_in(dir);
                    (out, outcome)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut tasks = None;
    for (out, outcome) in &outcomes {
        let stats = evaluated(dir, out, outcome);
        let total = stats["judge_tasks"].as_u64().unwrap();
        assert!(total >= 1600, "{out}: {total} judge tasks");
        assert_eq!(*tasks.get_or_insert(total), total, "{out}: same tasks");
    }
    // Every distinct task once (faithfulness and answer_relevance keys differ).
    assert_eq!(cached_rows(dir) as u64, tasks.unwrap());
    setup(dir, 400, "replay");
    let replay = Ragate::gate("smoke", "run.jsonl", "replayed").run_in(dir);
    let stats = evaluated(dir, "replayed", &replay);
    assert_eq!(stats["judge_calls"], 0, "{}", replay.stderr);
    assert_eq!(
        std::fs::read(dir.join("replayed/results.json")).unwrap(),
        std::fs::read(dir.join("out0/results.json")).unwrap()
    );
}

#[test]
fn two_concurrent_gates_share_one_cache() {
    concurrent_gates_share_one_cache(2);
}

#[test]
fn four_concurrent_gates_share_one_cache() {
    concurrent_gates_share_one_cache(4);
}

#[test]
fn replay_creates_no_file_beside_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    accept_uncached_baseline(dir, 20);
    setup(dir, 20, "read-write");
    evaluated(
        dir,
        "first",
        &Ragate::gate("smoke", "run.jsonl", "first").run_in(dir),
    );
    let cache_dir = dir.join("cache");
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(&cache_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(listing(), ["judge.sqlite"]);
    let bytes = std::fs::read(cache_dir.join("judge.sqlite")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Stops a non-root user from writing; root ignores the bits, hence the listing.
        std::fs::set_permissions(&cache_dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    setup(dir, 20, "replay");
    let replay = Ragate::gate("smoke", "run.jsonl", "replayed").run_in(dir);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cache_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let stats = evaluated(dir, "replayed", &replay);
    assert_eq!(stats["judge_calls"], 0);
    assert_eq!(listing(), ["judge.sqlite"], "replay created a file");
    assert_eq!(
        std::fs::read(cache_dir.join("judge.sqlite")).unwrap(),
        bytes
    );
}
