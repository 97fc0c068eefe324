//! With `--format json`, every exit-2 path prints one JSON document with `status: "error"` and
//! the message: a setup error of `gate`, `gate --shard` and `merge` gives a ragate-gate/1
//! document (docs/schema/gate.schema.json) that the action's gate-report.py reads as an error.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::gate_flow::setup;
use crate::json_schema::Schema;
use crate::{Outcome, path_str, ragate_in};

/// The document on stdout of an exit-2 run: valid against the gate schema, status error, and
/// the message, which stderr printed too.
fn error_document(outcome: &Outcome, tier: &str, message: &str) -> Value {
    assert_eq!(outcome.code, 2, "{}\n{}", outcome.stdout, outcome.stderr);
    assert!(outcome.stderr.contains(message), "{}", outcome.stderr);
    let document: Value = serde_json::from_str(&outcome.stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON document ({e}): `{}`", outcome.stdout));
    let errors = Schema::published("gate.schema.json").errors(&document);
    assert!(errors.is_empty(), "{errors:?}\n{document:#}");
    assert_eq!(document["status"], "error", "{document:#}");
    assert_eq!(document["exit_code"], 2);
    assert_eq!(document["tier"], tier);
    assert!(
        document["error"].as_str().unwrap().contains(message),
        "{document:#}"
    );
    document
}

/// What `.github/scripts/gate-report.py` makes of `document` and exit code 2: its `status=`.
fn reported_status(dir: &Path, document: &Value) -> String {
    let path = dir.join("gate.json");
    std::fs::write(&path, document.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/scripts/gate-report.py");
    let output = Command::new("python3")
        .arg(&script)
        .args(["--json", path_str(&path), "--exit-code", "2"])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        !stderr.contains("::warning"),
        "the document is read as is: {stderr}"
    );
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("status="))
        .expect("a status line")
        .to_string()
}

fn json_gate(dir: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec![
        "gate",
        "--tier",
        "regression",
        "--format",
        "json",
        "--out",
        "out",
    ];
    args.extend(extra);
    ragate_in(dir, &args)
}

#[test]
fn setup_errors_of_gate_and_its_shards_print_an_error_document() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    // An input that cannot be read (the run), in a whole run and in a shard.
    let missing = "cannot read missing.jsonl";
    for extra in [
        &["--run", "missing.jsonl"][..],
        &["--run", "missing.jsonl", "--shard", "1/2"],
    ] {
        let outcome = json_gate(dir, extra);
        let document = error_document(&outcome, "regression", missing);
        assert!(
            document["error"]
                .as_str()
                .unwrap()
                .contains("No such file or directory"),
            "the causes too: {document:#}"
        );
        assert_eq!(reported_status(dir, &document), "error");
    }
    // A config that does not load.
    std::fs::write(dir.join("broken.yaml"), "version: 2\n").unwrap();
    let outcome = json_gate(dir, &["--config", "broken.yaml", "--run", "base.jsonl"]);
    error_document(&outcome, "regression", "broken.yaml");
    // A tier the config has not.
    let outcome = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regresion",
            "--format",
            "json",
            "--run",
            "base.jsonl",
        ],
    );
    error_document(&outcome, "regresion", "regresion");
    // A command line that does not parse.
    let outcome = json_gate(dir, &["--shard", "3/2"]);
    error_document(&outcome, "regression", "--shard");
    // merge of a folder that holds no shard.
    let outcome = ragate_in(
        dir,
        &[
            "merge",
            "--tier",
            "regression",
            "--format",
            "json",
            "--out",
            "merged",
            "nowhere",
        ],
    );
    error_document(&outcome, "regression", "nowhere");
    // A run without a baseline prints its own document (status no-baseline), not a second one.
    let outcome = json_gate(dir, &["--run", "base.jsonl"]);
    assert_eq!(outcome.code, 2);
    let document: Value = serde_json::from_str(&outcome.stdout).unwrap();
    assert_eq!(document["status"], "no-baseline");
    assert!(document.get("error").is_none());
}

#[test]
fn other_commands_print_a_plain_error_document() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for args in [
        &["validate", "--format", "json", "--config", "absent.yaml"][..],
        &[
            "baseline",
            "show",
            "--tier",
            "smoke",
            "--format",
            "json",
            "--config",
            "absent.yaml",
        ],
        &[
            "eval",
            "--qrels",
            "absent.jsonl",
            "--run",
            "absent.jsonl",
            "--format",
            "json",
        ],
    ] {
        let outcome = ragate_in(dir, args);
        assert_eq!(outcome.code, 2, "{args:?}");
        let document: Value = serde_json::from_str(&outcome.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: `{}`", outcome.stdout));
        assert_eq!(document["status"], "error", "{args:?}");
        assert_eq!(document["exit_code"], 2, "{args:?}");
        assert!(
            document["error"].as_str().unwrap().contains("absent"),
            "{args:?}: {document}"
        );
    }
}
