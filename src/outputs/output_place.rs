//! Where an output may be written, whatever the command: never inside a history folder (its
//! tier folders hold only the records `ragate history add` writes, and `history show` and
//! `gate --history` refuse a folder with any other file), and the path helpers that decide it.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The folder of the file `path` (`.` for a bare name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// `path` made absolute for comparison: its longest existing ancestor resolved (links, `..`),
/// the rest appended as written.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut current = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    loop {
        if let Ok(mut resolved) = current.canonicalize() {
            resolved.extend(rest.iter().rev());
            return resolved;
        }
        // The last component as written, `..` included (`file_name` has none for `x/..`).
        match (current.parent(), current.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last.as_os_str());
                current = if parent.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    parent
                };
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Refuses an output `path` (named by `option`) whose files go into `folder` when that folder is
/// a history folder: inside `history` (the command's `--history DIR`), or a folder that holds
/// history records (a tier's folder of any history, recognised by its records' names). A history
/// folder holds only the records `ragate history add` writes: any other file there makes
/// `history show`, `gate --history` and `report --history` refuse the whole folder.
pub(crate) fn refuse_history_folder(
    option: &str,
    path: &Path,
    folder: &Path,
    history: Option<&Path>,
) -> Result<()> {
    let why = match history {
        Some(dir) if absolute(folder).starts_with(absolute(dir)) => {
            format!("inside the history folder {} (--history)", dir.display())
        }
        _ if crate::history::store::holds_records(folder) => format!(
            "in {}, a tier's history folder (it holds history records)",
            folder.display()
        ),
        _ => return Ok(()),
    };
    Err(Error::Usage(format!(
        "{option} {} is {why}: a history folder holds only the records `ragate history add` \
         writes, and any other file there makes `history show` and `gate --history` refuse it; \
         choose a path outside it",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_inside_a_history_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("hist");
        let tier = history.join("smoke");
        std::fs::create_dir_all(&tier).unwrap();
        let refused = |folder: &Path, history: Option<&Path>| {
            refuse_history_folder("--out", &folder.join("zz.json"), folder, history)
        };
        let error = refused(&tier, Some(&history)).unwrap_err().to_string();
        assert!(
            error.contains("zz.json is inside the history folder") && error.contains("(--history)"),
            "{error}"
        );
        assert!(refused(&history.join("new/deeper"), Some(&history)).is_err());
        assert!(refused(&history.join("../hist/smoke"), Some(&history)).is_err());
        refused(&tier, None).expect("an empty folder is no tier's history folder");
        refused(dir.path(), Some(&history)).expect("beside the history folder");
        std::fs::write(tier.join("20261201T030000Z-0123456789ab.json"), "{}").unwrap();
        let error = refused(&tier, None).unwrap_err().to_string();
        assert!(error.contains("a tier's history folder"), "{error}");
        assert_eq!(parent_dir(Path::new("report.html")), Path::new("."));
        assert_eq!(
            absolute(&dir.path().join("none/../x")),
            dir.path().canonicalize().unwrap().join("none/../x"),
            "what does not exist is kept as written"
        );
    }
}
