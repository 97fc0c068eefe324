//! `ragate init`: scaffolds a working gate in a folder (a commented config, sample qrels and
//! corpus, a stand-in Python pipeline, `baselines/`, a GitHub workflow) and overwrites nothing:
//! when any file it would write exists, it refuses before writing anything.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{InitArgs, InitPipeline};
use crate::error::{Error, Result};
use crate::exit_code;

const CONFIG: &str = include_str!("init/eval-config.yaml");
const PIPELINE_PYTHON: &str = include_str!("init/pipeline-python.yaml");
const PIPELINE_COMMAND: &str = include_str!("init/pipeline-command.yaml");
const PIPELINE_HTTP: &str = include_str!("init/pipeline-http.yaml");
const PIPELINE_RUN_FILE: &str = include_str!("init/pipeline-run-file.yaml");
const QRELS: &str = include_str!("init/qrels.jsonl");
const CORPUS: &str = include_str!("init/corpus.jsonl");
const PIPELINE_SCRIPT: &str = include_str!("init/pipeline.py");
const WORKFLOW: &str = include_str!("init/rag-gate.yml");
const SETUP_HTTP: &str = include_str!("init/setup-http.yml");
const SETUP_RUN_FILE: &str = include_str!("init/setup-run-file.yml");
const OUTPUTS_GITIGNORE: &str = "# ragate's outputs and caches (written by `ragate init`)\n*\n";

/// One file `init` writes: its path relative to the folder (with `/`), and its contents.
#[derive(Debug)]
struct Scaffold {
    path: &'static str,
    contents: String,
    /// A program the config runs (`eval/pipeline.py`): made executable on Unix.
    executable: bool,
}

impl Scaffold {
    fn new(path: &'static str, contents: impl Into<String>) -> Self {
        Scaffold {
            path,
            contents: contents.into(),
            executable: false,
        }
    }
}

/// The commit the scaffolded workflow's `uses: ragate-dev/ragate@...` names: the one this binary
/// was built from (`RAGATE_COMMIT_SHA`, set by build.rs from a git checkout), so that the
/// reference resolves and is pinned. A build without git metadata (crates.io, a source archive)
/// knows no commit: the workflow then names `main`, and `init` says to pin it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ActionPin {
    version: &'static str,
    sha: Option<&'static str>,
}

impl ActionPin {
    fn of_this_build() -> ActionPin {
        ActionPin::new(env!("CARGO_PKG_VERSION"), env!("RAGATE_COMMIT_SHA"))
    }

    fn new(version: &'static str, sha: &'static str) -> ActionPin {
        let full = sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit());
        ActionPin {
            version,
            sha: full.then_some(sha),
        }
    }

    /// What follows `@` in `uses:`, with its comment.
    fn reference(&self) -> String {
        match self.sha {
            Some(sha) => format!("{sha} # ragate {}", self.version),
            None => format!(
                "main # ragate {}: built without its git commit; pin a commit SHA here",
                self.version
            ),
        }
    }

    fn note(&self) -> String {
        match self.sha {
            Some(sha) => format!("ragate {}, commit {}", self.version, &sha[..12]),
            None => format!(
                "ragate {} was built without git metadata, so this file names `main` until you pin it",
                self.version
            ),
        }
    }
}

/// Every file `init --pipeline <pipeline>` writes, in the order they are listed.
fn scaffold(pipeline: InitPipeline) -> Vec<Scaffold> {
    let (section, setup) = match pipeline {
        InitPipeline::Python => (PIPELINE_PYTHON, ""),
        InitPipeline::Command => (PIPELINE_COMMAND, ""),
        InitPipeline::Http => (PIPELINE_HTTP, SETUP_HTTP),
        InitPipeline::RunFile => (PIPELINE_RUN_FILE, SETUP_RUN_FILE),
    };
    let config = CONFIG.replace("@PIPELINE@\n", section);
    let pin = ActionPin::of_this_build();
    let workflow = WORKFLOW
        .replace("@SETUP@\n", setup)
        .replace("@REF@", &pin.reference())
        .replace("@PIN_NOTE@", &pin.note());
    vec![
        Scaffold::new("eval-config.yaml", config),
        Scaffold::new("eval/qrels.jsonl", QRELS),
        Scaffold::new("eval/corpus.jsonl", CORPUS),
        Scaffold {
            executable: true,
            ..Scaffold::new("eval/pipeline.py", PIPELINE_SCRIPT)
        },
        Scaffold::new("baselines/.gitkeep", ""),
        Scaffold::new(".github/workflows/rag-gate.yml", workflow),
        Scaffold::new(".ragate/.gitignore", OUTPUTS_GITIGNORE),
    ]
}

pub(super) fn run(args: InitArgs) -> Result<i32> {
    let files = scaffold(args.pipeline);
    refuse_existing(&args.dir, &files)?;
    write_all(&args.dir, &files)?;
    crate::outputs::stdout::write_human(&report(&args.dir, &files, args.pipeline))?;
    Ok(exit_code::SUCCESS)
}

/// `relative` under `dir`, without a leading `./` when `dir` is the working directory (as
/// messages show it).
fn under(dir: &Path, relative: &Path) -> PathBuf {
    if dir == Path::new(".") {
        relative.to_path_buf()
    } else {
        dir.join(relative)
    }
}

/// Paths under `dir` that are in the way of `files`: a file that exists (whatever it is, a
/// dangling symbolic link included), or a non-folder where a folder is needed. Sorted, each once.
fn existing(dir: &Path, files: &[Scaffold]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for file in files {
        let mut relative = PathBuf::new();
        let mut parts = file.path.split('/').peekable();
        while let Some(part) = parts.next() {
            relative.push(part);
            let path = under(dir, &relative);
            let Ok(meta) = fs::symlink_metadata(&path) else {
                break;
            };
            let is_last = parts.peek().is_none();
            // A folder on the way (or a link to one) is fine; anything else blocks.
            if is_last || !(meta.is_dir() || path.is_dir()) {
                found.push(path);
                break;
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Fails (writing nothing) when any file `init` would write already exists.
fn refuse_existing(dir: &Path, files: &[Scaffold]) -> Result<()> {
    let found = existing(dir, files);
    let Some(first) = found.first() else {
        return Ok(());
    };
    let others = match &found[1..] {
        [] => String::new(),
        rest => format!(
            " (and {}: {})",
            if rest.len() == 1 {
                "1 more".to_string()
            } else {
                format!("{} more", rest.len())
            },
            rest.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Err(Error::Input {
        path: first.clone(),
        message: format!(
            "already exists{others}: `ragate init` overwrites nothing, so it wrote nothing; \
             move {} away, or scaffold into another folder with `--dir DIR`",
            if found.len() == 1 { "it" } else { "them" }
        ),
    })
}

/// Writes every file (new files only), creating folders as needed. On a failure, the files and
/// folders written so far are removed again, so that a failed `init` leaves the folder as it was.
fn write_all(dir: &Path, files: &[Scaffold]) -> Result<()> {
    let mut created: Vec<PathBuf> = Vec::new();
    let result = files
        .iter()
        .try_for_each(|file| write_one(dir, file, &mut created));
    if result.is_err() {
        for path in created.iter().rev() {
            // Best effort: a folder that is not empty (someone wrote into it meanwhile) stays.
            let _ = if path.is_dir() {
                fs::remove_dir(path)
            } else {
                fs::remove_file(path)
            };
        }
    }
    result
}

/// Writes one new file, recording in `created` every folder and file it made.
fn write_one(dir: &Path, file: &Scaffold, created: &mut Vec<PathBuf>) -> Result<()> {
    let path = under(dir, Path::new(file.path));
    let mut missing: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .take_while(|folder| !folder.as_os_str().is_empty() && !folder.exists())
        .collect();
    missing.reverse();
    for folder in missing {
        fs::create_dir(folder).map_err(|e| Error::write(folder, e))?;
        created.push(folder.to_path_buf());
    }
    let mut out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| Error::write(&path, e))?;
    created.push(path.clone());
    out.write_all(file.contents.as_bytes())
        .and_then(|()| out.sync_all())
        .map_err(|e| Error::write(&path, e))?;
    #[cfg(unix)]
    if file.executable {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::write(&path, e))?;
    }
    Ok(())
}

/// What `init` prints: the files it created and the commands to run next.
fn report(dir: &Path, files: &[Scaffold], pipeline: InitPipeline) -> String {
    let mut text = format!("Created in {}:\n", dir.display());
    for file in files {
        text.push_str(&format!("  {}\n", file.path));
    }
    text.push_str("\nNext:\n");
    let mut commands: Vec<(String, &str)> = Vec::new();
    if dir != Path::new(".") {
        commands.push((format!("cd {}", dir.display()), ""));
    }
    match pipeline {
        InitPipeline::Python | InitPipeline::Command => {}
        InitPipeline::Http => commands.push((
            "python3 eval/pipeline.py --serve 8765 &".to_string(),
            "the stand-in pipeline as an HTTP service",
        )),
        InitPipeline::RunFile => commands.push((
            "mkdir -p runs && python3 eval/pipeline.py < eval/qrels.jsonl > runs/smoke.jsonl"
                .to_string(),
            "the run the config reads",
        )),
    }
    commands.push((
        "ragate gate --tier smoke".to_string(),
        "measures the smoke tier; exit 2: no baseline yet",
    ));
    commands.push((
        "ragate baseline accept --tier smoke".to_string(),
        "then commit baselines/smoke.json",
    ));
    let width = commands.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    for (command, note) in commands {
        if note.is_empty() {
            text.push_str(&format!("  {command}\n"));
        } else {
            text.push_str(&format!("  {command:width$}   # {note}\n"));
        }
    }
    if ActionPin::of_this_build().sha.is_none() {
        text.push_str(
            "\nNote: this ragate was built without its git commit, so \
             .github/workflows/rag-gate.yml uses ragate-dev/ragate@main: pin it to a commit SHA \
             (`git ls-remote https://github.com/ragate-dev/ragate main`).\n",
        );
    }
    text.push_str(
        "\nThen replace eval/pipeline.py (or the config's `pipeline:`) with your own pipeline, \
         and eval/qrels.jsonl with your queries (`ragate convert` reads TREC, TSV and BEIR \
         files; with none yet, `ragate synth --generator NAME --out drafts` drafts some from \
         your corpus for you to review and `ragate qrels accept`); `ragate validate` then names \
         the commands that replace the baseline.\n",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [InitPipeline; 4] = [
        InitPipeline::Python,
        InitPipeline::Command,
        InitPipeline::Http,
        InitPipeline::RunFile,
    ];

    #[test]
    fn templates_leave_no_placeholder() {
        for pipeline in ALL {
            for file in scaffold(pipeline) {
                assert!(
                    !file.contents.contains("@PIPELINE@")
                        && !file.contents.contains("@SETUP@")
                        && !file.contents.contains("@REF@")
                        && !file.contents.contains("@PIN_NOTE@"),
                    "{pipeline:?}: {}",
                    file.path
                );
            }
        }
    }

    #[test]
    fn the_workflow_pins_the_action_to_this_builds_commit() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let pinned = ActionPin::new("1.2.3", sha);
        assert_eq!(pinned.reference(), format!("{sha} # ragate 1.2.3"));
        assert_eq!(pinned.note(), "ragate 1.2.3, commit 0123456789ab");
        // No commit (or not a full one): `main`, which resolves, and a request to pin it.
        for unknown in [
            "",
            "0123456789ab",
            "zz23456789abcdef0123456789abcdef01234567",
        ] {
            let pin = ActionPin::new("1.2.3", unknown);
            assert_eq!(pin.sha, None, "{unknown}");
            assert!(
                pin.reference()
                    .starts_with("main # ragate 1.2.3: built without")
            );
        }
        // This build: a checkout of the repository, so the workflow names its commit.
        let workflow = scaffold(InitPipeline::Python)
            .into_iter()
            .find(|file| file.path.ends_with("rag-gate.yml"))
            .unwrap()
            .contents;
        let uses = workflow
            .lines()
            .find(|line| line.contains("uses: ragate-dev/ragate@"))
            .unwrap();
        match ActionPin::of_this_build().sha {
            Some(sha) => assert!(
                uses.ends_with(&format!("@{sha} # ragate {}", env!("CARGO_PKG_VERSION"))),
                "{uses}"
            ),
            None => assert!(uses.contains("@main # ragate"), "{uses}"),
        }
        assert!(!workflow.contains("@v0"), "no tag reference: {workflow}");
    }

    #[test]
    fn every_config_and_workflow_is_yaml() {
        for pipeline in ALL {
            for file in scaffold(pipeline) {
                if file.path.ends_with(".yaml") || file.path.ends_with(".yml") {
                    crate::settings::yaml::from_str::<crate::settings::yaml::Value>(&file.contents)
                        .unwrap_or_else(|e| panic!("{pipeline:?}: {}: {e}", file.path));
                }
            }
        }
    }

    #[test]
    fn a_file_where_a_folder_is_needed_is_in_the_way() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("eval"), "not a folder").unwrap();
        fs::create_dir_all(dir.path().join(".github/workflows")).unwrap();
        let found = existing(dir.path(), &scaffold(InitPipeline::Python));
        assert_eq!(found, [dir.path().join("eval")]);
    }

    #[test]
    fn a_dangling_link_is_in_the_way() {
        #[cfg(unix)]
        {
            let dir = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink("nowhere", dir.path().join("eval-config.yaml")).unwrap();
            let found = existing(dir.path(), &scaffold(InitPipeline::Python));
            assert_eq!(found, [dir.path().join("eval-config.yaml")]);
        }
    }

    #[test]
    fn a_failed_write_removes_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        // The last file's folder is a file created after the check: the write fails there.
        let mut files = scaffold(InitPipeline::Python);
        files.push(Scaffold::new("blocked/file", "x"));
        fs::write(dir.path().join("blocked"), "in the way").unwrap();
        let error = write_all(dir.path(), &files).unwrap_err();
        assert!(error.to_string().contains("blocked"), "{error}");
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left, ["blocked"]);
    }
}
