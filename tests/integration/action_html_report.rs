//! The composite action's HTML report (`action.yml`, steps `html` and `report-link`) and its
//! `history` input, run by bash as the runner runs them: `ragate report` after every gate that
//! wrote results.json, whatever the verdict; a report that cannot be written is a warning that
//! leaves the gate's exit code to the last step; `--history` reaches both the gate and the report.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::action_script::{output_value, run_step};
use crate::path_str;

/// `dir/bin/ragate`: a stand-in that appends its arguments (one a line, then `---`) to
/// $ARGV_FILE; as `report` it writes a page to its --out file and exits 0, as anything else it
/// exits 1 (a regression).
fn stand_in(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = r#"#!/usr/bin/env bash
printf '%s\n' "$@" --- >> "$ARGV_FILE"
if [ "$1" = report ]; then
  while [ $# -gt 0 ]; do
    if [ "$1" = --out ]; then echo '<!DOCTYPE html><title>stand-in</title>' > "$2"; fi
    shift
  done
  exit 0
fi
exit 1
"#;
    std::fs::write(bin.join("ragate"), script).unwrap();
    std::fs::set_permissions(bin.join("ragate"), std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// `dir/bin/ragate`: the real binary.
fn real_ragate(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ragate"), bin.join("ragate")).unwrap();
    bin
}

/// The gate step's inputs as its env names them (regression tier of gate_flow's setup).
fn gate_inputs<'a>(outputs: &'a Path, args: &'a str, history: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("GITHUB_OUTPUT", path_str(outputs)),
        ("RAGATE_COMMAND", "gate"),
        ("RAGATE_TIER", "regression"),
        ("RAGATE_CONFIG", "eval-config.yaml"),
        ("RAGATE_JUNIT", ""),
        ("RAGATE_OUT", "out"),
        ("RAGATE_ARGS", args),
        ("RAGATE_HISTORY", history),
    ]
}

/// Runs the `html` step with the gate step's outputs (read from `outputs`), appending its own;
/// returns (exit code, stdout, stderr).
fn html_step(
    dir: &Path,
    bin: &Path,
    outputs: &Path,
    extra: &[(&str, &str)],
) -> (i32, String, String) {
    let gate = std::fs::read_to_string(outputs).unwrap();
    let results = output_value(&gate, "results-path").unwrap().to_string();
    let history = output_value(&gate, "history").unwrap_or("").to_string();
    let mut env = vec![
        ("GITHUB_OUTPUT", path_str(outputs)),
        ("RAGATE_TIER", "regression"),
        ("RAGATE_CONFIG", "eval-config.yaml"),
        ("RAGATE_RESULTS", results.as_str()),
        ("RAGATE_HISTORY", history.as_str()),
    ];
    env.extend_from_slice(extra);
    run_step(dir, "html", bin, &env)
}

/// The stand-in's calls, each a list of arguments.
fn calls(argv_file: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(argv_file).unwrap_or_default();
    text.split_terminator("---\n")
        .map(|call| call.lines().map(str::to_string).collect())
        .collect()
}

#[test]
fn the_history_input_reaches_the_gate_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let bin = stand_in(dir);
    let argv = dir.join("argv");
    let outputs = dir.join("github-output");
    let mut env = gate_inputs(&outputs, "--allow-judge-change", "runs history");
    env.push(("ARGV_FILE", path_str(&argv)));
    let (code, _, stderr) = run_step(dir, "gate", &bin, &env);
    assert_eq!(code, 0, "{stderr}");
    std::fs::write(dir.join("out/results.json"), "{}").unwrap();
    let (code, stdout, stderr) = html_step(dir, &bin, &outputs, &[("ARGV_FILE", path_str(&argv))]);
    assert_eq!(code, 0, "{stdout}{stderr}");

    let calls = calls(&argv);
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(
        calls[0][calls[0].len() - 3..],
        ["--history", "runs history", "--allow-judge-change"],
        "a folder with a space stays one argument: {calls:?}"
    );
    assert_eq!(
        calls[1],
        [
            "report",
            "--tier",
            "regression",
            "--config",
            "eval-config.yaml",
            "--from",
            "out",
            "--out",
            "out/report.html",
            "--history",
            "runs history"
        ]
    );
    let outputs = std::fs::read_to_string(&outputs).unwrap();
    assert_eq!(output_value(&outputs, "history"), Some("runs history"));
    assert_eq!(
        output_value(&outputs, "report-path"),
        Some("out/report.html")
    );
    let absolute = dir.canonicalize().unwrap().join("out/report.html");
    assert_eq!(
        output_value(&outputs, "report-file"),
        Some(path_str(&absolute)),
        "the upload step takes the report by absolute path (any working-directory)"
    );
}

#[test]
fn a_history_in_args_reaches_the_report_and_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let bin = stand_in(dir);
    let argv = dir.join("argv");
    let outputs = dir.join("github-output");
    let mut env = gate_inputs(&outputs, "--history=nightly/runs", "");
    env.push(("ARGV_FILE", path_str(&argv)));
    let (code, _, stderr) = run_step(dir, "gate", &bin, &env);
    assert_eq!(code, 0, "{stderr}");
    let gate_argv = &calls(&argv)[0];
    assert_eq!(
        gate_argv
            .iter()
            .filter(|a| a.starts_with("--history"))
            .collect::<Vec<_>>(),
        ["--history=nightly/runs"],
        "passed on once, as given: {gate_argv:?}"
    );
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert_eq!(output_value(&written, "history"), Some("nightly/runs"));

    std::fs::remove_file(&argv).unwrap();
    let mut env = gate_inputs(&outputs, "--history other", "runs");
    env.push(("ARGV_FILE", path_str(&argv)));
    let (code, stdout, _) = run_step(dir, "gate", &bin, &env);
    assert_eq!(code, 2);
    assert!(
        stdout.contains(
            "give the history folder once, as the 'history' input or as --history in 'args'"
        ),
        "{stdout}"
    );
    assert!(calls(&argv).is_empty(), "ragate did not run");
}

#[test]
fn every_gate_that_wrote_results_gets_its_report_and_a_report_failure_is_only_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    crate::gate_flow::setup(dir);
    let bin = real_ragate(dir);
    let outputs = dir.join("github-output");

    // The tier's first run: no baseline, the gate exits 2, and the page says so.
    let (code, _, stderr) = run_step(
        dir,
        "gate",
        &bin,
        &gate_inputs(&outputs, "--run base.jsonl", ""),
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = html_step(dir, &bin, &outputs, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("::warning"), "{stdout}");
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert_eq!(output_value(&written, "exit-code"), Some("2"));
    assert_eq!(
        output_value(&written, "report-path"),
        Some("out/report.html")
    );
    let page = std::fs::read_to_string(dir.join("out/report.html")).unwrap();
    assert!(
        page.to_ascii_lowercase().starts_with("<!doctype html>"),
        "{}",
        &page[..80]
    );

    // A regression: the report is written all the same.
    crate::accept_baseline(dir, "regression", "out/results.json", &[]);
    std::fs::remove_file(&outputs).unwrap();
    let (code, _, stderr) = run_step(
        dir,
        "gate",
        &bin,
        &gate_inputs(&outputs, "--run regressed.jsonl", ""),
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = html_step(dir, &bin, &outputs, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("::warning"), "{stdout}");
    let page = std::fs::read_to_string(dir.join("out/report.html")).unwrap();
    assert!(page.contains("id=\"checks\""));
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert_eq!(output_value(&written, "exit-code"), Some("1"));
    assert_eq!(
        output_value(&written, "report-path"),
        Some("out/report.html")
    );

    // A report that cannot be written (here: a history folder with a file that is no record):
    // the step warns with ragate's reason, exits 0, and leaves no report, not even the previous
    // one; the gate's exit code still fails the action's last step.
    std::fs::create_dir_all(dir.join("hist/regression")).unwrap();
    std::fs::write(dir.join("hist/regression/notes.json"), "not a record").unwrap();
    std::fs::remove_file(&outputs).unwrap();
    let (code, _, stderr) = run_step(
        dir,
        "gate",
        &bin,
        &gate_inputs(&outputs, "--run regressed.jsonl", ""),
    );
    assert_eq!(code, 0, "{stderr}");
    let stale = std::fs::read_to_string(dir.join("out/report.html")).unwrap();
    assert!(
        stale.contains("id=\"checks\""),
        "the previous run's page is there"
    );
    let (code, stdout, stderr) = html_step(dir, &bin, &outputs, &[("RAGATE_HISTORY", "hist")]);
    assert_eq!(
        code, 0,
        "a report failure never fails the step: {stdout}{stderr}"
    );
    let warning = stdout
        .lines()
        .find(|l| l.starts_with("::warning title=ragate report::"))
        .unwrap_or_else(|| panic!("a warning: {stdout}"));
    assert!(
        warning.contains("no HTML report (ragate report exited 2: error: ")
            && warning.contains("notes.json")
            && warning.ends_with("the gate's result stands"),
        "{warning}"
    );
    assert!(
        !dir.join("out/report.html").exists(),
        "the stale report is gone"
    );
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert_eq!(output_value(&written, "report-path"), None, "{written}");

    let env = [("RAGATE_TIER", "regression"), ("RAGATE_EXIT", "1")];
    let (code, stdout, _) = run_step(dir, "verdict", &bin, &env);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("regressed (exit 1)"), "{stdout}");
}

#[test]
fn no_results_no_report() {
    // A shard writes shard.json, not results.json: nothing to report, nothing to warn about.
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let bin = stand_in(dir);
    let argv = dir.join("argv");
    let outputs = dir.join("github-output");
    std::fs::write(&outputs, "results-path=shard-out/2/results.json\n").unwrap();
    let (code, stdout, stderr) = html_step(dir, &bin, &outputs, &[("ARGV_FILE", path_str(&argv))]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("no HTML report"), "{stdout}");
    assert!(!stdout.contains("::warning"), "{stdout}");
    assert!(calls(&argv).is_empty(), "ragate report did not run");
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert_eq!(output_value(&written, "report-path"), None);
}

#[test]
fn the_job_summary_links_the_uploaded_report() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let summary = dir.join("step-summary.md");
    std::fs::write(&summary, "## ragate `smoke`: pass\n").unwrap();
    let url = "https://github.com/o/r/actions/runs/7/artifacts/9";
    let env = [
        ("GITHUB_STEP_SUMMARY", path_str(&summary)),
        ("RAGATE_TIER", "smoke"),
        ("RAGATE_REPORT_URL", url),
    ];
    let (code, stdout, stderr) = run_step(dir, "report-link", Path::new("/nonexistent"), &env);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(url), "{stdout}");
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("## ragate `smoke`: pass\n"),
        "appended: {text}"
    );
    assert!(
        text.contains(&format!(
            "\n[HTML report]({url}): the artifact `ragate-report-smoke`"
        )),
        "{text}"
    );
}
