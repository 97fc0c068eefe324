//! `ragate init`: the scaffold gates end to end (no baseline, accept, pass) for every pipeline
//! adapter, validates right away, and never overwrites a file.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::{Outcome, Ragate, ragate_env, ragate_in};

/// The files `ragate init` writes, relative to its folder.
const SCAFFOLD: [&str; 7] = [
    "eval-config.yaml",
    "eval/qrels.jsonl",
    "eval/corpus.jsonl",
    "eval/pipeline.py",
    "baselines/.gitkeep",
    ".github/workflows/rag-gate.yml",
    ".ragate/.gitignore",
];

/// A fresh `git init` repository in a temporary folder.
fn fresh_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("git")
        .args(["init", "--quiet"])
        .current_dir(dir.path())
        .status()
        .expect("git runs");
    assert!(status.success());
    dir
}

fn init(dir: &Path, pipeline: &str) -> Outcome {
    let outcome = ragate_in(dir, &["init", "--pipeline", pipeline]);
    assert_eq!(outcome.code, 0, "init: {}", outcome.stderr);
    outcome
}

/// The baseline cycle: gate (exit 2 with the measured metrics and the accept command), accept,
/// gate (exit 0).
fn baseline_cycle(dir: &Path, env: &[(&str, &str)]) {
    Ragate::new(["gate", "--tier", "smoke"])
        .envs(env)
        .status(2)
        // The measured metrics.
        .stdout_has("all                          recall@3 ")
        .stdout_has("class=paraphrased")
        .stdout_has("faithfulness")
        .stderr_has("run `ragate baseline accept --tier smoke`")
        .file_has(".ragate/out/smoke/summary.md", "No baseline yet")
        .file_has(
            ".ragate/out/smoke/summary.md",
            "ragate baseline accept --tier smoke",
        )
        .run_in(dir);

    let accepted = ragate_env(dir, &["baseline", "accept", "--tier", "smoke"], env);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    assert!(dir.join("baselines/smoke.json").is_file());

    let second = Ragate::new(["gate", "--tier", "smoke"])
        .envs(env)
        .status(0)
        .stdout_has("0 failed")
        .run_in(dir);
    assert!(!second.stdout.contains(" 0 checks"), "{}", second.stdout);
}

#[test]
fn init_then_gate_fails_without_a_baseline_and_passes_after_accept() {
    let repo = fresh_repo();
    let dir = repo.path();
    let created = init(dir, "python");
    for file in SCAFFOLD {
        assert!(dir.join(file).is_file(), "{file} missing");
        assert!(
            created.stdout.contains(&format!("  {file}\n")),
            "{}",
            created.stdout
        );
    }
    let gate_at = created.stdout.find("ragate gate --tier smoke").unwrap();
    let accept_at = created
        .stdout
        .find("ragate baseline accept --tier smoke")
        .unwrap();
    assert!(gate_at < accept_at, "{}", created.stdout);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("eval/pipeline.py"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "eval/pipeline.py is executable");
    }

    let validated = ragate_in(dir, &["validate"]);
    assert_eq!(validated.code, 0, "{}", validated.stderr);
    assert!(
        validated
            .stderr
            .contains("warning: tier `smoke`: no baseline yet"),
        "{}",
        validated.stderr
    );

    baseline_cycle(dir, &[]);
    // From a subfolder too: the config is found upward, paths stay relative to it.
    let nested = dir.join("eval");
    let below = ragate_in(&nested, &["gate", "--tier", "smoke"]);
    assert_eq!(below.code, 0, "{}", below.stderr);
}

#[test]
fn init_refuses_to_overwrite_and_names_every_file_in_the_way() {
    let repo = fresh_repo();
    let dir = repo.path();
    init(dir, "python");
    let again = ragate_in(dir, &["init"]);
    assert_eq!(again.code, 2, "{}", again.stdout);
    assert!(again.stdout.is_empty(), "{}", again.stdout);
    for file in SCAFFOLD {
        assert!(again.stderr.contains(file), "{file}: {}", again.stderr);
    }
    assert!(
        again
            .stderr
            .contains("overwrites nothing, so it wrote nothing"),
        "{}",
        again.stderr
    );

    // One file in the way: it is named, kept as it was, and nothing else is written.
    let other = fresh_repo();
    let dir = other.path();
    std::fs::create_dir(dir.join("eval")).unwrap();
    std::fs::write(dir.join("eval/qrels.jsonl"), "mine\n").unwrap();
    let refused = ragate_in(dir, &["init", "--pipeline", "command"]);
    assert_eq!(refused.code, 2);
    assert!(
        refused
            .stderr
            .starts_with("error: eval/qrels.jsonl: already exists: "),
        "{}",
        refused.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("eval/qrels.jsonl")).unwrap(),
        "mine\n"
    );
    let mut left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, [".git", "eval"]);
    assert_eq!(std::fs::read_dir(dir.join("eval")).unwrap().count(), 1);
}

#[test]
fn every_pipeline_variant_validates() {
    let repo = fresh_repo();
    for pipeline in ["python", "command", "http", "run-file"] {
        // --dir: a folder that does not exist yet is created.
        let folder = repo.path().join(format!("scaffold-{pipeline}"));
        let outcome = ragate_in(
            repo.path(),
            &[
                "init",
                "--pipeline",
                pipeline,
                "--dir",
                folder.to_str().unwrap(),
            ],
        );
        assert_eq!(outcome.code, 0, "{pipeline}: {}", outcome.stderr);
        assert!(
            outcome.stdout.contains(&format!("cd {}", folder.display())),
            "{}",
            outcome.stdout
        );
        let validated = ragate_in(&folder, &["validate"]);
        assert_eq!(validated.code, 0, "{pipeline}: {}", validated.stdout);
        assert!(
            validated.stdout.contains("0 errors"),
            "{pipeline}: {}",
            validated.stdout
        );
        let config = std::fs::read_to_string(folder.join("eval-config.yaml")).unwrap();
        let adapter = match pipeline {
            "python" | "command" => "  command: [\"python3\", \"eval/pipeline.py\"",
            "http" => "  http:\n",
            _ => "  run_file: \"runs/{tier}.jsonl\"",
        };
        assert!(config.contains(adapter), "{pipeline}: {config}");
    }
}

#[test]
fn the_command_variant_gates_end_to_end() {
    let repo = fresh_repo();
    init(repo.path(), "command");
    baseline_cycle(repo.path(), &[("RAGATE_TOP_K", "4")]);
}

#[test]
fn the_run_file_variant_gates_a_precomputed_run() {
    let repo = fresh_repo();
    let dir = repo.path();
    let created = init(dir, "run-file");
    assert!(
        created.stdout.contains("> runs/smoke.jsonl"),
        "{}",
        created.stdout
    );
    let missing = ragate_in(dir, &["gate", "--tier", "smoke"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("runs/smoke.jsonl"),
        "{}",
        missing.stderr
    );
    // The stand-in reads the qrels lines as its requests (they carry `qid` and `query`).
    std::fs::create_dir(dir.join("runs")).unwrap();
    let run = Command::new("python3")
        .arg("eval/pipeline.py")
        .current_dir(dir)
        .stdin(std::fs::File::open(dir.join("eval/qrels.jsonl")).unwrap())
        .output()
        .expect("python3 runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::write(dir.join("runs/smoke.jsonl"), run.stdout).unwrap();
    baseline_cycle(dir, &[]);
}

/// `python3 eval/pipeline.py --serve 0` in `dir`; killed on drop.
struct Served(Child, u16);

impl Served {
    fn start(dir: &Path) -> Self {
        let mut child = Command::new("python3")
            .args(["eval/pipeline.py", "--serve", "0"])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "pipeline.py: serving on http://127.0.0.1:41234/query"
        let port = line
            .trim_end()
            .strip_suffix("/query")
            .and_then(|rest| rest.rsplit(':').next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Served(child, port)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_http_variant_gates_against_the_served_stand_in() {
    let repo = fresh_repo();
    let dir = repo.path();
    init(dir, "http");
    let served = Served::start(dir);
    let url = format!("http://127.0.0.1:{}/query", served.1);
    baseline_cycle(dir, &[("RAGATE_PIPELINE_URL", &url)]);
}
