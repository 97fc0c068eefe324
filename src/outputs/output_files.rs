//! The files a `gate` or `merge` run writes, settled before anything is written: none may be one
//! of the run's inputs (a `--junit` pointed at the committed baseline must not replace it), the
//! previous run's outputs are removed first (a failed run never leaves a stale pass behind for
//! `baseline accept` to promote), and a run that fails still writes a JUnit file and a summary
//! that carry the error.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::baseline::store;
use crate::config::{Config, Tier, TierSource};
use crate::error::{Error, Result};
use crate::outputs::output_place;
use crate::outputs::output_table::{self, OverInput};
use crate::outputs::writer::{OutputOptions, write_outcome};
use crate::report::junit::{RunClock, RunInfo};
use crate::report::outcome::{NotEvaluated, RunOutcome};
use crate::term;

/// A file the run reads, and what names it (for the error message).
#[derive(Debug, Clone)]
pub(crate) struct Input {
    pub path: PathBuf,
    pub named_by: String,
}

/// The inputs of a gate run of `tier`: the config, the qrels (or the file sampled from), the
/// baseline, the labels, the corpus, the judge cache and the run file.
pub(crate) fn inputs(config: &Config, tier: &Tier, run: Option<&Path>) -> Vec<Input> {
    let input = |path: &Path, named_by: &str| Input {
        path: path.to_path_buf(),
        named_by: named_by.to_string(),
    };
    let mut inputs = vec![
        input(&config.path, "the config"),
        input(&tier.baseline, &format!("tier `{}`'s baseline", tier.name)),
        input(&config.cache.path, "the judge cache"),
    ];
    match &tier.source {
        TierSource::Qrels(path) => {
            inputs.push(input(path, &format!("tier `{}`'s qrels", tier.name)))
        }
        TierSource::Sample { from, .. } => inputs.push(input(
            from,
            &format!("tier `{}`'s `from:` qrels", tier.name),
        )),
    }
    if let Some(labels) = &tier.labels {
        inputs.push(input(labels, &format!("tier `{}`'s labels", tier.name)));
    }
    if let Some(corpus) = &config.corpus {
        inputs.push(input(corpus, "the corpus"));
    }
    if let Some(run) = run
        .map(Path::to_path_buf)
        .or_else(|| config.run_file(&tier.name))
    {
        inputs.push(input(&run, "the run"));
    }
    inputs
}

/// Whether `a` and `b` name the same file: the same device and inode when both exist (hard
/// links, symbolic links), else the same absolute, normalised path (`./x`, `x`, `dir/../x`).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return (a.dev(), a.ino()) == (b.dev(), b.ino());
        }
    }
    identity(a) == identity(b)
}

/// An absolute, normalised form of `path` for comparison (the file itself need not exist).
fn identity(path: &Path) -> PathBuf {
    if let Ok(canonical) = path.canonicalize() {
        return canonical;
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return path.to_path_buf();
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    parent
        .canonicalize()
        .map_or_else(|_| path.to_path_buf(), |dir| dir.join(name))
}

/// The files this run may write, with the option that names each.
fn outputs(options: &OutputOptions) -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = output_table::ALL
        .iter()
        .map(|file| (file.path(&options.out_dir), "--out".to_string()))
        .collect();
    files.extend(
        repeat_runs(&options.out_dir)
            .into_iter()
            .map(|path| (path, "--out".to_string())),
    );
    if let Some(junit) = &options.junit {
        files.push((junit.clone(), "--junit".to_string()));
    }
    files
}

/// The `run.<N>.jsonl` files in `out_dir` (N >= 2: the later runs of `repeats:`), which a
/// previous run with more repeats may have left.
fn repeat_runs(out_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(out_dir) else {
        return Vec::new();
    };
    let mut runs: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(output_table::is_later_repeat_run)
        })
        .map(|entry| entry.path())
        .collect();
    runs.sort();
    runs
}

/// Refuses a run whose outputs would overwrite one of its inputs (the files it writes whatever it
/// reads: [`OverInput::Refuse`]) or go into a history folder
/// ([`output_place::refuse_history_folder`]), then removes the previous run's outputs (never a
/// file that is an input: `--run out/run.jsonl` stays). A symbolic link in the output folder is removed itself, its target
/// untouched (the run writes a regular file there), unless an input is named by the link.
pub(crate) fn prepare(options: &OutputOptions, inputs: &[Input]) -> Result<()> {
    let is_input = |path: &Path| input_at(path, inputs);
    let history = options.history.as_deref();
    if let Some(junit) = &options.junit {
        refuse_input("--junit", junit, inputs)?;
        output_place::refuse_history_folder(
            "--junit",
            junit,
            output_place::parent_dir(junit),
            history,
        )?;
    }
    output_place::refuse_history_folder("--out", &options.out_dir, &options.out_dir, history)?;
    for (path, _) in outputs(options) {
        let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if Some(&path) == options.junit.as_ref() || !link {
            continue;
        }
        let entry = entry_identity(&path);
        if !inputs
            .iter()
            .any(|input| entry_identity(&input.path) == entry)
        {
            std::fs::remove_file(&path).map_err(|e| Error::write(&path, e).named_by("--out"))?;
        }
    }
    let refused = output_table::ALL
        .iter()
        .filter(|file| file.over_input == OverInput::Refuse);
    for file in refused {
        let path = file.path(&options.out_dir);
        if let Some(input) = is_input(&path) {
            return Err(Error::Usage(format!(
                "--out {} would overwrite {} ({}): choose another output directory",
                options.out_dir.display(),
                input.named_by,
                path.display()
            )));
        }
    }
    for (path, _) in outputs(options) {
        // A link left here names an input (kept) or is `--junit`'s, whose target is the output
        // (written through, the link kept); a device or a FIFO (`--junit /dev/null`) is never
        // removed.
        let path = store::resolve_links(&path);
        if is_input(&path).is_none() && path.is_file() {
            std::fs::remove_file(&path).map_err(|e| Error::write(&path, e).named_by("--out"))?;
        }
    }
    Ok(())
}

/// The folder entry `path` names, as an absolute path: its folder resolved, its last component
/// kept as it is (a link is itself, not its target).
fn entry_identity(path: &Path) -> PathBuf {
    match path.file_name() {
        Some(name) => output_place::absolute(output_place::parent_dir(path)).join(name),
        None => output_place::absolute(path),
    }
}

/// The input that `path` is, if any.
fn input_at<'a>(path: &Path, inputs: &'a [Input]) -> Option<&'a Input> {
    inputs.iter().find(|input| same_file(path, &input.path))
}

/// Refuses an output file named by `option` that is one of `inputs` (the rule of every command
/// that writes: an output never replaces what the command reads). The error names both.
pub(crate) fn refuse_input(option: &str, path: &Path, inputs: &[Input]) -> Result<()> {
    match input_at(path, inputs) {
        Some(input) => Err(Error::Usage(format!(
            "{option} {} is {}: refusing to overwrite an input of the command ({}); choose another path",
            path.display(),
            input.named_by,
            input.path.display()
        ))),
        None => Ok(()),
    }
}

/// An input of a command: `path`, named by `named_by` in the refusal.
pub(crate) fn input(path: &Path, named_by: impl Into<String>) -> Input {
    Input {
        path: path.to_path_buf(),
        named_by: named_by.into(),
    }
}

/// The files of `folder` and of its sub-folders `depth` levels down, each named by `named_by`
/// (history records, a BEIR folder's files); none when the folder cannot be read.
pub(crate) fn files_in(folder: &Path, depth: usize, named_by: &str) -> Vec<Input> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if depth > 0 {
                files.extend(files_in(&path, depth - 1, named_by));
            }
        } else {
            files.push(input(&path, named_by));
        }
    }
    files
}

/// The records of `tier` in the history `dir` (read by `gate --history` and `report --history`).
pub(crate) fn history_inputs(dir: &Path, tier: &str) -> Vec<Input> {
    crate::history::store::tier_dir(dir, tier).map_or_else(
        |_| Vec::new(),
        |folder| files_in(&folder, 0, &format!("a history record of tier `{tier}`")),
    )
}

/// The inputs known without a config (it failed to load): the config file and `--run`.
pub(crate) fn bare_inputs(config: &Path, run: Option<&Path>) -> Vec<Input> {
    let mut inputs = vec![Input {
        path: config.to_path_buf(),
        named_by: "the config".to_string(),
    }];
    if let Some(run) = run {
        inputs.push(Input {
            path: run.to_path_buf(),
            named_by: "the run".to_string(),
        });
    }
    inputs
}

/// Removes the previous run's outputs when the run fails before its inputs are known; a
/// problem doing so is reported, not raised (the run's own error is what matters).
pub(crate) fn discard(options: &OutputOptions, inputs: &[Input]) {
    if let Err(error) = prepare(options, inputs) {
        term::warning(format!("the previous outputs were left in place: {error}"));
    }
}

/// After a run of `config` that stopped before it had results: its outcome's outputs (a JUnit
/// file with one `setup` error, a summary that says what went wrong, the step summary, an
/// annotation, the JSON error document), with a problem writing them reported on stderr rather
/// than hiding the error.
pub(crate) fn report_failure(options: &OutputOptions, config: &Path, tier: &str, error: &Error) {
    let junit = run_info(options, config);
    let outcome = RunOutcome::NotEvaluated(NotEvaluated {
        tier,
        error,
        junit: &junit,
    });
    if let Err(problem) = write_outcome(&outcome, options) {
        term::warning(problem);
    }
}

/// What junit.xml says of a run of `config` that started as `options` say. An unreadable
/// SOURCE_DATE_EPOCH (itself maybe the run's failure) must not keep its outputs from being
/// written: the time now is used then.
pub(crate) fn run_info(options: &OutputOptions, config: &Path) -> RunInfo {
    let clock = RunClock::of_run(options.started)
        .or_else(|_| RunClock::at(None, SystemTime::now(), options.started.elapsed()))
        .unwrap_or(RunClock {
            started: 0,
            millis: 0,
        });
    RunInfo {
        config: Some(config.to_path_buf()),
        clock,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::GateFormat;
    use std::time::Instant;

    fn options(out: &Path, junit: Option<PathBuf>) -> OutputOptions {
        OutputOptions {
            out_dir: out.to_path_buf(),
            default_out_dir: out.to_path_buf(),
            junit,
            format: GateFormat::Table,
            allow_judge_change: false,
            started: Instant::now(),
            history: None,
        }
    }

    #[test]
    fn an_output_over_an_input_is_refused_and_stale_outputs_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let baseline = dir.path().join("baseline.json");
        std::fs::write(&baseline, "{}").unwrap();
        let inputs = [
            Input {
                path: baseline.clone(),
                named_by: "tier `smoke`'s baseline".into(),
            },
            Input {
                path: out.join("run.jsonl"),
                named_by: "the run".into(),
            },
        ];
        let error = prepare(&options(&out, Some(baseline.clone())), &inputs).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("is tier `smoke`'s baseline: refusing to overwrite an input"),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&baseline).unwrap(), "{}");
        for name in [
            "results.json",
            "junit.xml",
            "summary.md",
            "embeddings.jsonl",
            "run.jsonl",
            "run.2.jsonl",
            "run.12.jsonl",
            "run.1.jsonl",
            "run.x.jsonl",
            "notes.txt",
        ] {
            std::fs::write(out.join(name), "old").unwrap();
        }
        prepare(&options(&out, None), &inputs).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["notes.txt", "run.1.jsonl", "run.jsonl", "run.x.jsonl"],
            "the run input and foreign files stay; the runs of earlier repeats go"
        );
    }

    #[test]
    fn an_output_file_over_the_run_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let error = prepare(
            &options(dir.path(), None),
            &[Input {
                path: dir.path().join("results.json"),
                named_by: "the run".into(),
            }],
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("would overwrite the run"),
            "{error}"
        );
    }

    #[test]
    fn every_file_a_run_writes_whatever_it_reads_is_refused_over_an_input() {
        let dir = tempfile::tempdir().unwrap();
        for file in output_table::ALL {
            let input = Input {
                path: file.path(dir.path()),
                named_by: "the run".into(),
            };
            std::fs::write(&input.path, "input").unwrap();
            let prepared = prepare(&options(dir.path(), None), std::slice::from_ref(&input));
            match file.over_input {
                OverInput::Refuse => {
                    let error = prepared.unwrap_err().to_string();
                    assert!(error.contains("would overwrite the run"), "{error}");
                }
                OverInput::Keep => prepared.unwrap(),
            }
            assert_eq!(
                std::fs::read_to_string(&input.path).unwrap(),
                "input",
                "{}",
                file.name
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_the_output_folder_is_removed_itself_unless_an_input_is_named_by_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let baseline = dir.path().join("baseline.json");
        std::fs::write(&baseline, "{}").unwrap();
        std::fs::write(dir.path().join("real-run.jsonl"), "run").unwrap();
        std::os::unix::fs::symlink("../baseline.json", out.join("summary.md")).unwrap();
        std::os::unix::fs::symlink("../real-run.jsonl", out.join("run.jsonl")).unwrap();
        let inputs = [
            input(&baseline, "tier `smoke`'s baseline"),
            input(&out.join("run.jsonl"), "the run"),
        ];
        prepare(&options(&out, None), &inputs).expect("the link is no input: no refusal");
        assert!(std::fs::symlink_metadata(out.join("summary.md")).is_err());
        assert_eq!(std::fs::read_to_string(&baseline).unwrap(), "{}");
        assert!(
            std::fs::symlink_metadata(out.join("run.jsonl"))
                .unwrap()
                .is_symlink(),
            "`--run out/run.jsonl` names the link: it stays"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("real-run.jsonl")).unwrap(),
            "run"
        );
    }

    #[test]
    fn a_failure_writes_junit_and_a_summary_that_carry_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = Error::Usage("the pipeline exited with code 1".into());
        let options = options(dir.path(), None);
        let junit = run_info(&options, Path::new("eval-config.yaml"));
        let outcome = RunOutcome::NotEvaluated(NotEvaluated {
            tier: "smoke",
            error: &error,
            junit: &junit,
        });
        write_outcome(&outcome, &options).unwrap();
        let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
        assert!(junit.contains("the pipeline exited with code 1"), "{junit}");
        assert!(junit.contains("<error"), "{junit}");
        assert!(junit.contains(" file=\"eval-config.yaml\""), "{junit}");
        if std::env::var_os("SOURCE_DATE_EPOCH").is_none() {
            assert!(!junit.contains("1970-01-01"), "{junit}");
        }
        let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
        assert!(
            summary.starts_with(
                "**⚠️ Not evaluated: the command cannot run as given** · tier\u{a0}smoke\n"
            ),
            "{summary}"
        );
        assert!(
            summary.contains("the pipeline exited with code 1"),
            "{summary}"
        );
    }
}
