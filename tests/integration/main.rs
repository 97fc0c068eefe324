//! The one integration test binary: runs the real `ragate` executable on files.

mod action_html_report;
mod action_install;
mod action_report;
mod action_script;
mod baseline_swap;
mod cli;
mod config_positions;
mod convert;
mod drift_real;
mod empty_slices;
mod exit2_summary;
mod expected_values;
mod fail_closed_inputs;
mod faithfulness_variants;
mod gate_flow;
mod history;
mod hostile_strings;
mod html_report;
mod init;
mod input_errors;
mod json_errors;
mod json_schema;
mod judge_cache;
mod judge_change;
mod judge_eval;
mod judges;
mod junit_schema;
mod llm_extras;
#[cfg(feature = "nli")]
mod nli;
mod openai_judge;
mod output_paths;
mod pipeline;
mod reported_metrics;
mod secrets;
mod setup_checks;
mod sharding;
mod silent_passes;
mod stale_outputs;
mod statistics;
mod statistics_real;
mod sticky_comment;
mod tier_queries;
mod trec_streaming;
mod untrusted_lengths;
mod verdicts;

use std::path::{Path, PathBuf};
use std::process::Command;

/// What one run of the binary produced.
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// `ragate gate --tier smoke --run run.jsonl --out out`: the arguments of most judge tests.
pub const SMOKE_GATE: [&str; 7] = [
    "gate",
    "--tier",
    "smoke",
    "--run",
    "run.jsonl",
    "--out",
    "out",
];

pub fn ragate(args: &[&str]) -> Outcome {
    ragate_in(Path::new("."), args)
}

/// Runs the binary in `dir` with the CI-related environment removed (CI sets CI=true, which
/// makes `baseline accept` refuse, and GITHUB_* variables, which add annotations), and every
/// `RAGATE_*` variable of the shell running the tests.
pub fn ragate_in(dir: &Path, args: &[&str]) -> Outcome {
    ragate_env(dir, args, &[])
}

/// [`ragate_in`] with extra environment variables.
pub fn ragate_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ragate"));
    // Nothing ragate reads from the environment leaks in from the shell that runs the tests.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("RAGATE_") {
            command.env_remove(key);
        }
    }
    // Colour follows the test, not the shell: no NO_COLOR, FORCE_COLOR or CLICOLOR* from it.
    for key in ["NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE"] {
        command.env_remove(key);
    }
    let output = command
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .envs(env.iter().copied())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the ragate binary runs");
    Outcome {
        code: output
            .status
            .code()
            .expect("exited normally, not by a signal"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// `ragate baseline accept --tier TIER --from FROM` in `dir` (with `env`), which must succeed.
pub fn accept_baseline(dir: &Path, tier: &str, from: &str, env: &[(&str, &str)]) -> Outcome {
    let outcome = ragate_env(
        dir,
        &["baseline", "accept", "--tier", tier, "--from", from],
        env,
    );
    assert_eq!(outcome.code, 0, "baseline accept: {}", outcome.stderr);
    outcome
}

pub fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(relative)
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}
