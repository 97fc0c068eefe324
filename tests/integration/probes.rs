//! The probes before the pipeline runs (issue 44): a judge endpoint that does not answer `GET
//! /models`, or refuses the key, and a `command` judge whose program is missing stop the gate in
//! seconds, before the pipeline starts; any other reply (404 included) passes; replay mode and a
//! run file whose verdicts are all cached probe nothing; `plan --probe` makes the same probes,
//! `plan` none. Real loopback servers and real subprocesses.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::openai_judge::{Server, setup_gate};
use crate::{Outcome, Ragate, accept_baseline};

/// Port 1 (tcpmux): nothing listens there, and unlike a port freed by a dropped listener no
/// concurrent test's server can be given it.
const CLOSED: &str = "http://127.0.0.1:1/v1";

/// The config `setup_gate` wrote, with a pipeline that leaves a marker `ran`, then sleeps
/// `sleep` seconds and answers with the run file.
fn with_pipeline(dir: &Path, sleep: u32) {
    let path = dir.join("eval-config.yaml");
    let config = std::fs::read_to_string(&path).unwrap().replace(
        "cache: {",
        &format!(
            "pipeline: {{ command: [\"sh\", \"-c\", \"touch ran; sleep {sleep}; cat run.jsonl\"] }}\ncache: {{"
        ),
    );
    std::fs::write(path, config).unwrap();
}

/// Replaces `from` with `to` in the config.
fn edit_config(dir: &Path, from: &str, to: &str) {
    let path = dir.join("eval-config.yaml");
    let config = std::fs::read_to_string(&path).unwrap();
    assert!(config.contains(from), "{config}");
    std::fs::write(path, config.replace(from, to)).unwrap();
}

/// The `ragate-gate/1` document a run with `--format json` printed.
fn gate_json(outcome: &Outcome) -> serde_json::Value {
    serde_json::from_str(&outcome.stdout).unwrap_or_else(|e| panic!("{e}: {}", outcome.stdout))
}

/// `ragate gate --tier smoke --out out`: the configured pipeline runs.
fn gate_with_pipeline() -> Ragate {
    Ragate::new(["gate", "--tier", "smoke", "--out", "out"])
}

#[test]
fn a_judge_endpoint_nobody_listens_on_stops_the_gate_before_the_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, CLOSED);
    with_pipeline(dir, 10);
    let started = Instant::now();
    let outcome = gate_with_pipeline()
        .args(["--format", "json"])
        .status(2)
        .stderr_has("judge `llm`: GET http://127.0.0.1:1/v1/models got no reply")
        .stderr_has("refused")
        .stderr_has("judges.llm.base_url")
        .run_in(dir);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(!dir.join("ran").exists(), "the pipeline never started");
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("refused") && summary.contains("judge `llm`"),
        "the outputs carry the error: {summary}"
    );
    let document = gate_json(&outcome);
    assert_eq!(document["status"], "error", "{document}");
    assert_eq!(document["retryable"], true, "nobody answered: {document}");
    // Replay mode calls nothing, so it probes nothing: the pipeline runs.
    edit_config(
        dir,
        "cache: { path: cache/judge.sqlite }",
        "cache: { path: cache/judge.sqlite, mode: replay }",
    );
    edit_config(dir, "sleep 10", "sleep 0");
    gate_with_pipeline().run_in(dir);
    assert!(dir.join("ran").exists(), "replay mode ran the pipeline");
}

#[test]
fn a_judge_endpoint_that_answers_404_on_models_passes_the_probe() {
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    with_pipeline(dir, 0);
    // No baseline yet: exit 2 after a full run, measured but not gated.
    gate_with_pipeline()
        .status(2)
        .stderr_has("has no baseline yet")
        .run_in(dir);
    assert_eq!(server.probes(), 1, "one probe of the one judge");
    assert!(dir.join("ran").exists(), "the pipeline ran");
    assert!(server.bodies().len() >= 16, "the judge was asked");
    assert!(dir.join("out/results.json").exists());
}

/// A loopback endpoint that answers every request 401, echoing its `Authorization` header.
fn refusing_keys() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut authorization = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("authorization")
                {
                    authorization = value.trim().to_string();
                }
            }
            let body = format!("{{\"error\":\"invalid key: {authorization}\"}}");
            let reply = format!(
                "HTTP/1.1 401 Unauthorized\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = (&stream).write_all(reply.as_bytes());
        }
    });
    url
}

#[test]
fn a_judge_endpoint_that_refuses_the_key_fails_the_probe() {
    let key = "sk-probe-canary-5f3a9c1e7d20b4";
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &refusing_keys());
    with_pipeline(dir, 0);
    edit_config(
        dir,
        "max_calls: 100 }",
        "max_calls: 100, api_key_env: RAGATE_TEST_PROBE_KEY }",
    );
    let outcome = gate_with_pipeline()
        .args(["--format", "json"])
        .env("RAGATE_TEST_PROBE_KEY", key)
        .status(2)
        .stderr_has("judge `llm`")
        .stderr_has("answered HTTP 401, which refuses the key in RAGATE_TEST_PROBE_KEY")
        .stderr_has("invalid key: Bearer [redacted]")
        .run_in(dir);
    assert!(!dir.join("ran").exists(), "the pipeline never started");
    assert!(!outcome.stderr.contains(key), "{}", outcome.stderr);
    assert!(!outcome.stdout.contains(key), "{}", outcome.stdout);
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        !summary.contains(key) && summary.contains("HTTP 401"),
        "{summary}"
    );
    let document = gate_json(&outcome);
    assert_eq!(
        document["retryable"], false,
        "a refused key recurs: {document}"
    );
}

#[test]
fn a_command_judge_whose_program_is_missing_fails_before_the_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, CLOSED);
    with_pipeline(dir, 0);
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    let openai_judge = config
        .lines()
        .find(|line| line.contains("kind: openai"))
        .unwrap()
        .to_string();
    for (program, reason) in [
        ("ragate-no-such-judge-7b2e", "is not found on PATH"),
        ("./judges/missing.py", "does not exist"),
        ("./run.jsonl", "is not an executable file"),
    ] {
        std::fs::write(
            dir.join("eval-config.yaml"),
            config.replace(
                &openai_judge,
                &format!("  llm: {{ kind: command, command: [\"{program}\", \"--strict\"] }}"),
            ),
        )
        .unwrap();
        gate_with_pipeline()
            .status(2)
            .stderr_has(&format!(
                "judge `llm`: program `{program}` (judges.llm.command[0]) {reason}"
            ))
            .run_in(dir);
        assert!(
            !dir.join("ran").exists(),
            "{program}: the pipeline never started"
        );
    }
}

#[test]
fn a_run_file_whose_verdicts_are_all_cached_is_not_probed() {
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2) // no baseline yet
        .run_in(dir);
    assert_eq!(server.probes(), 1);
    accept_baseline(dir, "smoke", "out/results.json", &[]);
    server.hang_up();
    // Every verdict is in the cache: nothing is called, so nothing is probed; the run passes.
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(0)
        .run_in(dir);
    assert_eq!(server.probes(), 1, "no probe of the re-run");
    // A pipeline answers anew (its verdicts are not known before): the endpoint is probed, and a
    // connection closed without a reply fails.
    with_pipeline(dir, 0);
    gate_with_pipeline()
        .status(2)
        .stderr_has("judge `llm`: GET ")
        .stderr_has("/v1/models got no reply")
        .run_in(dir);
    assert!(!dir.join("ran").exists(), "the pipeline never started");
}

#[test]
fn plan_probes_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let plan = ["plan", "--tier", "smoke", "--run", "run.jsonl"];
    setup_gate(dir, CLOSED);
    Ragate::new(plan).status(0).run_in(dir);
    Ragate::new(plan)
        .args(["--probe"])
        .status(2)
        .stderr_has("judge `llm`: GET http://127.0.0.1:1/v1/models got no reply")
        .stderr_has("refused")
        .run_in(dir);

    let server = Server::start(vec![], Duration::ZERO);
    setup_gate(dir, &server.url);
    Ragate::new(plan).status(0).run_in(dir);
    assert_eq!(server.probes(), 0, "plan alone makes no network call");
    assert!(server.bodies().is_empty());
    Ragate::new(plan)
        .args(["--probe"])
        .status(0)
        .stderr_has("/v1/models answered HTTP 404: the endpoint is up")
        .run_in(dir);
    assert_eq!(server.probes(), 1);
    assert!(server.bodies().is_empty(), "nothing judged");
}
