//! Where the config is when `--config` and `RAGATE_CONFIG` do not say: `eval-config.yaml` in the
//! working directory or the nearest parent that has one, as ruff, pytest and nextest find theirs.
//! The search stops at the repository root (a directory holding `.git`), so a config outside the
//! repository is never picked up by accident. A config that is not there is an error that says
//! where its path came from (`--config`, `RAGATE_CONFIG`, or this search and where it looked),
//! with a close file name as "did you mean" and `ragate init` when there is no config at all.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::Error;

/// The config's file name.
pub const CONFIG_FILE: &str = "eval-config.yaml";

/// Where the command line's config path came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    /// `--config FILE`.
    Option,
    /// The `RAGATE_CONFIG` environment variable.
    Environment,
    /// Not given: [`config_file`]'s search from the working directory (the bare file name when
    /// it found none).
    Discovered,
}

/// The source of this process's config path, set once when the command line is parsed.
static SOURCE: OnceLock<ConfigSource> = OnceLock::new();

/// Records where the command line's config path came from (the first call wins).
pub fn set_source(source: ConfigSource) {
    let _ = SOURCE.set(source);
}

/// Where the config path came from: [`ConfigSource::Option`] unless the command line said
/// otherwise (a path a caller names itself is as good as given).
fn source() -> ConfigSource {
    SOURCE.get().copied().unwrap_or(ConfigSource::Option)
}

/// The directories [`config_file`] looks in from `start`: `start` and its parents, up to the
/// first that holds `.git` (or the file system's root).
pub fn searched(start: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in start.ancestors() {
        dirs.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            break;
        }
    }
    dirs
}

/// The error for the config at `path`, which does not exist ([`not_found_in`] from the working
/// directory and the command line's source).
pub(crate) fn not_found(path: &Path) -> Error {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    not_found_in(path, source(), &cwd)
}

/// The error for the config at `path` (from `source`), which does not exist, as seen from `cwd`:
/// what named it, a close file name in its folder ("did you mean"), where the search looked
/// when the path was not given, and `ragate init` when no config is found from `cwd` at all.
pub(crate) fn not_found_in(path: &Path, source: ConfigSource, cwd: &Path) -> Error {
    let folder = path.parent().unwrap_or(Path::new(""));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let in_folder = cwd.join(folder);
    let names: Vec<String> = std::fs::read_dir(&in_folder)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok())
                .filter(|entry| entry.path().is_file())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|candidate| Some(candidate) != name.as_ref())
                .collect()
        })
        .unwrap_or_default();
    let close = name.as_deref().and_then(|name| {
        crate::suggest::closest(name, names.iter().map(String::as_str))
            .map(|candidate| folder.join(candidate))
    });
    let mut message = match source {
        ConfigSource::Option => "no such config file (named by --config)".to_string(),
        ConfigSource::Environment => {
            "no such config file (named by the environment variable RAGATE_CONFIG)".to_string()
        }
        ConfigSource::Discovered => {
            let looked: Vec<String> = searched(cwd)
                .iter()
                .map(|dir| dir.display().to_string())
                .collect();
            format!(
                "no config found: looked for {CONFIG_FILE} in {} (the search stops at the \
                 repository root, the folder holding .git)",
                looked.join(", ")
            )
        }
    };
    if let Some(close) = close {
        message.push_str(&format!(" (did you mean `{}`?)", close.display()));
    } else if config_file(cwd).is_none() {
        message.push_str("; `ragate init` writes a starter config and pipeline here");
    }
    if source == ConfigSource::Discovered {
        message.push_str("; name another with --config FILE or RAGATE_CONFIG");
    }
    Error::missing(path, message)
}

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

    /// A repository (`.git`) with `eval-config.yaml` at its root, and a sub-folder.
    fn repository() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        std::fs::create_dir_all(repo.join("sub")).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        (root, repo)
    }

    #[test]
    fn a_misspelt_config_gets_the_close_name_and_what_named_it() {
        let (_root, repo) = repository();
        std::fs::write(repo.join(CONFIG_FILE), "").unwrap();
        let path = Path::new("eval-confg.yaml");
        let error = not_found_in(path, ConfigSource::Option, &repo);
        assert!(error.is_missing());
        assert_eq!(
            error.to_string(),
            "eval-confg.yaml: no such config file (named by --config) (did you mean \
             `eval-config.yaml`?)"
        );
        std::fs::write(repo.join("sub/ragate.yml"), "").unwrap();
        let error = not_found_in(
            Path::new("sub/ragate.yaml"),
            ConfigSource::Environment,
            &repo,
        );
        assert_eq!(
            error.to_string(),
            "sub/ragate.yaml: no such config file (named by the environment variable \
             RAGATE_CONFIG) (did you mean `sub/ragate.yml`?)"
        );
        // Nothing close, but a config is found from here: no `ragate init`.
        let error = not_found_in(Path::new("other.yaml"), ConfigSource::Option, &repo);
        assert_eq!(
            error.to_string(),
            "other.yaml: no such config file (named by --config)"
        );
    }

    #[test]
    fn no_config_at_all_lists_where_it_looked_and_names_ragate_init() {
        let (_root, repo) = repository();
        let sub = repo.join("sub");
        let error = not_found_in(Path::new(CONFIG_FILE), ConfigSource::Discovered, &sub);
        assert_eq!(
            error.to_string(),
            format!(
                "eval-config.yaml: no config found: looked for eval-config.yaml in {}, {} (the \
                 search stops at the repository root, the folder holding .git); `ragate init` \
                 writes a starter config and pipeline here; name another with --config FILE or \
                 RAGATE_CONFIG",
                sub.display(),
                repo.display()
            )
        );
        let error = not_found_in(Path::new("x.yaml"), ConfigSource::Option, &sub);
        assert!(
            error.to_string().ends_with(
                "(named by --config); `ragate init` writes a starter config and pipeline here"
            ),
            "{error}"
        );
        assert_eq!(searched(&sub), [sub.clone(), repo.clone()]);
    }

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
