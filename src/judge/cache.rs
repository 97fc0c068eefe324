//! The persistent judge-verdict cache (config `cache: { path, mode }`): one SQLite file.
//!
//! A verdict (an opaque string, the judge's serialised answer) is stored under a [`CacheKey`]
//! hashing everything that determines it, so a re-run with the same inputs makes no judge
//! calls and gives identical verdicts. The file holds exactly one table, [`SCHEMA`], in WAL
//! mode with a 5 s busy timeout, so threads and concurrent ragate processes may share it. A
//! file that is not SQLite, or a database with other tables, is an error naming the path: it
//! is never ignored, overwritten or modified.
//!
//! Modes ([`CacheMode`]): `read-write` creates the file (and its directories) when missing,
//! reads and records verdicts; `replay` needs an existing cache, never writes, and makes a
//! miss an error ([`JudgeCache::lookup`]), for offline, deterministic PR runs; `off` touches
//! no file: every lookup misses and [`JudgeCache::put`] does nothing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::hex;
use crate::error::{Error, Result};

/// The only table of a cache file, exactly as SQLite records it in `sqlite_master`.
pub const SCHEMA: &str = "CREATE TABLE verdicts (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How the cache is used (config spelling `read-write`, `replay`, `off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    ReadWrite,
    Replay,
    Off,
}

/// The key of one judge request: the lowercase hex SHA-256 of the JSON object
/// `{judge_kind, model, endpoint, version, parameters, inputs}` (fixed field order; the keys
/// of every object inside `parameters` and `inputs` sorted, so map order does not matter).
/// Any change of any of the six parts, even `1` vs `1.0`, gives another key: a miss.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey(String);

#[derive(serde::Serialize)]
struct KeyParts<'a> {
    judge_kind: &'a str,
    model: &'a str,
    endpoint: &'a str,
    version: &'a str,
    parameters: Value,
    inputs: Value,
}

impl CacheKey {
    pub fn new(
        judge_kind: &str,
        model: &str,
        endpoint: &str,
        version: &str,
        parameters: &Value,
        inputs: &Value,
    ) -> CacheKey {
        let (parameters, inputs) = (sorted(parameters), sorted(inputs));
        let parts = KeyParts {
            judge_kind,
            model,
            endpoint,
            version,
            parameters,
            inputs,
        };
        let canonical = serde_json::to_vec(&parts).expect("JSON values serialise");
        CacheKey(hex(&Sha256::digest(&canonical)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `value` with the keys of every object inserted in sorted order.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Counts since the cache was opened: lookups that hit, lookups that missed, values written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub writes: u64,
}

/// An open judge cache. It is `Send + Sync`: share one handle between threads (by `&` or
/// `Arc`); the connection sits behind a mutex held for one statement at a time, and the
/// counters are atomics.
#[derive(Debug)]
pub struct JudgeCache {
    mode: CacheMode,
    path: PathBuf,
    connection: Option<Mutex<Connection>>,
    hits: AtomicU64,
    misses: AtomicU64,
    writes: AtomicU64,
}

impl JudgeCache {
    /// Opens the cache at `path` (in `read-write` mode creating it); `off` touches nothing.
    pub fn open(path: &Path, mode: CacheMode) -> Result<JudgeCache> {
        let connection = match mode {
            CacheMode::Off => None,
            CacheMode::Replay if !path.is_file() => {
                let message = "replay mode needs an existing cache: run once with mode read-write";
                return Err(Error::input(path, message));
            }
            CacheMode::Replay | CacheMode::ReadWrite => Some(Mutex::new(connect(path, mode)?)),
        };
        let path = path.to_path_buf();
        let (hits, misses, writes) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
        Ok(JudgeCache {
            mode,
            path,
            connection,
            hits,
            misses,
            writes,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_replay(&self) -> bool {
        self.mode == CacheMode::Replay
    }

    /// The cached value for `key`: `Some` on a hit; `None` on a miss, after which the caller
    /// asks the judge and [`put`](Self::put)s its answer. In replay mode a miss is an error
    /// naming `what` (the request, e.g. `support of claim 3 of q7`) and the cache path.
    pub fn lookup(&self, key: &CacheKey, what: &str) -> Result<Option<String>> {
        let found = match &self.connection {
            None => None,
            Some(connection) => lock(connection)
                .prepare_cached("SELECT value FROM verdicts WHERE key = ?1")
                .and_then(|mut select| select.query_row([&key.0], |row| row.get(0)).optional())
                .map_err(|e| failure(&self.path, "read", e))?,
        };
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if found.is_none() && self.is_replay() {
            let message = format!(
                "replay mode: no cached verdict for {what}; run once with cache mode read-write"
            );
            return Err(Error::input(&self.path, message));
        }
        Ok(found)
    }

    /// Records `value` under `key`, replacing any previous value, in `read-write` mode; does
    /// nothing in `off` and `replay` modes (replay never asks the judge: nothing is new).
    pub fn put(&self, key: &CacheKey, value: &str) -> Result<()> {
        let Some(connection) = self.connection.as_ref().filter(|_| !self.is_replay()) else {
            return Ok(());
        };
        lock(connection)
            .prepare_cached("INSERT OR REPLACE INTO verdicts (key, value) VALUES (?1, ?2)")
            .and_then(|mut insert| insert.execute([key.as_str(), value]))
            .map_err(|e| failure(&self.path, "write", e))?;
        self.writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    pub fn stats(&self) -> CacheStats {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        CacheStats {
            hits: load(&self.hits),
            misses: load(&self.misses),
            writes: load(&self.writes),
        }
    }
}

/// Values for `keys`: looked up in `cache` (when there is one), the missing ones fetched with
/// `fetch(missing indices)` (in index order) and stored. Returns the values in key order and
/// how many were fetched. `what(i)` names request `i` for replay misses.
pub fn through<T, F>(
    cache: Option<&JudgeCache>,
    keys: &[CacheKey],
    what: impl Fn(usize) -> String,
    fetch: F,
) -> Result<(Vec<T>, usize)>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
    F: FnOnce(&[usize]) -> Result<Vec<T>>,
{
    let mut values: Vec<Option<T>> = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let stored = match cache {
            Some(cache) => cache.lookup(key, &what(i))?,
            None => None,
        };
        values.push(match (stored, cache) {
            (Some(text), Some(cache)) => Some(serde_json::from_str(&text).map_err(|e| {
                Error::input(
                    cache.path(),
                    format!("a cached value does not parse ({e}): delete the cache file"),
                )
            })?),
            _ => None,
        });
    }
    let missing: Vec<usize> = (0..keys.len()).filter(|&i| values[i].is_none()).collect();
    let fresh = fetch(&missing)?;
    debug_assert_eq!(fresh.len(), missing.len());
    for (&i, value) in missing.iter().zip(fresh) {
        if let Some(cache) = cache {
            cache.put(
                &keys[i],
                &serde_json::to_string(&value).expect("cached values serialise"),
            )?;
        }
        values[i] = Some(value);
    }
    let values = values
        .into_iter()
        .map(|v| v.expect("every value looked up or fetched"))
        .collect();
    Ok((values, missing.len()))
}

/// A panic while the lock was held leaves the connection usable (SQLite rolls back itself).
fn lock(connection: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    connection.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A SQLite error during `what`, with what to do next.
fn failure(path: &Path, what: &str, e: rusqlite::Error) -> Error {
    let advice = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            "another process kept the cache locked for over 5 s: retry, or set `cache.mode: off`"
        }
        _ => {
            "if it is damaged or not a ragate judge cache, delete it or point `cache.path` elsewhere"
        }
    };
    Error::input(path, format!("judge cache {what} failed: {e}; {advice}"))
}

/// Opens and checks the database; in `read-write` mode creates it, WAL mode and its table.
fn connect(path: &Path, mode: CacheMode) -> Result<Connection> {
    let create = mode == CacheMode::ReadWrite;
    if let Some(parent) = path
        .parent()
        .filter(|p| create && !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let failed = |e| failure(path, "open", e);
    let connection = Connection::open_with_flags(path, flags).map_err(failed)?;
    connection.busy_timeout(BUSY_TIMEOUT).map_err(failed)?;
    // The first access to the file: a foreign file fails here, before anything is written.
    let mut tables = tables(&connection).map_err(failed)?;
    if create && tables.is_empty() {
        // A new file. WAL mode persists in it, so this runs once per cache; two processes
        // creating it at once may see SQLITE_BUSY without the busy handler (deadlock
        // avoidance when upgrading a read lock), hence the retries.
        let create_table = SCHEMA.replacen("TABLE", "TABLE IF NOT EXISTS", 1);
        let started = Instant::now();
        tables = loop {
            let result = connection
                .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
                .and_then(|_| connection.execute_batch(&create_table))
                .and_then(|()| self::tables(&connection));
            match result {
                Err(e)
                    if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                        && started.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                result => break result.map_err(failed)?,
            }
        };
    }
    if tables != [("verdicts".to_string(), SCHEMA.to_string())] {
        let names: Vec<_> = tables.iter().map(|(name, _)| name).collect();
        let message = format!(
            "not a ragate judge cache: expected only the table `{SCHEMA}`, found tables \
             {names:?}; delete the file or point `cache.path` elsewhere"
        );
        return Err(Error::input(path, message));
    }
    Ok(connection)
}

/// (name, CREATE statement) of each table of the database.
fn tables(connection: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let sql = "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name";
    let mut select = connection.prepare(sql)?;
    select
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect()
}

#[cfg(test)]
mod tests {
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
        Connection::open(&other)
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
}
