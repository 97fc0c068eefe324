//! The persistent judge-verdict cache (config `cache: { path, mode }`): one SQLite file.
//!
//! A verdict (an opaque string, the judge's serialised answer) is stored under a [`CacheKey`]
//! hashing everything that determines it, so a re-run with the same inputs makes no judge
//! calls and gives identical verdicts. The file holds exactly one table, [`SCHEMA`], in WAL
//! mode, so threads and concurrent ragate processes may share it: the new values of one
//! request batch ([`through`]) are written in one transaction, and a writer waits up to
//! [`BUSY_TIMEOUT`] for another to finish. A file that is not SQLite, or a database with other
//! tables, is an error naming the path: it is never ignored, overwritten or modified. The file
//! travels between branches (CI caches), so every value read is checked ([`Cached`]).
//!
//! Modes ([`CacheMode`]): `read-write` creates the file (and its directories) when missing,
//! reads and records verdicts; `replay` needs an existing cache, opens it read-only and
//! creates no file (it works in a read-only directory), and makes a miss an error
//! ([`JudgeCache::lookup`]), for offline, deterministic PR runs; `off` touches no file: every
//! lookup misses and [`JudgeCache::put`] does nothing.

#[cfg(feature = "cache")]
mod sqlite;
#[cfg(not(feature = "cache"))]
mod without_sqlite;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::digest::sha256_hex;
use crate::error::{Error, Result};
#[cfg(feature = "cache")]
use sqlite::Store;
#[cfg(not(feature = "cache"))]
use without_sqlite::Store;

/// How the judge cache is used (config spelling `read-write`, `replay`, `off`; see
/// `judge::cache` for what each does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// Read cached verdicts and record new ones (creates the file).
    ReadWrite,
    /// Read only; a verdict not in the cache is an error (offline, deterministic runs).
    Replay,
    /// No cache: every verdict is asked of the judge, no file is touched.
    Off,
}

/// The only table of a cache file, exactly as SQLite records it in `sqlite_master`.
pub const SCHEMA: &str = "CREATE TABLE verdicts (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
/// How long a writer waits for another process's transaction before the run fails.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

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
    /// The key of a verdict: the sha256 of the judge's kind, model, endpoint, prompt version,
    /// parameters and inputs (JSON objects with sorted keys).
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
        CacheKey(sha256_hex(&canonical))
    }

    /// The key as 64 lowercase hex digits.
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
    /// Lookups that found a value.
    pub hits: u64,
    /// Lookups that found none.
    pub misses: u64,
    /// Values written.
    pub writes: u64,
}

/// An open judge cache. It is `Send + Sync`: share one handle between threads (by `&` or
/// `Arc`); the connection sits behind a mutex held for one statement at a time, and the
/// counters are atomics.
#[derive(Debug)]
pub struct JudgeCache {
    mode: CacheMode,
    path: PathBuf,
    /// The open file; None in `off` mode.
    store: Option<Store>,
    hits: AtomicU64,
    misses: AtomicU64,
    writes: AtomicU64,
}

impl JudgeCache {
    /// Opens the cache at `path` (in `read-write` mode creating it); `off` touches nothing.
    pub fn open(path: &Path, mode: CacheMode) -> Result<JudgeCache> {
        let store = match mode {
            CacheMode::Off => None,
            CacheMode::Replay | CacheMode::ReadWrite => Some(Store::open(path, mode)?),
        };
        let path = path.to_path_buf();
        let (hits, misses, writes) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
        Ok(JudgeCache {
            mode,
            path,
            store,
            hits,
            misses,
            writes,
        })
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a miss is an error (mode `replay`).
    pub fn is_replay(&self) -> bool {
        self.mode == CacheMode::Replay
    }

    /// The cached value for `key`: `Some` on a hit; `None` on a miss, after which the caller
    /// asks the judge and [`put`](Self::put)s its answer. In replay mode a miss is an error
    /// naming `what` (the request, e.g. `support of claim 3 of q7`) and the cache path.
    pub fn lookup(&self, key: &CacheKey, what: &str) -> Result<Option<String>> {
        let found = match &self.store {
            None => None,
            Some(store) => store.get(&self.path, key)?,
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

    /// The value under `key`, parsed and checked, looked up for a plan: neither counted in
    /// [`Self::stats`] nor an error on a miss in replay mode.
    pub fn peek<T: Cached>(&self, key: &CacheKey) -> Result<Option<T>> {
        let found = match &self.store {
            None => None,
            Some(store) => store.get(&self.path, key)?,
        };
        found.map(|text| parse_cached(self, key, &text)).transpose()
    }

    /// Records `value` under `key`, replacing any previous value, in `read-write` mode; does
    /// nothing in `off` and `replay` modes (replay never asks the judge: nothing is new).
    pub fn put(&self, key: &CacheKey, value: &str) -> Result<()> {
        self.put_all(&[(key, value.to_string())])
    }

    /// [`put`](Self::put) for every entry, in one transaction: one commit (and one sync) for a
    /// whole batch of new verdicts, and the write lock held once, briefly.
    pub fn put_all(&self, entries: &[(&CacheKey, String)]) -> Result<()> {
        let Some(store) = self.store.as_ref().filter(|_| !self.is_replay()) else {
            return Ok(());
        };
        if entries.is_empty() {
            return Ok(());
        }
        store.put_all(&self.path, entries)?;
        self.writes
            .fetch_add(entries.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// The counts since the cache was opened.
    pub fn stats(&self) -> CacheStats {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        CacheStats {
            hits: load(&self.hits),
            misses: load(&self.misses),
            writes: load(&self.writes),
        }
    }
}

/// A value kept in the judge cache. The cache file travels between branches and jobs (CI
/// caches), so what it returns is untrusted input: every value read is checked as strictly as
/// a judge's reply before it is used.
pub trait Cached: serde::Serialize + serde::de::DeserializeOwned {
    /// Why the value is not one a judge could have given, if it is not.
    fn check(&self) -> std::result::Result<(), String>;
}

/// The value stored under `key`, parsed and checked; an error names the cache file and the key.
fn parse_cached<T: Cached>(cache: &JudgeCache, key: &CacheKey, text: &str) -> Result<T> {
    let value = serde_json::from_str::<T>(text)
        .map_err(|e| e.to_string())
        .and_then(|value| value.check().map(|()| value));
    value.map_err(|reason| {
        Error::input(
            cache.path(),
            format!(
                "the cached value under key {} is invalid ({reason}): it was not written by this \
                 ragate; delete the cache file (or point `cache.path` elsewhere) and run again",
                key.as_str()
            ),
        )
    })
}

/// Values for `keys`: looked up in `cache` (when there is one) and checked, the missing ones
/// fetched with `fetch(missing indices)` (in index order) and stored in one transaction.
/// Returns the values in key order and how many were fetched. `what(i)` names request `i` for
/// replay misses.
pub fn through<T, F>(
    cache: Option<&JudgeCache>,
    keys: &[CacheKey],
    what: impl Fn(usize) -> String,
    fetch: F,
) -> Result<(Vec<T>, usize)>
where
    T: Cached,
    F: FnOnce(&[usize]) -> Result<Vec<T>>,
{
    let mut values: Vec<Option<T>> = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let stored = match cache {
            Some(cache) => cache.lookup(key, &what(i))?,
            None => None,
        };
        values.push(match (stored, cache) {
            (Some(text), Some(cache)) => Some(parse_cached(cache, key, &text)?),
            _ => None,
        });
    }
    let missing: Vec<usize> = (0..keys.len()).filter(|&i| values[i].is_none()).collect();
    let fresh = fetch(&missing)?;
    if fresh.len() != missing.len() {
        let first = missing.first().map_or_else(String::new, |&i| what(i));
        return Err(Error::Usage(format!(
            "{first}: {} answers came back for {} requests: expected one answer per request \
             (a bug in ragate: please report it)",
            fresh.len(),
            missing.len()
        )));
    }
    if let Some(cache) = cache {
        let entries: Vec<(&CacheKey, String)> = missing
            .iter()
            .zip(&fresh)
            .map(|(&i, value)| {
                let text = serde_json::to_string(value).expect("cached values serialise");
                (&keys[i], text)
            })
            .collect();
        cache.put_all(&entries)?;
    }
    for (&i, value) in missing.iter().zip(fresh) {
        values[i] = Some(value);
    }
    let values = values
        .into_iter()
        .map(|v| v.expect("every value looked up or fetched"))
        .collect();
    Ok((values, missing.len()))
}

// The tests open real SQLite files: they need the `cache` feature.
#[cfg(all(test, feature = "cache"))]
mod tests;
