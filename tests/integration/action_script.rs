//! The composite action's gate step (`action.yml`, step `gate`), run by bash as the runner runs it
//! (`bash --noprofile --norc -eo pipefail`), with a stand-in `ragate` on PATH that records its
//! arguments: what the action passes to ragate for a given set of inputs.

use std::path::Path;
use std::process::Command;

/// The `run:` script of the step whose `id` is `gate`.
fn gate_step_script() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml");
    let action: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let steps = action["runs"]["steps"]
        .as_sequence()
        .expect("a composite action");
    let step = steps
        .iter()
        .find(|s| s["id"].as_str() == Some("gate"))
        .expect("a step with id: gate");
    step["run"].as_str().expect("a run script").to_string()
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
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = Command::new("bash")
        .args([
            "--noprofile",
            "--norc",
            "-eo",
            "pipefail",
            "-c",
            &gate_step_script(),
        ])
        .env_clear()
        .env("PATH", path)
        .env("ARGV_FILE", &argv)
        .env("GITHUB_OUTPUT", &outputs)
        .envs(inputs.iter().copied())
        .current_dir(dir)
        .status()
        .expect("bash runs");
    (
        status.code().expect("exited"),
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
}

#[test]
fn args_are_words_not_shell_code() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = INPUTS.to_vec();
    inputs.push(("RAGATE_ARGS", "--run *.jsonl $(touch pwned) ;echo"));
    let (_, argv, _) = run_gate_step(dir.path(), &inputs);
    assert_eq!(
        argv.lines().skip(5).collect::<Vec<_>>(),
        ["--run", "*.jsonl", "$(touch", "pwned)", ";echo"]
    );
    assert!(!dir.path().join("pwned").exists());
}
