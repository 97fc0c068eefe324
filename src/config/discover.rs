//! Where the config is when `--config` and `RAGATE_CONFIG` do not say: `eval-config.yaml` in the
//! working directory or the nearest parent that has one, as ruff, pytest and nextest find theirs.
//! The search stops at the repository root (a directory holding `.git`), so a config outside the
//! repository is never picked up by accident.

use std::path::{Path, PathBuf};

/// The config's file name.
pub const CONFIG_FILE: &str = "eval-config.yaml";

/// The nearest `eval-config.yaml` from `start` upward, as a path relative to `start`
/// (`eval-config.yaml`, `../eval-config.yaml`, ...), or None.
pub fn config_file(start: &Path) -> Option<PathBuf> {
    let mut relative = PathBuf::new();
    for dir in start.ancestors() {
        let candidate = dir.join(CONFIG_FILE);
        if candidate.is_file() {
            return Some(relative.join(CONFIG_FILE));
        }
        if dir.join(".git").exists() {
            return None;
        }
        relative.push("..");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_config_up_to_the_repository_root_is_found() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        let deep = repo.join("services/search/src");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(config_file(&deep), None, "none in the repository");

        std::fs::write(root.path().join(CONFIG_FILE), "").unwrap();
        assert_eq!(config_file(&deep), None, "never above the repository root");

        std::fs::write(repo.join(CONFIG_FILE), "").unwrap();
        let found = config_file(&deep).unwrap();
        assert_eq!(found, Path::new("../../../eval-config.yaml"));
        assert!(deep.join(&found).is_file());

        std::fs::write(repo.join("services").join(CONFIG_FILE), "").unwrap();
        assert_eq!(
            config_file(&deep).unwrap(),
            Path::new("../../eval-config.yaml"),
            "the nearest wins"
        );
        assert_eq!(config_file(&repo).unwrap(), Path::new(CONFIG_FILE));
    }
}
