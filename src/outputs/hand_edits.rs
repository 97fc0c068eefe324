//! Files ragate writes for a person to review and edit (synth's `draft.jsonl` and `review.md`,
//! the proposals of `holes --judge --out`): a later run replaces one only while it is what ragate
//! wrote. Beside each such file ragate keeps the sha256 of what it wrote, `.<name>.ragate-sha256`
//! (one line as `sha256sum` writes it: `<hex>  <name>`). A file whose sha256 differs (a reviewer
//! edited it), or one with no such record (ragate did not write it), is not replaced: the run is
//! refused before it asks anything, naming the file and `--force`.

use std::path::{Path, PathBuf};

use crate::baseline::store;
use crate::digest::sha256_hex;
use crate::error::{Error, Result};

/// How a written file is replaced: a file ragate names in an output folder (`synth --out DIR`)
/// replaces a symbolic link there; a path the user named (`holes --out FILE`) is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    InFolder,
    Named,
}

/// The record of what ragate wrote at `path`: `.<name>.ragate-sha256` beside it.
pub(crate) fn record_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy());
    path.with_file_name(format!(".{name}.ragate-sha256"))
}

/// The sha256 the record at `record` holds, when it holds one.
fn recorded(record: &Path) -> Option<String> {
    let text = std::fs::read_to_string(record).ok()?;
    let hex = text.split_whitespace().next()?;
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hex.to_ascii_lowercase())
}

/// Refuses to replace `path` (named by `option`) when it is a regular file that changed since
/// ragate wrote it, or that ragate has no record of writing; `force` replaces it anyway. No file
/// there, or a device or FIFO (written in place: there is nothing to lose), is no obstacle.
pub(crate) fn check(path: &Path, option: &str, force: bool) -> Result<()> {
    if force || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e).named_by(option))?;
    let record = record_path(path);
    let problem = match recorded(&record) {
        Some(sha256) if sha256 == sha256_hex(&bytes) => return Ok(()),
        Some(_) => format!(
            "changed since ragate wrote it (its sha256 is not the one recorded in {})",
            record.display()
        ),
        None => format!(
            "exists, and ragate has no record of writing it (no sha256 in {})",
            record.display()
        ),
    };
    Err(Error::input(
        path,
        format!(
            "{problem}: not replaced, so that edits made to it survive; review it, move it away \
             or choose another {option}, or pass --force to replace it"
        ),
    ))
}

/// Removes `path` and its record, when there (the previous run's file, which [`check`] let go).
pub(crate) fn remove(path: &Path) -> Result<()> {
    for file in [path.to_path_buf(), record_path(path)] {
        // Only a regular file or a link: a device or a FIFO stays.
        let removable = std::fs::symlink_metadata(&file)
            .is_ok_and(|m| m.is_file() || m.file_type().is_symlink());
        if removable {
            std::fs::remove_file(&file).map_err(|e| Error::write(&file, e))?;
        }
    }
    Ok(())
}

/// Writes `text` to `path` atomically ([`Place`] says what a link there becomes), then records
/// its sha256 beside it. A device or a FIFO is written in place and gets no record.
pub(crate) fn write(path: &Path, text: &str, place: Place) -> Result<()> {
    let device = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let in_place = device && !(link && place == Place::InFolder);
    match place {
        Place::InFolder => store::write_replacing_links(path, text)?,
        Place::Named => store::write_atomic(path, text)?,
    }
    if !in_place {
        let name = path
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy());
        let line = format!("{}  {name}\n", sha256_hex(text.as_bytes()));
        store::write_replacing_links(&record_path(path), &line)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_only_while_it_is_what_ragate_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let draft = dir.path().join("draft.jsonl");
        check(&draft, "--out", false).expect("no file yet");
        write(&draft, "{\"qid\":\"a\"}\n", Place::InFolder).unwrap();
        let record = std::fs::read_to_string(record_path(&draft)).unwrap();
        assert_eq!(
            record,
            format!("{}  draft.jsonl\n", sha256_hex(b"{\"qid\":\"a\"}\n"))
        );
        assert_eq!(
            record_path(&draft),
            dir.path().join(".draft.jsonl.ragate-sha256")
        );
        check(&draft, "--out", false).expect("unchanged");

        std::fs::write(&draft, "{\"qid\":\"a\",\"query\":\"edited\"}\n").unwrap();
        let error = check(&draft, "--out", false).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!(
                "{}: changed since ragate wrote it",
                draft.display()
            )) && error.contains("--force")
                && error.contains("another --out"),
            "{error}"
        );
        check(&draft, "--out", true).expect("--force");

        std::fs::remove_file(record_path(&draft)).unwrap();
        let error = check(&draft, "--out", false).unwrap_err().to_string();
        assert!(
            error.contains("ragate has no record of writing it"),
            "{error}"
        );
        std::fs::write(record_path(&draft), "not a sha256\n").unwrap();
        assert!(
            check(&draft, "--out", false).is_err(),
            "an unreadable record"
        );

        remove(&draft).unwrap();
        assert!(!draft.exists() && !record_path(&draft).exists());
        remove(&draft).expect("nothing to remove");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_no_obstacle_and_gets_no_record() {
        check(Path::new("/dev/null"), "--out", false).unwrap();
    }
}
