//! Naming a config key in an error: every invalid value is reported at its key path
//! (`judges.j.timeout_s`) in the config file.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};

/// Validation context: the config path and a key path prefix for errors.
pub struct Keys<'a> {
    path: &'a Path,
}

impl<'a> Keys<'a> {
    /// The keys of the config file at `path`.
    pub fn new(path: &'a Path) -> Self {
        Keys { path }
    }

    /// The error of the value at `key` (a key path such as `judges.j.timeout_s`).
    pub fn error(&self, key: impl Into<String>, message: impl Into<String>) -> Error {
        Error::config(self.path, key, message)
    }

    /// The time limit `key` gives (`default` seconds when absent): more than 0 and at most
    /// [`MAX_TIMEOUT_S`] (one day), so that deadlines computed from it cannot overflow.
    pub fn timeout(&self, key: &str, value: Option<f64>, default: f64) -> Result<Duration> {
        let value = value.unwrap_or(default);
        if !(value.is_finite() && value > 0.0 && value <= MAX_TIMEOUT_S as f64) {
            return Err(self.error(
                key,
                format!(
                    "{value}: expected a positive number of seconds, at most {MAX_TIMEOUT_S} (one day)"
                ),
            ));
        }
        Ok(Duration::from_secs_f64(value))
    }
}

/// The longest time limit (`timeout_s`) a config may set: one day, in seconds.
pub const MAX_TIMEOUT_S: u64 = 86_400;
