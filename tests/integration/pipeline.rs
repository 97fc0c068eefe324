//! The pipeline adapters end to end: a real subprocess speaking the command protocol (and
//! misbehaving in every way the protocol forbids), and a real HTTP server on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::gate_flow::setup;
use crate::{Ragate, accept_baseline, fixture, path_str, ragate_env, ragate_in};

const CONFIG: &str = r#"version: 1
metrics: [recall@5, mrr, ndcg@10]
slices: [class]
pipeline:
  PIPELINE
tiers:
  regression: { qrels: qrels.jsonl, baseline: baselines/regression.json }
gate:
  decision: significant
  min_queries: 5
  seed: 7
  rules:
    - { metric: recall@5, max_drop: 0.02 }
"#;

/// Gating latency makes it a metric stored in results.
const LATENCY_RULE: &str = "    - { metric: latency_ms, max_increase_pct: 100000 }\n";

fn write_config(dir: &Path, pipeline: &str, gate_latency: bool) {
    let mut config = CONFIG.replace("PIPELINE", pipeline);
    if gate_latency {
        config.push_str(LATENCY_RULE);
    }
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
}

// Block style: before expansion an unquoted `${...}` is not valid YAML inside `{...}`.
const COMMAND: &str = r#"command: [python3, "${REPLAY}", base.jsonl, "${MODE:-ok}"]
  timeout_s: ${TIMEOUT:-60}"#;

/// The gate_flow data (120 queries, three classes) with a baseline accepted from `base.jsonl`.
fn setup_with_baseline(dir: &Path) {
    setup(dir);
    write_config(dir, "run_file: base.jsonl", false);
    Ragate::new(["gate", "--tier", "regression", "--out", "ref"])
        .env("REPLAY", &replay())
        .status(2)
        .run_in(dir); // no baseline yet
    accept(dir, "ref");
}

/// The replaying pipeline the configs run as `${REPLAY}`.
fn replay() -> String {
    path_str(&fixture("pipeline/replay_pipeline.py")).to_string()
}

fn accept(dir: &Path, out: &str) {
    let from = format!("{out}/results.json");
    accept_baseline(dir, "regression", &from, &[("REPLAY", &replay())]);
}

#[test]
fn a_command_pipeline_is_run_and_its_run_saved() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    write_config(dir, COMMAND, true);
    Ragate::new(["gate", "--tier", "regression", "--out", "piped"])
        .envs(&[("MODE", "reverse")])
        .env("REPLAY", &replay())
        .status(2)
        .run_in(dir); // no baseline yet
    accept(dir, "piped");

    Ragate::new(["gate", "--tier", "regression", "--out", "again"])
        .env("REPLAY", &replay())
        .status(0)
        .run_in(dir);
    let run = std::fs::read_to_string(dir.join("again/run.jsonl")).unwrap();
    let lines: Vec<Value> = run
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 120);
    let qids: Vec<&str> = lines.iter().map(|l| l["qid"].as_str().unwrap()).collect();
    let mut sorted = qids.clone();
    sorted.sort_unstable();
    assert_eq!(qids, sorted, "run.jsonl is sorted by qid");
    assert!(
        lines
            .iter()
            .all(|l| l["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0))
    );
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("again/results.json")).unwrap())
            .unwrap();
    assert!(results["queries"]["literal-00"]["metrics"]["latency_ms"].is_number());
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("again/run-stats.json")).unwrap())
            .unwrap();
    let all = &stats["operational"]["latency_ms"]["all"];
    assert_eq!(all["n"], 120);
    assert!(all["p95"].as_f64().unwrap() >= all["p50"].as_f64().unwrap());
    let summary = std::fs::read_to_string(dir.join("again/summary.md")).unwrap();
    assert!(
        summary.contains("latency_ms (p50 / p95): all "),
        "{summary}"
    );

    // The saved run reproduces the evaluation with --run.
    let rerun = ragate_env(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "again/run.jsonl",
            "--out",
            "rerun",
        ],
        &[("REPLAY", "unused with --run")],
    );
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    assert_eq!(
        std::fs::read(dir.join("rerun/results.json")).unwrap(),
        std::fs::read(dir.join("again/results.json")).unwrap()
    );
}

#[test]
fn a_misbehaving_command_pipeline_fails_closed_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_with_baseline(dir);
    write_config(dir, COMMAND, false);
    let cases = [
        ("crash", "exited with exit status: 3"),
        // A log line on stdout: shown, with where logs go.
        (
            "garbage",
            "output line 2 is not a native run object (expected ident at line 1 column 2): \
             `this is not JSON`; pipelines write logs to stderr: stdout carries one JSON object \
             per query: expected a native run object {",
        ),
        ("unknown", "qid `no-such-query` was not asked for"),
        ("duplicate", "output line 2: qid `"),
        ("missing", "no answer for qid `"),
        (
            "hang",
            "timed out after timeout_s (1 s) with 0 of 120 queries answered",
        ),
    ];
    for (mode, expected) in cases {
        // Only the hanging pipeline meets the 1 s limit: the others keep the config's 60 s, far
        // beyond what a Python start and 120 answers take on a loaded machine.
        let timeout = if mode == "hang" { "1" } else { "60" };
        let outcome = Ragate::new(["gate", "--tier", "regression", "--out", mode])
            .envs(&[("MODE", mode), ("TIMEOUT", timeout)])
            .env("REPLAY", &replay())
            .run_in(dir);
        assert_eq!(outcome.code, 2, "{mode}: {}", outcome.stderr);
        assert!(
            outcome.stderr.contains("pipeline (command): `python3 ")
                && outcome.stderr.contains(expected),
            "{mode}: expected `{expected}` in {}",
            outcome.stderr
        );
        assert!(
            !dir.join(mode).join("results.json").exists(),
            "{mode}: nothing evaluated"
        );
    }
    // The exit-2 summary tells the same.
    let summary = std::fs::read_to_string(dir.join("garbage/summary.md")).unwrap();
    assert!(
        summary.contains("\\`this is not JSON\\`; pipelines write logs to stderr"),
        "{summary}"
    );
}

#[test]
fn an_unset_variable_in_the_pipeline_command_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    write_config(dir, COMMAND, false);
    let outcome = ragate_in(dir, &["gate", "--tier", "regression"]);
    assert_eq!(outcome.code, 2);
    assert!(outcome.stderr.contains("REPLAY"), "{}", outcome.stderr);
}

/// A loopback HTTP endpoint answering `{"qid","query"}` with that qid's line of a run file; the
/// first request gets a 503 (retried), a qid in `reject` gets a 404.
struct RunServer {
    url: String,
    requests: Arc<AtomicUsize>,
}

fn serve_run(run: &Path, reject: &'static str) -> RunServer {
    let prepared: Arc<std::collections::HashMap<String, String>> = Arc::new(
        std::fs::read_to_string(run)
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (v["qid"].as_str().unwrap().to_string(), l.to_string())
            })
            .collect(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/query", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&requests);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let prepared = Arc::clone(&prepared);
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || answer(stream, &prepared, &counter, reject));
        }
    });
    RunServer { url, requests }
}

fn answer(
    stream: TcpStream,
    prepared: &std::collections::HashMap<String, String>,
    counter: &AtomicUsize,
    reject: &str,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            if header.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let request: Value = serde_json::from_slice(&body).unwrap();
        let qid = request["qid"].as_str().unwrap();
        assert!(request["query"].as_str().is_some());
        let (status, reply) = if counter.fetch_add(1, Ordering::SeqCst) == 0 {
            ("503 Service Unavailable", "busy".to_string())
        } else if qid == reject {
            ("404 Not Found", "no such route".to_string())
        } else {
            ("200 OK", prepared[qid].clone())
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
            reply.len()
        );
        if stream.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn an_http_pipeline_is_queried_with_retries_and_a_client_error_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_with_baseline(dir);
    let server = serve_run(&dir.join("base.jsonl"), "none");
    let pipeline = format!(
        "{{ http: {{ url: \"{}\", concurrency: 4, timeout_s: 5 }} }}",
        server.url
    );
    write_config(dir, &pipeline, false);
    Ragate::new(["gate", "--tier", "regression", "--out", "http"])
        .env("REPLAY", &replay())
        .status(0)
        .run_in(dir);
    assert_eq!(
        server.requests.load(Ordering::SeqCst),
        121,
        "120 queries and one retry"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("http/run.jsonl"))
            .unwrap()
            .lines()
            .count(),
        120
    );
    let reference = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "base.jsonl",
            "--out",
            "ref2",
        ],
    );
    assert_eq!(reference.code, 0);
    assert_eq!(
        std::fs::read(dir.join("http/results.json")).unwrap(),
        std::fs::read(dir.join("ref2/results.json")).unwrap(),
        "latency is not gated here, so results match the run file's"
    );

    let rejecting = serve_run(&dir.join("base.jsonl"), "paraphrased-07");
    let pipeline = format!(
        "{{ http: {{ url: \"{}\", max_retries: 1 }} }}",
        rejecting.url
    );
    write_config(dir, &pipeline, false);
    let outcome = Ragate::new(["gate", "--tier", "regression", "--out", "rejected"])
        .env("REPLAY", &replay())
        .run_in(dir);
    assert_eq!(outcome.code, 2);
    assert!(
        outcome
            .stderr
            .contains("pipeline (http): http://127.0.0.1:")
            && outcome
                .stderr
                .contains("(qid `paraphrased-07`): HTTP 404 from http://127.0.0.1:"),
        "{}",
        outcome.stderr
    );
}

#[test]
fn the_python_example_pipeline_plugs_in() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for file in ["qrels.jsonl", "corpus.jsonl"] {
        std::fs::copy(fixture(&format!("seed/{file}")), dir.join(file)).unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/python_pipeline.py");
    let config = format!(
        "version: 1\nmetrics: [recall@5, ndcg@10, faithfulness]\nslices: [class]\n\
         pipeline:\n  command: [python3, \"{}\", corpus.jsonl]\n\
         tiers:\n  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json, gate: {{ decision: point, min_queries: 1 }} }}\n\
         gate:\n  rules:\n    - {{ metric: recall@5, max_drop: 0.05 }}\n",
        path_str(&script)
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let first = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "out"]);
    assert_eq!(first.code, 2, "no baseline yet: {}", first.stderr);
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap();
    let recall = results["summary"]["all"]["recall@5"]["mean"]
        .as_f64()
        .unwrap();
    assert!(recall > 0.3, "word overlap finds some gold docs: {recall}");
    assert!(
        results["summary"]["all"]["faithfulness"]["n"]
            .as_u64()
            .unwrap()
            > 0
    );
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    let again = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "out"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
}

#[test]
fn repeated_runs_are_averaged_and_their_noise_reported() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_with_baseline(dir);
    let command = r#"command: [python3, "${REPLAY}", base.jsonl, alternate, noisy.jsonl]"#;
    write_config(dir, command, false);
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace(
            "baseline: baselines/regression.json }",
            "baseline: baselines/regression.json, repeats: 2 }",
        ),
    )
    .unwrap();
    Ragate::new(["gate", "--tier", "regression", "--out", "repeated"])
        .env("REPLAY", &replay())
        .status(0)
        .run_in(dir);
    assert!(dir.join("repeated/run.jsonl").exists() && dir.join("repeated/run.2.jsonl").exists());
    // The second run answered from noisy.jsonl: the per-query means sit between the two runs.
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("repeated/results.json")).unwrap())
            .unwrap();
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("ref/results.json")).unwrap())
            .unwrap();
    let mrr = |r: &Value, qid: &str| r["queries"][qid]["metrics"]["mrr"].as_f64().unwrap();
    // literal-01: gold at ranks 1 and 3 in base.jsonl, 1 and 2 in noisy.jsonl; mrr stays 1.
    assert_eq!(mrr(&results, "literal-01"), mrr(&base, "literal-01"));
    let summary = std::fs::read_to_string(dir.join("repeated/summary.md")).unwrap();
    assert!(
        summary.contains("run-to-run noise over 2 runs of the pipeline"),
        "{summary}"
    );
    assert!(
        summary.contains("ndcg@10 [all]: run-to-run noise is about"),
        "{summary}"
    );
    // The baseline is a single run: its noise is assumed to be this run's, and said so.
    assert!(
        summary.contains("assuming the baseline has the same run-to-run noise, from 1 run"),
        "{summary}"
    );
    // The results (so a baseline accepted from them) store the noise, in the published schema.
    assert_eq!(results["noise"]["repeats"], 2, "{results}");
    assert!(
        results["noise"]["metrics"]["ndcg@10"]["variance_sum"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let errors = crate::json_schema::Schema::published("results.schema.json").errors(&results);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(base.get("noise").is_none(), "a single run stores no noise");
    let stats: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("repeated/run-stats.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stats["noise"]["repeats"], 2);
    assert!(
        stats["noise"]["sd"]["ndcg@10"].as_f64().unwrap() > 0.0,
        "{stats}"
    );
    assert_eq!(
        stats["noise"]["sd"]["mrr"].as_f64().unwrap(),
        0.0,
        "{stats}"
    );
    // A later run with fewer repeats into the same folder leaves no run of an earlier repeat.
    std::fs::write(dir.join("eval-config.yaml"), &config).unwrap();
    Ragate::new(["gate", "--tier", "regression", "--out", "repeated"])
        .env("REPLAY", &replay())
        .status(0)
        .run_in(dir);
    assert!(dir.join("repeated/run.jsonl").exists());
    assert!(
        !dir.join("repeated/run.2.jsonl").exists(),
        "a stale run.2.jsonl of the earlier run"
    );
    // A run file cannot be run again.
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace(
            "baseline: baselines/regression.json }",
            "baseline: baselines/regression.json, repeats: 2 }",
        ),
    )
    .unwrap();
    let with_run = ragate_env(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "base.jsonl",
            "--out",
            "x",
        ],
        &[("REPLAY", path_str(&fixture("pipeline/replay_pipeline.py")))],
    );
    assert_eq!(with_run.code, 2);
    assert!(
        with_run
            .stderr
            .contains("tiers.regression.repeats: 2 runs need a pipeline that answers again"),
        "{}",
        with_run.stderr
    );
    // A baseline accepted from a repeated run brings its own noise into the share.
    Ragate::new(["gate", "--tier", "regression", "--out", "twice"])
        .env("REPLAY", &replay())
        .status(0)
        .run_in(dir);
    accept(dir, "twice");
    // Both runs now answer from base.jsonl: no noise of its own, deltas that vary.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace("alternate, noisy.jsonl", "alternate, base.jsonl"),
    )
    .unwrap();
    Ragate::new(["gate", "--tier", "regression", "--out", "again"])
        .env("REPLAY", &replay())
        .status(0)
        .run_in(dir);
    let summary = std::fs::read_to_string(dir.join("again/summary.md")).unwrap();
    assert!(
        summary.contains("this run's mean of 2 runs and the baseline's of 2, whose stored"),
        "{summary}"
    );
}

#[test]
fn an_unusable_baseline_stops_the_gate_before_the_pipeline_runs() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    write_config(
        dir,
        r#"command: ["sh", "-c", "touch ran; cat base.jsonl"]"#,
        false,
    );
    std::fs::create_dir_all(dir.join("baselines")).unwrap();
    std::fs::write(dir.join("baselines/regression.json"), "{ not json").unwrap();
    let out = Ragate::new(["gate", "--tier", "regression", "--out", "out"])
        .env("REPLAY", &replay())
        .status(2)
        .run_in(dir);
    assert!(
        out.stderr.contains("baselines/regression.json"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("ran").exists(), "the pipeline did not run");
    let junit = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    assert!(junit.contains("<error"), "{junit}");

    // A missing baseline is the tier's first run: the pipeline runs and its numbers are shown.
    std::fs::remove_file(dir.join("baselines/regression.json")).unwrap();
    let first = Ragate::new(["gate", "--tier", "regression", "--out", "out"])
        .env("REPLAY", &replay())
        .status(2)
        .run_in(dir);
    assert!(dir.join("ran").exists(), "the first run is measured");
    assert!(
        first.stdout.starts_with("all ") && first.stdout.contains("recall@5"),
        "the measured metrics on stdout: {}",
        first.stdout
    );
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("No baseline yet: nothing was gated")
            && summary.contains("| recall@5 |")
            && summary.contains("ragate baseline accept --tier regression --from out/results.json"),
        "{summary}"
    );
}

#[test]
fn the_pipelines_stderr_is_forwarded_prefixed_and_inert() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_with_baseline(dir);
    // A pipeline that clears the screen, rings the bell and tries a workflow command on stderr,
    // with a CRLF line and an unterminated last line, then fails.
    let script = "import sys\n\
        sys.stderr.write('building\\r\\n')\n\
        sys.stderr.write('\\x1b[2J\\x07::error::pwned\\n')\n\
        sys.stderr.write('::add-mask::x')\n\
        sys.exit(3)\n";
    std::fs::write(dir.join("noisy.py"), script).unwrap();
    write_config(dir, "command: [python3, noisy.py]", false);
    let outcome = Ragate::new(["gate", "--tier", "regression", "--out", "noisy"])
        .env("REPLAY", &replay())
        .status(2)
        .run_in(dir);
    let stderr = &outcome.stderr;
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "{stderr:?}"
    );
    assert!(
        !stderr.lines().any(|l| l.starts_with("::")),
        "no workflow command from the pipeline: {stderr}"
    );
    let building = stderr.find("\npipeline: building\n").expect(stderr);
    let hostile = stderr
        .find("\npipeline: \\u{1b}[2J\\u{7}::error::pwned\n")
        .expect(stderr);
    let last = stderr.find("\npipeline: ::add-mask::x\n").expect(stderr);
    // In the order written, before ragate's error about the exit.
    let error = stderr.find("error: ").expect(stderr);
    assert!(
        building < hostile && hostile < last && last < error,
        "{stderr}"
    );
    assert!(stderr.contains("exited with exit status: 3"), "{stderr}");
}
