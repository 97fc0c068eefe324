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
    let results: Results = serde_json::from_str(&text).map_err(|e| Error::Parse {
        location: Location::new(path, e.line() as u64).with_column(e.column() as u64),
        message: format!("{e}: expected a ragate results file ({FORMAT}); {next_step}"),
    })?;
    results.provenance.check().map_err(|message| {
        let message = match next_step {
            "" => message,
            next_step => format!("{message}; {next_step}"),
        };
        Error::input(path, message)
    })?;
    Ok(results)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::collect::{RunContext, results};

    fn results_with(qrels_sha256: &str, config_hash: &str) -> String {
        let context = RunContext {
            tier: "smoke",
            slices: &[],
            qrels_sha256: qrels_sha256.to_string(),
            config_hash: config_hash.to_string(),
            git_commit: None,
            judges: Default::default(),
            embeddings: None,
        };
        results(vec!["mrr".to_string()], Default::default(), context).to_json()
    }

    #[test]
    fn provenance_hashes_must_be_sha256_hex() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        let good = "0123456789abcdef".repeat(4);
        std::fs::write(&path, results_with(&good, &good)).unwrap();
        assert!(read(&path, "run the gate").is_ok());
        // A non-ASCII hash made the gate's 12-character excerpt slice inside a character.
        for (qrels, config, key) in [
            ("ééééééééééééééé", good.as_str(), "qrels_sha256"),
            (good.as_str(), "", "config_hash"),
            (&good.to_uppercase(), good.as_str(), "qrels_sha256"),
            (&good[..63], good.as_str(), "qrels_sha256"),
        ] {
            std::fs::write(&path, results_with(qrels, config)).unwrap();
            let error = read(&path, "run the gate").unwrap_err().to_string();
            assert!(
                error.contains("results.json")
                    && error.contains(&format!("provenance.{key}"))
                    && error.contains("64 lowercase hex digits")
                    && error.ends_with("run the gate"),
                "{error}"
            );
        }
    }
}
