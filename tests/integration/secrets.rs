//! The canary: a key value in the environment, used by `api_key_env` and inside the `base_url`
//! of the judge and of the embeddings (`${LLM_TENANT}`), driven through every command and every
//! failure path reachable here (a real loopback server whose error bodies echo the
//! `Authorization` header and the URL, a pipeline that prints the key, type errors from `${VAR}`,
//! `api_key_env: ${VAR}`), with GitHub Actions' annotations and step summary on. No file under
//! the test folder, no stdout or stderr byte holds the canary.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::{Outcome, Ragate};

/// What every canary value holds: the test looks for this, so a cut key is found too.
const CORE: &str = "c4n4ry9f3e71b2d05a6e";

fn api_key() -> String {
    format!("sk-live-{CORE}")
}

/// A per-tenant path token: the variable's name does not look secret, its place (a URL) does.
fn tenant() -> String {
    format!("tenant-{CORE}")
}

/// A value that is no number, for a type error (`max_drop: ${RULE_LIMIT}`).
fn limit() -> String {
    format!("lim-{CORE}")
}

/// Every place under `root` (file contents and names, recursively) that holds `needle`.
pub(super) fn scan(root: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.to_string_lossy().contains(needle) {
                found.push(format!("name {}", path.display()));
            }
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && let Some(at) = bytes
                    .windows(needle.len())
                    .position(|w| w == needle.as_bytes())
            {
                let from = at.saturating_sub(60);
                let to = (at + needle.len() + 60).min(bytes.len());
                found.push(format!(
                    "{}: ...{}...",
                    path.display(),
                    String::from_utf8_lossy(&bytes[from..to])
                ));
            }
        }
    }
    found
}

#[test]
fn the_scanner_finds_a_planted_canary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    std::fs::write(dir.path().join("a/clean.json"), "{}").unwrap();
    assert!(scan(dir.path(), CORE).is_empty());
    std::fs::write(
        dir.path().join("a/b/x.sqlite"),
        format!("\0\0{}\0", api_key()),
    )
    .unwrap();
    let found = scan(dir.path(), CORE);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("x.sqlite"), "{found:?}");
}

/// A loopback OpenAI-compatible server (and `http` pipeline) that does what the path says:
/// `/ok/...` answers, `/echo401/...` and `/echo500/...` fail with a body that echoes the
/// `Authorization` header and the path (`/echojson401/` JSON-escaped, `/echob64401/` in base64
/// at every alignment: see `secret_forms`), `/pipe/ok/...` answers a pipeline query,
/// `/pipe/echo/...` fails echoing the path; the probe's `GET .../models` gets 404 (401 on an echo
/// path). It records every Authorization header and path.
pub(super) struct EchoServer {
    pub(super) root: String,
    pub(super) seen: Arc<Mutex<Vec<(String, String)>>>,
}

impl EchoServer {
    pub(super) fn start() -> EchoServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let root = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &seen));
            }
        });
        EchoServer { root, seen }
    }
}

fn serve(stream: TcpStream, seen: &Mutex<Vec<(String, String)>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("")
            .to_string();
        let (mut length, mut authorization) = (0usize, String::new());
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                } else if name.eq_ignore_ascii_case("authorization") {
                    authorization = value.trim().to_string();
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        seen.lock()
            .unwrap()
            .push((authorization.clone(), path.clone()));
        let echo = json!({"error": {"message": format!(
            "Incorrect API key provided: {authorization}. You asked for {path}."
        )}})
        .to_string();
        let (status, text) = if path.starts_with("/echo401/") {
            (401, echo)
        } else if path.starts_with("/echojson401/") {
            (401, crate::secret_forms::json_escaped_echo(&authorization))
        } else if path.starts_with("/echob64401/") {
            (401, crate::secret_forms::base64_echo(&authorization))
        } else if path.starts_with("/echo500/") {
            (500, echo)
        } else if request_line.starts_with("GET ") {
            // The gate's probe of a judge's endpoint (`GET .../models`): up, no model list.
            (404, String::new())
        } else if path.starts_with("/pipe/echo/") {
            (
                400,
                format!("no tenant at {path}\nAuthorization: {authorization}"),
            )
        } else if path.starts_with("/pipe/ok/") {
            (200, pipeline_answer(&body))
        } else if path.ends_with("/embeddings") {
            (200, embeddings(&body))
        } else {
            (200, completion(&body))
        };
        let response = format!(
            "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
            text.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// Every claim supported, every answer relevant, each answer one claim.
fn completion(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let user = messages.last().unwrap()["content"].as_str().unwrap();
    let inputs: Value = serde_json::from_str(user.lines().last().unwrap()).unwrap();
    let content = match inputs["task"].as_str().unwrap() {
        "support" => {
            let count = inputs["claims"].as_array().unwrap().len();
            let verdicts: Vec<Value> = (0..count)
                .map(|index| json!({"index": index, "supported": true, "grade": 2}))
                .collect();
            json!({ "verdicts": verdicts })
        }
        "claims" => json!({ "claims": [inputs["answer"]] }),
        _ => json!({ "relevant": true }),
    };
    json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content.to_string()}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2},
    })
    .to_string()
}

fn embeddings(body: &Value) -> String {
    let count = body["input"].as_array().unwrap().len();
    let data: Vec<Value> = (0..count)
        .map(|index| json!({"index": index, "embedding": [1.0, 0.5, index as f64, 1.0]}))
        .collect();
    json!({"data": data, "usage": {"prompt_tokens": 3}}).to_string()
}

fn pipeline_answer(body: &Value) -> String {
    let qid = body["qid"].as_str().unwrap();
    json!({"qid": qid, "retrieved": [{"doc_id": format!("d{}", &qid[1..]), "text": "Backups stay in Frankfurt."}], "answer": "Backups stay in Frankfurt."}).to_string()
}

/// One test folder: the config's pieces, the server, and every run's outcome.
struct Canary {
    dir: tempfile::TempDir,
    server: EchoServer,
    ran: Vec<String>,
}

/// How a scenario's config differs from the passing one.
#[derive(Default, Clone, Copy)]
struct Variant<'a> {
    judge_path: &'a str,
    embeddings_path: &'a str,
    pipeline: Option<&'a str>,
    api_key_env: Option<&'a str>,
    max_drop: Option<&'a str>,
    cache: Option<&'a str>,
    model: Option<&'a str>,
}

impl Canary {
    fn new() -> Canary {
        let canary = Canary {
            dir: tempfile::tempdir().unwrap(),
            server: EchoServer::start(),
            ran: Vec::new(),
        };
        let (mut qrels, mut run, mut tsv) = (String::new(), String::new(), String::new());
        let mut queries = String::new();
        for i in 0..12 {
            writeln!(qrels, "{}", json!({"qid": format!("q{i}"), "query": format!("where do backups stay {i}"), "gold_doc_ids": [format!("d{i}")], "class": if i % 2 == 0 { "a" } else { "b" }})).unwrap();
            writeln!(run, "{}", json!({"qid": format!("q{i}"), "retrieved": [{"doc_id": format!("d{i}"), "text": "Backups stay in Frankfurt."}], "answer": "Backups stay in Frankfurt."})).unwrap();
            writeln!(tsv, "q{i}\td{i}\t1").unwrap();
            writeln!(queries, "q{i}\twhere do backups stay {i}").unwrap();
        }
        std::fs::write(canary.path("qrels.jsonl"), qrels).unwrap();
        std::fs::write(canary.path("run.jsonl"), run).unwrap();
        std::fs::write(canary.path("qrels.tsv"), tsv).unwrap();
        std::fs::write(canary.path("queries.tsv"), queries).unwrap();
        canary
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Writes `eval-config.yaml` for `variant`.
    fn configure(&self, variant: Variant<'_>) {
        let root = &self.server.root;
        let judge = if variant.judge_path.is_empty() {
            "ok"
        } else {
            variant.judge_path
        };
        let embeddings = if variant.embeddings_path.is_empty() {
            "ok"
        } else {
            variant.embeddings_path
        };
        let key = variant.api_key_env.unwrap_or("CANARY_API_KEY");
        let pipeline = match variant.pipeline {
            Some(pipeline) => format!("pipeline: {pipeline}\n"),
            None => String::new(),
        };
        let config = format!(
            "version: 1
metrics: [recall@5, {{ name: faithfulness, judge: llm }}, answer_relevance]
judges:
  llm: {{ kind: openai, base_url: \"{root}/{judge}/${{LLM_TENANT}}\", model: {model}, api_key_env: {key}, timeout_s: 5, max_retries: 0, concurrency: 2 }}
embeddings: {{ base_url: \"{root}/{embeddings}/${{LLM_TENANT}}/v1\", model: e5, api_key_env: CANARY_API_KEY, timeout_s: 5, max_retries: 0 }}
cache: {cache}
{pipeline}slices: [class]
history: {{ dir: history }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baselines/smoke.json }}
gate:
  decision: point
  min_queries: 1
  rules:
    - {{ metric: faithfulness, max_drop: {max_drop} }}
",
            model = variant.model.unwrap_or("test-model"),
            cache = variant.cache.unwrap_or("{ path: cache/judge.sqlite }"),
            max_drop = variant.max_drop.unwrap_or("0.05"),
        );
        std::fs::write(self.path("eval-config.yaml"), config).unwrap();
    }

    /// Runs ragate with the canaries and GitHub Actions' outputs on; no stream holds the canary.
    fn run(&mut self, command: Ragate) -> Outcome {
        let summary = self.path("step-summary.md");
        let (key, tenant, limit) = (api_key(), tenant(), limit());
        let env = [
            ("CANARY_API_KEY", key.as_str()),
            ("LLM_TENANT", tenant.as_str()),
            ("RULE_LIMIT", limit.as_str()),
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ];
        let line = command.command_line();
        let outcome = command.envs(&env).run_in(self.dir.path());
        for (stream, text) in [("stdout", &outcome.stdout), ("stderr", &outcome.stderr)] {
            assert!(
                !text.contains(CORE),
                "`ragate {line}` printed the canary on {stream}:\n{text}"
            );
        }
        self.ran.push(line);
        outcome
    }

    /// No file written under the test folder holds the canary.
    fn assert_no_file_holds_the_canary(&self) {
        let found = scan(self.dir.path(), CORE);
        assert!(
            found.is_empty(),
            "after {:#?}\nthe canary is in {found:#?}",
            self.ran
        );
    }
}

#[test]
fn no_output_of_any_command_holds_a_key() {
    let mut canary = Canary::new();
    canary.configure(Variant::default());
    let out = canary.run(Ragate::new(["validate"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        canary
            .run(Ragate::new(["validate", "--format", "json"]))
            .code,
        0
    );
    let out = canary.run(Ragate::new([
        "eval",
        "--qrels",
        "qrels.jsonl",
        "--run",
        "run.jsonl",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);

    // The first run: no baseline yet (exit 2), every output written.
    let out = canary.run(Ragate::gate("smoke", "run.jsonl", "out"));
    assert_eq!(out.code, 2, "{}", out.stderr);
    let results = std::fs::read_to_string(canary.path("out/results.json")).unwrap();
    assert!(
        results.contains("/ok/${LLM_TENANT}"),
        "the identity records the URL as written: {results}"
    );
    let seen = canary.server.seen.lock().unwrap().clone();
    assert!(
        seen.iter().any(
            |(auth, path)| *auth == format!("Bearer {}", api_key()) && path.contains(&tenant())
        ),
        "the key and the tenant were really used: {seen:?}"
    );
    let out = canary.run(Ragate::new([
        "baseline",
        "accept",
        "--tier",
        "smoke",
        "--from",
        "out/results.json",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        canary
            .run(Ragate::new(["baseline", "show", "--tier", "smoke"]))
            .code,
        0
    );
    let show = canary.run(Ragate::new([
        "baseline", "show", "--tier", "smoke", "--format", "json",
    ]));
    assert_eq!(show.code, 0, "{}", show.stderr);

    // Passing runs, in every format, with the history, sharded and merged.
    let out = canary.run(Ragate::gate("smoke", "run.jsonl", "out"));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let json = Ragate::gate("smoke", "run.jsonl", "out-json").args([
        "--format",
        "json",
        "--junit",
        "junit-copy.xml",
    ]);
    assert_eq!(canary.run(json).code, 0);
    let out = canary.run(Ragate::new([
        "history",
        "add",
        "--tier",
        "smoke",
        "--from",
        "out/results.json",
        "--with-queries",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        canary
            .run(Ragate::new(["history", "show", "--tier", "smoke"]))
            .code,
        0
    );
    let out = canary.run(Ragate::new([
        "history", "show", "--tier", "smoke", "--format", "json",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let with_history =
        Ragate::gate("smoke", "run.jsonl", "out-history").args(["--history", "history"]);
    assert_eq!(canary.run(with_history).code, 0);
    for (shard, out) in [("1/2", "shard1"), ("2/2", "shard2")] {
        let sharded = Ragate::gate("smoke", "run.jsonl", out).args(["--shard", shard]);
        let outcome = canary.run(sharded);
        assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    }
    let out = canary.run(Ragate::new([
        "merge", "--tier", "smoke", "shard1", "shard2", "--out", "merged",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = canary.run(Ragate::new([
        "report",
        "--tier",
        "smoke",
        "--from",
        "out",
        "--history",
        "history",
        "--out",
        "report.html",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = canary.run(Ragate::new([
        "compare",
        "baselines/smoke.json",
        "out/results.json",
        "--junit",
        "compare.xml",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = canary.run(Ragate::new([
        "compare",
        "baselines/smoke.json",
        "out/results.json",
        "--format",
        "json",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = canary.run(Ragate::new([
        "judge-agreement",
        "--tier",
        "smoke",
        "--judges",
        "llm,default",
        "--run",
        "run.jsonl",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = canary.run(Ragate::new([
        "convert",
        "--qrels",
        "qrels.tsv",
        "--queries",
        "queries.tsv",
        "--out",
        "converted.jsonl",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = canary.run(Ragate::new(["init", "--dir", "scaffold"]));
    assert_eq!(out.code, 0, "{}", out.stderr);

    // Another model: the judge-change error names both identities, as written.
    canary.configure(Variant {
        model: Some("other-model"),
        ..Variant::default()
    });
    let out = canary.run(Ragate::gate("smoke", "run.jsonl", "out-changed"));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("/ok/${LLM_TENANT}"), "{}", out.stderr);
    assert!(std::fs::read_to_string(canary.path("step-summary.md")).is_ok());
    canary.assert_no_file_holds_the_canary();
}

#[test]
fn no_failure_prints_a_key() {
    let mut canary = Canary::new();
    let no_cache = Some("{ mode: off }");
    // Endpoint errors whose bodies echo the Authorization header and the URL.
    for (judge_path, embeddings_path, expected) in [
        ("echo401", "", "HTTP 401"),
        ("echo500", "", "HTTP 500"),
        ("", "echo401", "HTTP 401"),
        ("", "echo500", "HTTP 500"),
    ] {
        canary.configure(Variant {
            judge_path,
            embeddings_path,
            cache: no_cache,
            ..Variant::default()
        });
        let out = canary.run(Ragate::gate("smoke", "run.jsonl", "out"));
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains(expected), "{expected}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("Incorrect API key provided: Bearer [redacted]"),
            "the body is shown, the key redacted: {}",
            out.stderr
        );
        let summary = std::fs::read_to_string(canary.path("out/summary.md")).unwrap();
        assert!(summary.contains(expected), "{summary}");
    }
    // The http pipeline's error body echoes its URL (with the tenant token).
    let root = canary.server.root.clone();
    let pipeline =
        format!("{{ http: {{ url: \"{root}/pipe/echo/${{LLM_TENANT}}\", max_retries: 0 }} }}");
    canary.configure(Variant {
        pipeline: Some(&pipeline),
        cache: no_cache,
        ..Variant::default()
    });
    let out = canary.run(Ragate::new(["gate", "--tier", "smoke", "--out", "out"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("HTTP 400"), "{}", out.stderr);
    // A command pipeline that prints the key where a reply was expected.
    let pipeline = r#"{ command: [sh, -c, 'cat > /dev/null; echo "{\"qid\": \"Bearer $CANARY_API_KEY\", \"retrieved\": []}"'] }"#;
    canary.configure(Variant {
        pipeline: Some(pipeline),
        cache: no_cache,
        ..Variant::default()
    });
    let out = canary.run(Ragate::new(["gate", "--tier", "smoke", "--out", "out"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("[redacted]"), "{}", out.stderr);

    // A type error from `${VAR}` names the variable, never its value.
    canary.configure(Variant {
        max_drop: Some("${RULE_LIMIT}"),
        ..Variant::default()
    });
    for command in [
        Ragate::new(["validate"]),
        Ragate::gate("smoke", "run.jsonl", "out"),
    ] {
        let out = canary.run(command);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(out.stderr.contains("${RULE_LIMIT}"), "{}", out.stderr);
    }
    // The key where its variable's name belongs.
    canary.configure(Variant {
        api_key_env: Some("\"${CANARY_API_KEY}\""),
        ..Variant::default()
    });
    for command in [
        Ragate::new(["validate"]),
        Ragate::gate("smoke", "run.jsonl", "out"),
    ] {
        let out = canary.run(command);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(
            out.stderr.contains("judges.llm.api_key_env")
                && out.stderr.contains("write `api_key_env: CANARY_API_KEY`"),
            "{}",
            out.stderr
        );
    }
    // A key written where its variable's name belongs, literally (not in the environment, so
    // not known to ragate as a secret: the message must not print it).
    let literal = format!("sk-{CORE}-literal");
    canary.configure(Variant {
        api_key_env: Some(&literal),
        ..Variant::default()
    });
    let out = canary.run(Ragate::gate("smoke", "run.jsonl", "out"));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("judges.llm.api_key_env"),
        "{}",
        out.stderr
    );
    // (The config itself now holds the key, as written by the user: not ragate's output.)
    std::fs::remove_file(canary.path("eval-config.yaml")).unwrap();
    canary.assert_no_file_holds_the_canary();
}
