//! The composite action's gate step (`action.yml`, step `gate`), run by bash as the runner runs it
//! (`bash --noprofile --norc -eo pipefail`), with a stand-in `ragate` on PATH that records its
//! arguments: what the action passes to ragate for a given set of inputs.

use std::path::Path;
use std::process::Command;

use crate::path_str;

/// The `run:` script of the action's step with this `id`.
pub(crate) fn step_script(id: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml");
    let action: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let steps = action["runs"]["steps"]
        .as_sequence()
        .expect("a composite action");
    let step = steps
        .iter()
        .find(|s| s["id"].as_str() == Some(id))
        .unwrap_or_else(|| panic!("a step with id: {id}"));
    step["run"].as_str().expect("a run script").to_string()
}

/// Runs the action's step `id` in `dir` as the runner does, with a clean environment plus `env`
/// (PATH is `path_first` then the test's PATH); returns the exit code, stdout and stderr.
pub(crate) fn run_step(
    dir: &Path,
    id: &str,
    path_first: &Path,
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let path = format!(
        "{}:{}",
        path_first.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .args([
            "--noprofile",
            "--norc",
            "-eo",
            "pipefail",
            "-c",
            &step_script(id),
        ])
        .env_clear()
        .env("PATH", path)
        .env("GITHUB_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .expect("bash runs");
    (
        output.status.code().expect("exited"),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Runs the gate step with the inputs as its env names them; returns (exit code, the stand-in's
/// argv, one argument a line, and the step's outputs).
fn run_gate_step(dir: &Path, inputs: &[(&str, &str)]) -> (i32, String, String) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let stand_in = bin.join("ragate");
    std::fs::write(
        &stand_in,
        "#!/usr/bin/env bash\nprintf '%s\\n' \"$@\" > \"$ARGV_FILE\"\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let outputs = dir.join("github-output");
    let argv = dir.join("argv");
    let mut env = vec![
        ("ARGV_FILE", path_str(&argv)),
        ("GITHUB_OUTPUT", path_str(&outputs)),
    ];
    env.extend_from_slice(inputs);
    let (code, _, stderr) = run_step(dir, "gate", &bin, &env);
    eprintln!("{stderr}");
    (
        code,
        std::fs::read_to_string(&argv).unwrap_or_default(),
        std::fs::read_to_string(&outputs).unwrap_or_default(),
    )
}

const INPUTS: [(&str, &str); 5] = [
    ("RAGATE_COMMAND", "gate"),
    ("RAGATE_TIER", "smoke"),
    ("RAGATE_CONFIG", "eval-config.yaml"),
    ("RAGATE_JUNIT", ""),
    ("RAGATE_OUT", ""),
];

#[test]
fn a_multi_line_args_input_keeps_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = INPUTS.to_vec();
    inputs.push((
        "RAGATE_ARGS",
        "--shard 2/4\n--allow-judge-change\n  --out  gate-out \n",
    ));
    let (code, argv, outputs) = run_gate_step(dir.path(), &inputs);
    assert_eq!(code, 0, "the step records ragate's exit code and exits 0");
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        [
            "gate",
            "--tier",
            "smoke",
            "--config",
            "eval-config.yaml",
            "--format",
            "json",
            "--shard",
            "2/4",
            "--allow-judge-change",
            "--out",
            "gate-out",
        ]
    );
    assert!(outputs.contains("exit-code=1\n"), "{outputs}");
    assert!(
        outputs.contains("summary-path=gate-out/summary.md\n"),
        "{outputs}"
    );
    let absolute = dir
        .path()
        .canonicalize()
        .unwrap()
        .join("gate-out/summary.md");
    assert_eq!(
        output_value(&outputs, "summary-file"),
        Some(path_str(&absolute)),
        "the comment step reads the summary by absolute path (any working-directory)"
    );
}

#[test]
fn args_are_words_not_shell_code() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = INPUTS.to_vec();
    inputs.push(("RAGATE_ARGS", "--run *.jsonl $(touch pwned) ;echo"));
    let (_, argv, _) = run_gate_step(dir.path(), &inputs);
    assert_eq!(
        argv.lines().skip(7).collect::<Vec<_>>(),
        ["--run", "*.jsonl", "$(touch", "pwned)", ";echo"]
    );
    assert!(!dir.path().join("pwned").exists());
}

#[test]
fn a_format_in_args_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = INPUTS.to_vec();
    inputs.push(("RAGATE_ARGS", "--format table"));
    let (code, argv, _) = run_gate_step(dir.path(), &inputs);
    assert_eq!(
        code, 2,
        "the action's own --format json must not be overridden"
    );
    assert!(argv.is_empty(), "ragate did not run: {argv}");
}

/// The value of `key` in the `key=value` lines of a $GITHUB_OUTPUT file.
pub(crate) fn output_value<'a>(outputs: &'a str, key: &str) -> Option<&'a str> {
    outputs
        .lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// The gate step then the report step, with the real ragate binary, in `dir` (regression tier
/// of gate_flow's setup), gating `run`; returns the two steps' $GITHUB_OUTPUT.
fn real_gate_then_report(dir: &Path, run: &str, mode: &str) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ragate"), bin.join("ragate")).unwrap();
    let outputs = dir.join("github-output");
    let args = format!("--run {run}");
    let mut env = vec![
        ("GITHUB_OUTPUT", path_str(&outputs)),
        ("RAGATE_COMMAND", "gate"),
        ("RAGATE_TIER", "regression"),
        ("RAGATE_CONFIG", "eval-config.yaml"),
        ("RAGATE_JUNIT", ""),
        ("RAGATE_OUT", "out"),
        ("RAGATE_ARGS", args.as_str()),
    ];
    let (code, _, stderr) = run_step(dir, "gate", &bin, &env);
    assert_eq!(code, 0, "{stderr}");
    let gate_outputs = std::fs::read_to_string(&outputs).unwrap();
    let exit = output_value(&gate_outputs, "exit-code")
        .unwrap()
        .to_string();
    let json = output_value(&gate_outputs, "json-path")
        .unwrap()
        .to_string();
    env.extend([
        ("RAGATE_EXIT", exit.as_str()),
        ("RAGATE_JSON", json.as_str()),
        ("RAGATE_COMMENT_MODE", mode),
        ("RAGATE_COMMENT_EXISTS", "false"),
    ]);
    let (code, _, stderr) = run_step(dir, "report", &bin, &env);
    assert_eq!(code, 0, "{stderr}");
    std::fs::read_to_string(&outputs).unwrap()
}

#[test]
fn the_action_outputs_come_from_the_real_gate_json() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    crate::gate_flow::setup(dir);

    let first = real_gate_then_report(dir, "base.jsonl", "on-change");
    assert_eq!(output_value(&first, "exit-code"), Some("2"), "{first}");
    assert_eq!(
        output_value(&first, "status"),
        Some("no-baseline"),
        "{first}"
    );
    assert_eq!(output_value(&first, "comment"), Some("post"), "{first}");
    assert_eq!(
        output_value(&first, "results-path"),
        Some("out/results.json")
    );

    crate::accept_baseline(dir, "regression", "out/results.json", &[]);
    std::fs::remove_file(dir.join("github-output")).unwrap();
    std::fs::remove_file(dir.join("bin/ragate")).unwrap();
    let regressed = real_gate_then_report(dir, "regressed.jsonl", "on-failure");
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/gate.json")).unwrap())
            .expect("stdout of ragate is one JSON document in <out>/gate.json");
    let failing = document["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail" || c["status"] == "error")
        .count();
    assert!(failing > 0, "{document:#}");
    assert_eq!(output_value(&regressed, "status"), Some("regression"));
    assert_eq!(
        output_value(&regressed, "failed-checks"),
        Some(failing.to_string().as_str()),
        "{regressed}"
    );
    assert_eq!(output_value(&regressed, "comment"), Some("post"));
}

#[test]
fn a_prebuilt_binary_input_is_put_on_path_under_its_own_name() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir_all(dir.join("ragate-bin")).unwrap();
    // As an artifact download leaves it: not executable, and here under another name.
    std::fs::write(
        dir.join("ragate-bin/ragate-linux"),
        "#!/usr/bin/env bash\necho 'ragate 0.1.0'\n",
    )
    .unwrap();
    let github_path = dir.join("github-path");
    let env = [
        ("GITHUB_PATH", path_str(&github_path)),
        ("RAGATE_BINARY", "ragate-bin/ragate-linux"),
        ("RAGATE_ROOT", ""),
    ];
    let (code, stdout, stderr) = run_step(dir, "path", Path::new("/nonexistent"), &env);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "ragate 0.1.0\n");
    let added = std::fs::read_to_string(&github_path).unwrap();
    assert_eq!(
        added.trim(),
        path_str(&dir.join("ragate-bin").canonicalize().unwrap())
    );
    assert!(dir.join("ragate-bin/ragate").exists());

    let env = [
        ("GITHUB_PATH", path_str(&github_path)),
        ("RAGATE_BINARY", "missing/ragate"),
        ("RAGATE_ROOT", ""),
    ];
    let (code, stdout, _) = run_step(dir, "path", Path::new("/nonexistent"), &env);
    assert_eq!(code, 2);
    assert!(stdout.contains("is not a file"), "{stdout}");
}
