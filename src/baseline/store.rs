//! Reading and writing results and baseline files: atomic writes, strict reads that say what to
//! do next.

use std::io::Write;
use std::path::Path;

use crate::baseline::results::{FORMAT, Results};
use crate::error::{Error, Location, Result};

/// Reads a results or baseline file; `next_step` is the command that would create it.
pub fn read(path: &Path, next_step: &str) -> Result<Results> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::input(path, format!("no such file: {next_step}")));
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let format: Option<String> = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("format")?.as_str().map(str::to_string));
    match format.as_deref() {
        Some(FORMAT) => {}
        Some(other) => {
            return Err(Error::input(
                path,
                format!(
                    "format `{other}` is not `{FORMAT}`, the one this ragate reads: upgrade ragate, or {next_step}"
                ),
            ));
        }
        None => {}
    }
    serde_json::from_str(&text).map_err(|e| Error::Parse {
        location: Location::new(path, e.line() as u64).with_column(e.column() as u64),
        message: format!("{e}: expected a ragate results file ({FORMAT}); {next_step}"),
    })
}

/// Writes `text` to `path` atomically: a temporary file in the same directory, flushed to disk,
/// then renamed over the target. Creates the directory when needed.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    // Outputs and baselines are meant to be read by others (CI artifacts, reviewers): the
    // temporary file's private mode would stick to them.
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut file = builder.tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| Error::io(path, e))?;
    file.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    file.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}
