//! The judge cache's SQLite file (the `cache` feature): opening and checking it, reading one
//! value, writing a batch in one transaction.

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};

use super::{BUSY_TIMEOUT, CacheKey, SCHEMA};
use crate::error::{Error, Result};
use crate::judge::cache::CacheMode;

/// An open, checked cache file; the connection sits behind a mutex held for one statement (or
/// one batch's transaction) at a time.
#[derive(Debug)]
pub(super) struct Store {
    connection: Mutex<Connection>,
}

impl Store {
    /// Opens the file at `path` in `mode` (`read-write` or `replay`): see [`connect`].
    pub(super) fn open(path: &Path, mode: CacheMode) -> Result<Store> {
        if mode == CacheMode::Replay && !path.is_file() {
            let message = "replay mode needs an existing cache: run once with mode read-write";
            return Err(Error::input(path, message));
        }
        Ok(Store {
            connection: Mutex::new(connect(path, mode)?),
        })
    }

    /// The value stored under `key`, if any; errors name the file `path`.
    pub(super) fn get(&self, path: &Path, key: &CacheKey) -> Result<Option<String>> {
        lock(&self.connection)
            .prepare_cached("SELECT value FROM verdicts WHERE key = ?1")
            .and_then(|mut select| {
                select
                    .query_row([key.as_str()], |row| row.get(0))
                    .optional()
            })
            .map_err(|e| failure(path, "read", e))
    }

    /// Stores every entry, replacing older values, in one transaction.
    pub(super) fn put_all(&self, path: &Path, entries: &[(&CacheKey, String)]) -> Result<()> {
        let mut connection = lock(&self.connection);
        let mut write = || -> rusqlite::Result<()> {
            // IMMEDIATE takes the write lock up front, waiting in the busy handler; a deferred
            // transaction upgrading a read lock could fail at once instead.
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut insert = transaction.prepare_cached(
                    "INSERT OR REPLACE INTO verdicts (key, value) VALUES (?1, ?2)",
                )?;
                for (key, value) in entries {
                    // A value holds endpoint output (claims, say): no key it echoed is stored.
                    let value = crate::secrets::redact(value);
                    insert.execute([key.as_str(), &value])?;
                }
            }
            transaction.commit()
        };
        write().map_err(|e| failure(path, "write", e))
    }

    /// The connection, for tests that inspect the file.
    #[cfg(test)]
    pub(super) fn connection(&self) -> MutexGuard<'_, Connection> {
        lock(&self.connection)
    }
}

/// A panic while the lock was held leaves the connection usable (SQLite rolls back itself).
fn lock(connection: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    connection.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A SQLite error during `what`, with what to do next: deleting the file is advised only when
/// the file itself is damaged or foreign, never for a full disk, a read-only file system or
/// missing permissions, where the cache (and every verdict in it) is healthy.
fn failure(path: &Path, what: &str, e: rusqlite::Error) -> Error {
    Error::input(
        path,
        format!("judge cache {what} failed: {e}; {}", advice(&e)),
    )
}

/// What to do about a SQLite error of the cache.
fn advice(e: &rusqlite::Error) -> &'static str {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            "another process kept the cache locked for over 60 s: retry, or set `cache.mode: off`"
        }
        Some(ErrorCode::DiskFull) => {
            "the disk is full; the cache file is not damaged (keep it): free space, or point \
             `cache.path` at a volume with room"
        }
        Some(ErrorCode::ReadOnly) => {
            "the file or its folder is read-only (or on a read-only file system); the cache file \
             is not damaged (keep it): make it writable, or read it only with `cache.mode: replay`"
        }
        Some(ErrorCode::PermissionDenied | ErrorCode::CannotOpen) => {
            "the file or its folder cannot be opened (permissions, a missing or read-only \
             folder); the cache file is not the problem (keep it): check the permissions of the \
             file and its folder, or point `cache.path` elsewhere"
        }
        Some(ErrorCode::SystemIoFailure) => {
            "the disk failed to read or write (full, read-only or failing?); check the disk \
             before anything else: the cache file itself may be healthy"
        }
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
            "the file is damaged or not a SQLite database: delete it (its verdicts are asked \
             again) or point `cache.path` elsewhere"
        }
        _ => {
            "check the disk and the file's permissions first; if the file is damaged or not a \
             ragate judge cache, delete it or point `cache.path` elsewhere"
        }
    }
}

/// Opens and checks the database; in `read-write` mode creates it, WAL mode and its table; in
/// `replay` mode read-only (see [`open_read_only`]).
fn connect(path: &Path, mode: CacheMode) -> Result<Connection> {
    let create = mode == CacheMode::ReadWrite;
    if let Some(parent) = path
        .parent()
        .filter(|p| create && !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let failed = |e| failure(path, "open", e);
    let connection = if create {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        Connection::open_with_flags(path, flags)
    } else {
        open_read_only(path)
    }
    .map_err(failed)?;
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

/// Opens the cache for reading only, creating no file. A WAL database opened read-only would
/// still create its `-wal` and `-shm` files (and fail where it cannot, e.g. in a read-only
/// directory), so a cache that was closed cleanly (no `-wal` file with content: all of it is in
/// the database file) is opened `immutable`: SQLite reads the file without locks or side files.
/// A cache whose `-wal` still holds verdicts (a writer is running, or was killed) is opened
/// read-only as usual, so those verdicts are read too.
fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal_has_content = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
    match path.to_str().filter(|_| !wal_has_content) {
        Some(text) => Connection::open_with_flags(
            format!("file:{}?immutable=1", uri_escape(text)),
            flags | OpenFlags::SQLITE_OPEN_URI,
        ),
        None => Connection::open_with_flags(path, flags),
    }
}

/// `path` escaped for the path part of an SQLite `file:` URI.
pub(super) fn uri_escape(path: &str) -> String {
    let mut escaped = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '%' => escaped.push_str("%25"),
            '?' => escaped.push_str("%3f"),
            '#' => escaped.push_str("%23"),
            c => escaped.push(c),
        }
    }
    escaped
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
    use rusqlite::ffi;

    fn sqlite_error(code: std::ffi::c_int) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(ffi::Error::new(code), None)
    }

    #[test]
    fn only_a_damaged_or_foreign_file_is_to_be_deleted() {
        for code in [
            ffi::SQLITE_FULL,
            ffi::SQLITE_READONLY,
            ffi::SQLITE_PERM,
            ffi::SQLITE_CANTOPEN,
            ffi::SQLITE_IOERR_WRITE,
            ffi::SQLITE_BUSY,
        ] {
            let advice = advice(&sqlite_error(code));
            assert!(!advice.contains("delete"), "{code}: {advice}");
        }
        assert!(advice(&sqlite_error(ffi::SQLITE_FULL)).starts_with("the disk is full"));
        assert!(advice(&sqlite_error(ffi::SQLITE_READONLY)).contains("read-only"));
        assert!(advice(&sqlite_error(ffi::SQLITE_PERM)).contains("permissions"));
        for code in [ffi::SQLITE_CORRUPT, ffi::SQLITE_NOTADB] {
            let advice = advice(&sqlite_error(code));
            assert!(
                advice.starts_with("the file is damaged"),
                "{code}: {advice}"
            );
        }
    }

    #[test]
    fn a_file_that_is_not_a_database_is_named_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.sqlite");
        std::fs::write(&path, b"this is not a database\n").unwrap();
        let error = Store::open(&path, CacheMode::ReadWrite)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("the file is damaged or not a SQLite database: delete it"),
            "{error}"
        );
    }
}
