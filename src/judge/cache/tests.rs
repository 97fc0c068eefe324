//! Tests of the judge cache: keys, modes, foreign files, concurrent writers, untrusted values.

use super::*;
use serde_json::json;

fn key(n: usize) -> CacheKey {
    CacheKey::new(
        "openai",
        "m",
        "http://h/v1",
        "v1",
        &json!({"t": 0}),
        &json!({"n": n}),
    )
}

#[test]
fn verdicts_persist_across_reopen_and_stats_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/cache.sqlite");
    let cache = JudgeCache::open(&path, CacheMode::ReadWrite).unwrap();
    assert_eq!(cache.lookup(&key(1), "q1").unwrap(), None);
    cache.put(&key(1), r#"{"relevant":true}"#).unwrap();
    assert_eq!(
        cache.stats(),
        CacheStats {
            hits: 0,
            misses: 1,
            writes: 1
        }
    );
    drop(cache);
    for mode in [CacheMode::ReadWrite, CacheMode::Replay] {
        let cache = JudgeCache::open(&path, mode).unwrap();
        let value = cache.lookup(&key(1), "q1").unwrap();
        assert_eq!(value.as_deref(), Some(r#"{"relevant":true}"#));
        assert_eq!(
            cache.stats(),
            CacheStats {
                hits: 1,
                misses: 0,
                writes: 0
            }
        );
    }
}

#[test]
fn any_changed_key_part_misses() {
    let (p, i) = (
        json!({"threshold": 0.4, "stem": true}),
        json!({"claim": "c"}),
    );
    let base = CacheKey::new("lexical", "m", "e", "v1", &p, &i);
    assert_eq!(base.as_str().len(), 64);
    let reordered = json!({"stem": true, "threshold": 0.4});
    assert_eq!(
        base,
        CacheKey::new("lexical", "m", "e", "v1", &reordered, &i)
    );
    let dir = tempfile::tempdir().unwrap();
    let cache = JudgeCache::open(&dir.path().join("c.sqlite"), CacheMode::ReadWrite).unwrap();
    cache.put(&base, "yes").unwrap();
    for variant in [
        CacheKey::new("openai", "m", "e", "v1", &p, &i),
        CacheKey::new("lexical", "m2", "e", "v1", &p, &i),
        CacheKey::new("lexical", "m", "e2", "v1", &p, &i),
        CacheKey::new("lexical", "m", "e", "v2", &p, &i),
        CacheKey::new("lexical", "m", "e", "v1", &json!({"threshold": 0.5}), &i),
        CacheKey::new("lexical", "m", "e", "v1", &p, &json!({"claim": "d"})),
    ] {
        assert_eq!(cache.lookup(&variant, "variant").unwrap(), None);
    }
    assert_eq!(cache.lookup(&base, "base").unwrap().as_deref(), Some("yes"));
}

#[test]
fn off_mode_touches_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let cache = JudgeCache::open(&dir.path().join("sub/c.sqlite"), CacheMode::Off).unwrap();
    cache.put(&key(1), "v").unwrap();
    assert_eq!(cache.lookup(&key(1), "q").unwrap(), None);
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    assert_eq!(
        cache.stats(),
        CacheStats {
            hits: 0,
            misses: 1,
            writes: 0
        }
    );
}

#[test]
fn replay_needs_an_existing_cache_and_fails_on_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache.sqlite");
    let error = JudgeCache::open(&path, CacheMode::Replay)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("cache.sqlite") && error.contains("read-write"),
        "{error}"
    );
    assert!(!path.exists());
    JudgeCache::open(&path, CacheMode::ReadWrite)
        .unwrap()
        .put(&key(1), "v")
        .unwrap();
    let cache = JudgeCache::open(&path, CacheMode::Replay).unwrap();
    let error = cache
        .lookup(&key(2), "claim 3 of q7")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("claim 3 of q7") && error.contains("cache.sqlite"),
        "{error}"
    );
    cache.put(&key(2), "ignored").unwrap();
    assert_eq!(
        cache.stats(),
        CacheStats {
            hits: 0,
            misses: 1,
            writes: 0
        }
    );
}

#[test]
fn foreign_or_corrupt_files_are_errors_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let contents = [
        ("text.sqlite", b"this is not a database\n".to_vec()),
        (
            "random.sqlite",
            (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect(),
        ),
        ("other.sqlite", std::fs::read(&other).unwrap()),
    ];
    for (name, bytes) in contents {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        for mode in [CacheMode::ReadWrite, CacheMode::Replay] {
            let error = JudgeCache::open(&path, mode).unwrap_err().to_string();
            assert!(
                error.contains(name) && error.contains("cache.path"),
                "{error}"
            );
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} changed");
        }
    }
}

#[test]
fn concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cache.sqlite");
    let shared = std::sync::OnceLock::new();
    // Three handles open the fresh file at once (like three processes): threads 0 and 1
    // each own one, threads 2 and 3 share the third.
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let (path, shared) = (&path, &shared);
            scope.spawn(move || {
                let open = || JudgeCache::open(path, CacheMode::ReadWrite).unwrap();
                let own = (thread < 2).then(open);
                let cache = own.as_ref().unwrap_or_else(|| shared.get_or_init(open));
                for n in 0..500 {
                    cache
                        .put(&key(thread * 1000 + n), &format!("{thread}/{n}"))
                        .unwrap();
                }
            });
        }
    });
    assert_eq!(shared.get().unwrap().stats().writes, 1000);
    let cache = JudgeCache::open(&path, CacheMode::Replay).unwrap();
    for (thread, n) in (0..4).flat_map(|t| (0..500).map(move |n| (t, n))) {
        let value = cache.lookup(&key(thread * 1000 + n), "key").unwrap();
        assert_eq!(value, Some(format!("{thread}/{n}")));
    }
}

/// `through` over `keys` with every value already cached: the first error, if any.
fn read_back<T: Cached + std::fmt::Debug>(cache: &JudgeCache, keys: &[CacheKey]) -> String {
    through::<T, _>(
        Some(cache),
        keys,
        |i| format!("request {i}"),
        |_| panic!("every value is cached"),
    )
    .unwrap_err()
    .to_string()
}

#[test]
fn invalid_cached_values_are_errors_naming_the_file_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.sqlite");
    let cache = JudgeCache::open(&path, CacheMode::ReadWrite).unwrap();
    let verdicts = [
        (r#"{"positive":true,"grade":7,"score":null}"#, "grade 7"),
        (r#"{"positive":true,"grade":0,"score":null}"#, "contradicts"),
        (
            r#"{"positive":false,"grade":2,"score":null}"#,
            "contradicts",
        ),
        (r#"{"positive":false,"grade":1,"score":1.5}"#, "score 1.5"),
        (
            r#"{"positive":"yes","grade":1,"score":null}"#,
            "invalid type",
        ),
    ];
    for (n, (value, reason)) in verdicts.iter().enumerate() {
        cache.put(&key(n), value).unwrap();
        let error = read_back::<crate::judge::Verdict>(&cache, &[key(n)]);
        assert!(
            error.contains("shared.sqlite")
                && error.contains(key(n).as_str())
                && error.contains(reason)
                && error.contains("delete the cache file"),
            "{value}: {error}"
        );
    }
    // Embeddings beyond f32 (serde_json refuses them), empty ones (nothing to compare).
    for (n, (value, reason)) in [("[1e39, 0.5]", "out of range"), ("[]", "empty")]
        .iter()
        .enumerate()
    {
        cache.put(&key(100 + n), value).unwrap();
        let error = read_back::<Vec<f32>>(&cache, &[key(100 + n)]);
        assert!(
            error.contains(reason) && error.contains("shared.sqlite"),
            "{value}: {error}"
        );
    }
    assert_eq!(
        vec![1.0, f32::INFINITY].check(),
        Err("value 1 of the embedding is not a finite f32".to_string())
    );
    cache.put(&key(200), r#"["a claim", " "]"#).unwrap();
    let error = read_back::<Vec<String>>(&cache, &[key(200)]);
    assert!(error.contains("claim 1 is blank"), "{error}");
    // Valid values read back.
    cache
        .put(&key(300), r#"{"positive":false,"grade":1,"score":0.25}"#)
        .unwrap();
    let (values, fetched) = through::<crate::judge::Verdict, _>(
        Some(&cache),
        &[key(300)],
        |i| format!("request {i}"),
        |missing| {
            assert!(missing.is_empty(), "cached");
            Ok(Vec::new())
        },
    )
    .unwrap();
    assert_eq!(fetched, 0);
    assert_eq!(values[0].grade, 1);
}

#[test]
fn a_fetch_that_answers_fewer_requests_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let cache = JudgeCache::open(&dir.path().join("c.sqlite"), CacheMode::ReadWrite).unwrap();
    let keys = [key(1), key(2)];
    let error = through::<Vec<f32>, _>(
        Some(&cache),
        &keys,
        |i| format!("the embedding of text {i}"),
        |missing| {
            assert_eq!(missing, [0, 1]);
            Ok(vec![vec![1.0]])
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("the embedding of text 0: 1 answers came back for 2 requests"),
        "{error}"
    );
    assert_eq!(cache.stats().writes, 0, "nothing half-written");
}

#[test]
fn new_values_of_a_batch_are_written_in_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let cache = JudgeCache::open(&path, CacheMode::ReadWrite).unwrap();
    let keys: Vec<CacheKey> = (0..300).map(key).collect();
    let (values, fetched) = through::<Vec<String>, _>(
        Some(&cache),
        &keys,
        |i| format!("request {i}"),
        |missing| Ok(missing.iter().map(|i| vec![format!("claim {i}")]).collect()),
    )
    .unwrap();
    assert_eq!(
        (values.len(), fetched, cache.stats().writes),
        (300, 300, 300)
    );
    let connection = cache.store.as_ref().unwrap().connection();
    // SQLite's count of changes made by the last INSERT/UPDATE/DELETE statements is no
    // measure of transactions; the WAL frame count is: one transaction of 300 small rows
    // writes a few pages, one transaction a row would append hundreds of frames.
    let frames: i64 = connection
        .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get(1))
        .unwrap();
    assert!(frames < 50, "{frames} WAL frames for 300 rows");
}

#[test]
fn replay_opens_read_only_and_creates_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let cache_dir = dir.path().join("cache");
    let path = cache_dir.join("c.sqlite");
    let writer = JudgeCache::open(&path, CacheMode::ReadWrite).unwrap();
    writer.put(&key(1), "v").unwrap();
    drop(writer);
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(&cache_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(listing(), ["c.sqlite"], "a clean close leaves no side file");
    let bytes = std::fs::read(&path).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Read-only for a non-root user; root ignores the bits, hence the listing checks.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        std::fs::set_permissions(&cache_dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let replay = JudgeCache::open(&path, CacheMode::Replay).unwrap();
    assert_eq!(replay.lookup(&key(1), "q").unwrap().as_deref(), Some("v"));
    assert!(
        replay.lookup(&key(2), "q").is_err(),
        "a miss is still an error"
    );
    assert_eq!(listing(), ["c.sqlite"], "replay created a file");
    drop(replay);
    assert_eq!(listing(), ["c.sqlite"]);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "replay changed the file"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cache_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn replay_reads_verdicts_still_in_the_wal_of_a_running_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sqlite");
    let writer = JudgeCache::open(&path, CacheMode::ReadWrite).unwrap();
    writer.put(&key(1), "in the wal").unwrap();
    let replay = JudgeCache::open(&path, CacheMode::Replay).unwrap();
    assert_eq!(
        replay.lookup(&key(1), "q").unwrap().as_deref(),
        Some("in the wal")
    );
}

#[test]
fn uri_escaping_keeps_paths_with_special_characters() {
    assert_eq!(
        sqlite::uri_escape("/a b/c%d?e#f.sqlite"),
        "/a b/c%25d%3fe%23f.sqlite"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd %3f?#name.sqlite");
    JudgeCache::open(&path, CacheMode::ReadWrite)
        .unwrap()
        .put(&key(1), "v")
        .unwrap();
    let replay = JudgeCache::open(&path, CacheMode::Replay).unwrap();
    assert_eq!(replay.lookup(&key(1), "q").unwrap().as_deref(), Some("v"));
}
