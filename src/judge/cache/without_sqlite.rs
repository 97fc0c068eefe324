//! The judge cache in a build without the `cache` feature: no SQLite, and opening a cache file
//! is an error naming the feature (never a silent run without the cache).

use std::path::Path;

use super::CacheKey;
use crate::error::{Error, Result};
use crate::judge::cache::CacheMode;

/// No cache file can be open in this build: the type has no values.
#[derive(Debug)]
pub(super) enum Store {}

impl Store {
    /// Always an error: this build has no SQLite.
    pub(super) fn open(path: &Path, _mode: CacheMode) -> Result<Store> {
        Err(Error::input(
            path,
            crate::features::missing(
                "cache",
                "the judge cache (a SQLite file)",
                "or set `cache: {mode: off}` to judge without a cache",
            ),
        ))
    }

    pub(super) fn get(&self, _path: &Path, _key: &CacheKey) -> Result<Option<String>> {
        match *self {}
    }

    pub(super) fn put_all(&self, _path: &Path, _entries: &[(&CacheKey, String)]) -> Result<()> {
        match *self {}
    }
}
