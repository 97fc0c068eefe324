//! The one integration test binary: runs the real `ragate` executable on files.

mod action_html_report;
mod action_install;
mod action_report;
mod action_script;
mod architecture;
mod baseline_swap;
mod cli;
mod cli_contract;
mod config_hints;
mod config_positions;
mod convert;
mod drift_real;
mod empty_slices;
mod error_text;
mod exit2_summary;
mod expected_values;
mod fail_closed_inputs;
mod faithfulness_variants;
mod first_week;
mod gate_flow;
mod history;
mod hostile_strings;
mod html_report;
mod incomplete_judgments;
mod init;
mod input_errors;
mod json_errors;
mod json_schema;
mod judge_cache;
mod judge_change;
mod judge_eval;
mod judges;
mod junit_schema;
mod lexical3;
mod likely_causes;
mod llm_extras;
mod must_pass;
#[cfg(feature = "nli")]
mod nli;
mod one_decision;
mod openai_judge;
mod output_paths;
mod output_pipeline;
mod pipeline;
mod plan_budget;
mod probes;
mod processes;
mod readme_quotes;
mod relevance_conventions;
mod reported_metrics;
mod run_builder;
mod secret_forms;
mod secrets;
mod setup_checks;
mod sharding;
mod silent_passes;
mod small_slices;
mod stale_outputs;
mod statistics;
mod statistics_real;
mod sticky_comment;
mod synth;
mod test_set;
mod tier_lists;
mod tier_queries;
mod trec_eval_format;
mod trec_eval_suite;
mod trec_streaming;
mod untrusted_lengths;
mod verdicts;

use std::path::{Path, PathBuf};
use std::process::Command;

pub use run_builder::Ragate;

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

/// Runs the binary in `dir` in a cleared environment ([`clean_command`]).
pub fn ragate_in(dir: &Path, args: &[&str]) -> Outcome {
    ragate_env(dir, args, &[])
}

/// [`ragate_in`] with extra environment variables.
pub fn ragate_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let output = clean_command(env!("CARGO_BIN_EXE_ragate"))
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

/// What a program the tests run keeps of the environment of the shell running the tests: where
/// programs and temporary files are, the locale, the toolchain's variables and the ONNX Runtime
/// the `nli` tests load. Everything else ragate reads (`SOURCE_DATE_EPOCH`, `CI`, `GITHUB_*`,
/// `RAGATE_*`, `NO_COLOR`/`FORCE_COLOR`/`CLICOLOR*`, a `${VAR}` of a config, a secret-looking
/// variable whose value would be redacted from the output) comes from the test or not at all.
const KEPT_ENVIRONMENT: [&str; 8] = [
    "PATH",
    "HOME",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "SYSTEMROOT",
    "ORT_DYLIB_PATH",
];

/// `program` with the environment cleared but for [`KEPT_ENVIRONMENT`] and the toolchain's
/// `CARGO*`/`RUSTUP*`/`RUSTC*` variables.
pub fn clean_command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    command.env_clear();
    for (key, value) in std::env::vars_os() {
        let name = key.to_string_lossy();
        let toolchain = ["CARGO", "RUSTUP", "RUSTC"]
            .iter()
            .any(|prefix| name.starts_with(prefix));
        if toolchain || KEPT_ENVIRONMENT.contains(&name.as_ref()) {
            command.env(&key, value);
        }
    }
    command
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
