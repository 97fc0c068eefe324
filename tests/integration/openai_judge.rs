//! The `openai` judge against a real OpenAI-compatible HTTP server on 127.0.0.1, scripted per
//! request: batching of one answer's claims, retries on 500, 429 with Retry-After, timeouts,
//! malformed replies and dropped connections, failing closed, the call budget, and an end-to-end
//! `ragate gate` whose second run is all cache hits. The throughput benchmark is `#[ignore]`d:
//! `cargo test --release --test integration openai_judge_throughput -- --ignored --nocapture`.

use std::collections::{HashSet, VecDeque};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ragate::judge::Task;
use ragate::judge::openai::OpenAiJudge;
use serde_json::{Value, json};

use crate::{Ragate, SMOKE_GATE, accept_baseline, ragate_env, ragate_in};

/// What the server does with one request.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// Answer by the rule in [`answer`].
    Ok,
    /// Reply with this status (and `Retry-After` seconds).
    Status(u16, Option<u64>),
    /// Reply 429 with `Retry-After` as an HTTP date this many seconds ahead.
    RetryAt(u64),
    /// Answer correctly, but only after this long.
    Late(Duration),
    /// A completion whose content is not the contract's JSON.
    Malformed,
    /// Close the connection without a reply.
    Drop,
}

/// A minimal HTTP/1.1 server (keep-alive, Content-Length bodies) that plays a script of steps,
/// then answers every further request with [`Step::Ok`]: chat completions at
/// `/v1/chat/completions`, embeddings at `/v1/embeddings` (see [`embedding`]); the probe's `GET
/// /v1/models` with 404, whatever the script. After [`Server::hang_up`] it closes every new
/// connection at once.
pub(crate) struct Server {
    pub(crate) url: String,
    shared: Arc<Shared>,
}

/// What the server's threads share.
#[derive(Default)]
struct Shared {
    /// The headers and body of each request received.
    seen: Mutex<Vec<(Vec<String>, Value)>>,
    /// `GET /v1/models` requests received.
    probes: AtomicUsize,
    /// Close every new connection without a reply.
    hung_up: AtomicBool,
}

impl Server {
    pub(crate) fn start(script: Vec<Step>, latency: Duration) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let shared = Arc::new(Shared::default());
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let served = Arc::clone(&shared);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                if served.hung_up.load(Ordering::Relaxed) {
                    continue; // dropped: closed without a reply
                }
                let (shared, script) = (Arc::clone(&served), Arc::clone(&script));
                std::thread::spawn(move || serve(stream, &shared, &script, latency));
            }
        });
        Server { url, shared }
    }

    /// From now on every new connection is closed without a reply.
    pub(crate) fn hang_up(&self) {
        self.shared.hung_up.store(true, Ordering::Relaxed);
    }

    /// The `GET /v1/models` probes received so far (not in [`Server::bodies`]).
    pub(crate) fn probes(&self) -> usize {
        self.shared.probes.load(Ordering::Relaxed)
    }

    /// The request bodies received so far, in arrival order.
    pub(crate) fn bodies(&self) -> Vec<Value> {
        let requests = self.shared.seen.lock().unwrap();
        requests.iter().map(|(_, body)| body.clone()).collect()
    }

    fn headers(&self) -> Vec<Vec<String>> {
        let requests = self.shared.seen.lock().unwrap();
        requests
            .iter()
            .map(|(headers, _)| headers.clone())
            .collect()
    }
}

fn serve(stream: TcpStream, shared: &Shared, script: &Mutex<VecDeque<Step>>, latency: Duration) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end().to_string();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
            headers.push(line);
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if request_line.starts_with("GET /v1/models ") {
            // The gate's probe before the pipeline runs: answered 404, as many gateways do.
            shared.probes.fetch_add(1, Ordering::Relaxed);
            let reply = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
            if writer.write_all(reply.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        let embeddings = request_line.starts_with("POST /v1/embeddings ");
        assert!(
            embeddings || request_line.starts_with("POST /v1/chat/completions "),
            "{request_line}"
        );
        let body: Value = serde_json::from_slice(&body).unwrap();
        let reply = |body: &Value| {
            if embeddings {
                embeddings_reply(body)
            } else {
                completion(&answer(body))
            }
        };
        let step = script.lock().unwrap().pop_front().unwrap_or(Step::Ok);
        shared.seen.lock().unwrap().push((headers, body.clone()));
        std::thread::sleep(latency);
        let (status, extra, text) = match step {
            Step::Drop => return,
            Step::Status(code, retry_after) => (
                code,
                retry_after.map_or(String::new(), |s| format!("Retry-After: {s}\r\n")),
                "{\"error\":{\"message\":\"scripted failure\"}}".to_string(),
            ),
            Step::RetryAt(seconds) => (
                429,
                format!(
                    "Retry-After: {}\r\n",
                    httpdate::fmt_http_date(
                        std::time::SystemTime::now() + Duration::from_secs(seconds)
                    )
                ),
                "{\"error\":{\"message\":\"slow down\"}}".to_string(),
            ),
            Step::Late(delay) => {
                std::thread::sleep(delay);
                (200, String::new(), reply(&body))
            }
            Step::Malformed => (
                200,
                String::new(),
                completion("Sure! The claims look supported to me."),
            ),
            Step::Ok => (200, String::new(), reply(&body)),
        };
        let response = format!(
            "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{text}",
            text.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn completion(content: &str) -> String {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107},
    })
    .to_string()
}

/// A deterministic embedding: (words containing "backup", "invoice", "frankfurt", 1); the
/// constant last component makes unrelated texts similar, like a real (anisotropic) model.
pub(crate) fn embedding(text: &str) -> [f64; 4] {
    let lower = text.to_lowercase();
    let count = |stem: &str| {
        lower
            .split_whitespace()
            .filter(|w| w.contains(stem))
            .count() as f64
    };
    [count("backup"), count("invoice"), count("frankfurt"), 1.0]
}

/// An embeddings reply for the request's `input` list, entries in reverse order (the client
/// must map by index).
fn embeddings_reply(body: &Value) -> String {
    let inputs = body["input"].as_array().unwrap();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": embedding(text.as_str().unwrap())}))
        .collect();
    json!({"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 3 * inputs.len(), "total_tokens": 3 * inputs.len()}}).to_string()
}

/// The inputs object: the last line of the last user message.
pub(crate) fn inputs(body: &Value) -> Value {
    let messages = body["messages"].as_array().unwrap();
    let user = messages.last().unwrap()["content"].as_str().unwrap();
    serde_json::from_str(user.lines().last().unwrap()).unwrap()
}

fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A claim is supported when all its words are in the context; the odd claims' replies come
/// in a ```json fence, to exercise the unfencing.
fn answer(body: &Value) -> String {
    let inputs = inputs(body);
    match inputs["task"].as_str().unwrap() {
        "support" => {
            let context = words(inputs["context"].as_str().unwrap());
            let claims = inputs["claims"].as_array().unwrap();
            // Answer in reverse order: the judge must map by index, not position.
            let verdicts: Vec<Value> = claims
                .iter()
                .enumerate()
                .rev()
                .map(|(index, claim)| {
                    let supported = words(claim.as_str().unwrap()).is_subset(&context);
                    json!({"index": index, "supported": supported, "grade": if supported { 2 } else { 0 }})
                })
                .collect();
            let reply = json!({ "verdicts": verdicts }).to_string();
            if claims.len() % 2 == 1 {
                format!("```json\n{reply}\n```")
            } else {
                reply
            }
        }
        "claims" => {
            // Atomic statements: split at every ". " and " and ".
            let answer = inputs["answer"].as_str().unwrap().replace(" and ", ". ");
            let claims: Vec<&str> = answer
                .split(". ")
                .map(|piece| piece.trim().trim_end_matches('.'))
                .filter(|piece| !piece.is_empty())
                .collect();
            json!({ "claims": claims }).to_string()
        }
        "relevance" => {
            let question = words(inputs["question"].as_str().unwrap());
            let answer = words(inputs["answer"].as_str().unwrap());
            json!({"relevant": !question.is_disjoint(&answer)}).to_string()
        }
        "grade" => {
            // Graded relevance (`ragate holes --judge`): shared words, at most 3.
            let question = words(inputs["question"].as_str().unwrap());
            let document = words(inputs["document"].as_str().unwrap());
            let grade = question.intersection(&document).count().min(3);
            json!({"grade": grade, "confidence": 0.9, "rationale": "shared words"}).to_string()
        }
        "draft" => {
            // A drafted question (`ragate synth`): the documented contract, from the first
            // sentence of each document (literal: its words; numeric: its first sentence with a
            // digit; multi-topic: both documents).
            let documents = inputs["documents"].as_array().unwrap();
            // The text after the title (the first line, when there is one).
            let body = |doc: &Value| -> String {
                let text = doc["text"].as_str().unwrap();
                text.split_once('\n')
                    .map_or(text, |(_, body)| body)
                    .to_string()
            };
            let first = |doc: &Value| -> String {
                let text = body(doc);
                text.split(". ")
                    .next()
                    .unwrap()
                    .trim_end_matches('.')
                    .to_string()
                    + "."
            };
            let (question, answer) = match inputs["class"].as_str().unwrap() {
                "multi-topic" => (
                    "how are the two topics related".to_string(),
                    format!("{} {}", first(&documents[0]), first(&documents[1])),
                ),
                "numeric" => {
                    let sentence = body(&documents[0])
                        .split(". ")
                        .find(|s| s.chars().any(|c| c.is_ascii_digit()))
                        .unwrap()
                        .to_string();
                    (format!("how many: {sentence}"), sentence)
                }
                "paraphrased" => (
                    "which guidance covers that matter".to_string(),
                    first(&documents[0]),
                ),
                _ => {
                    let sentence = first(&documents[0]);
                    (format!("what about {}", sentence.to_lowercase()), sentence)
                }
            };
            json!({"question": question, "answer": answer}).to_string()
        }
        other => panic!("unknown task {other}"),
    }
}

/// The judge of these tests: a loopback request takes milliseconds, so the 30 s timeout is never
/// what a test sees, however loaded the machine (the timeout test sets its own).
fn judge(server: &Server) -> OpenAiJudge {
    let mut judge = OpenAiJudge::new(&server.url, "test-model");
    judge.spec.endpoint.timeout = Duration::from_secs(30);
    judge.backoff_base = Duration::from_millis(5);
    judge.spec.endpoint.max_retries = 3;
    judge.spec.endpoint.concurrency = 4;
    judge
}

fn support(claim: &str, context: &str) -> Task {
    Task::Support {
        claim: claim.into(),
        context: context.into(),
    }
}

fn one_claim() -> Vec<Task> {
    vec![support(
        "Backups stay in Frankfurt.",
        "Backups stay in Frankfurt.",
    )]
}

#[test]
fn claims_of_one_answer_are_judged_in_one_request() {
    let server = Server::start(vec![], Duration::ZERO);
    let a = "Backups stay in the Frankfurt region for 30 days.";
    let b = "Invoices are sent monthly by email.";
    let tasks = vec![
        support("Backups stay in Frankfurt.", a),
        support("Backups are encrypted twice.", a),
        support("Backups stay for 30 days.", a),
        support("Invoices are sent by fax.", b),
        support("Invoices are sent monthly.", b),
        Task::Relevance {
            question: "Where do backups stay?".into(),
            answer: "Backups stay in Frankfurt.".into(),
        },
    ];
    let judge = judge(&server);
    let verdicts = judge.judge_all("llm", &tasks).unwrap();
    let positive: Vec<bool> = verdicts.iter().map(|v| v.positive).collect();
    assert_eq!(positive, [true, false, true, false, true, true]);
    let grades: Vec<u8> = verdicts.iter().map(|v| v.grade).collect();
    assert_eq!(grades, [2, 0, 2, 0, 2, 2]);

    let mut bodies: Vec<Value> = server.bodies();
    assert_eq!(bodies.len(), 3, "one request per answer: {bodies:?}");
    bodies.sort_by_key(|body| inputs(body).to_string());
    for body in &bodies {
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["temperature"], 0);
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][1]["role"], "user");
    }
    let all: Vec<Value> = bodies.iter().map(inputs).collect();
    assert!(all.contains(&json!({
        "task": "support",
        "claims": ["Backups stay in Frankfurt.", "Backups are encrypted twice.", "Backups stay for 30 days."],
        "context": a,
    })));
    assert!(all.contains(&json!({
        "task": "support",
        "claims": ["Invoices are sent by fax.", "Invoices are sent monthly."],
        "context": b,
    })));
    assert!(all.contains(&json!({
        "task": "relevance",
        "question": "Where do backups stay?",
        "answer": "Backups stay in Frankfurt.",
    })));
    let usage = judge.usage();
    assert_eq!(
        (
            usage.calls,
            usage.retries,
            usage.prompt_tokens,
            usage.completion_tokens
        ),
        (3, 0, 300, 21)
    );
}

#[test]
fn the_api_key_is_sent_and_an_unset_variable_is_named() {
    let server = Server::start(vec![], Duration::ZERO);
    let mut judge = judge(&server);
    // The variable name is unique to this test, so setting it cannot race with other tests.
    // SAFETY: no other thread reads or writes this variable.
    unsafe { std::env::set_var("RAGATE_TEST_OPENAI_KEY_SET", "sk-test-secret") };
    judge.spec.endpoint.api_key_env = Some("RAGATE_TEST_OPENAI_KEY_SET".into());
    judge.judge_all("llm", &one_claim()).unwrap();
    let headers = server.headers();
    assert!(
        headers[0]
            .iter()
            .any(|h| h.eq_ignore_ascii_case("authorization: Bearer sk-test-secret")),
        "{headers:?}"
    );
    judge.spec.endpoint.api_key_env = Some("RAGATE_TEST_OPENAI_KEY_UNSET".into());
    let error = judge
        .judge_all("llm", &one_claim())
        .unwrap_err()
        .to_string();
    assert!(error.contains("RAGATE_TEST_OPENAI_KEY_UNSET"), "{error}");
    assert_eq!(server.bodies().len(), 1, "no call without the key");
}

#[test]
fn a_500_is_retried_and_the_run_succeeds() {
    let server = Server::start(vec![Step::Status(500, None)], Duration::ZERO);
    let judge = judge(&server);
    let verdicts = judge.judge_all("llm", &one_claim()).unwrap();
    assert!(verdicts[0].positive);
    assert_eq!(server.bodies().len(), 2);
    assert_eq!((judge.usage().calls, judge.usage().retries), (2, 1));
}

#[test]
fn a_429_waits_for_retry_after() {
    let server = Server::start(vec![Step::Status(429, Some(1))], Duration::ZERO);
    let judge = judge(&server);
    let started = Instant::now();
    let verdicts = judge.judge_all("llm", &one_claim()).unwrap();
    let waited = started.elapsed();
    assert!(verdicts[0].positive);
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After: 1 honoured, waited {waited:?}"
    );
    // Not the 120 s cap, nor minutes: 20 times the second asked for.
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    assert_eq!(server.bodies().len(), 2);
}

#[test]
fn a_429_waits_for_a_retry_after_http_date() {
    let server = Server::start(vec![Step::RetryAt(2)], Duration::ZERO);
    let judge = judge(&server);
    let started = Instant::now();
    assert!(judge.judge_all("llm", &one_claim()).unwrap()[0].positive);
    let waited = started.elapsed();
    // The date has a one-second resolution: 2 s ahead is at least 1 s after the request.
    assert!(
        waited >= Duration::from_millis(900),
        "the HTTP date honoured, waited {waited:?}"
    );
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    assert_eq!(server.bodies().len(), 2);
}

#[test]
fn a_reply_after_the_timeout_is_retried() {
    // The first reply would come after 10 minutes; the 3 s timeout (a thousand times a loopback
    // request) gives up on it and the retry is answered at once.
    let server = Server::start(vec![Step::Late(Duration::from_secs(600))], Duration::ZERO);
    let mut judge = judge(&server);
    judge.spec.endpoint.timeout = Duration::from_secs(3);
    let started = Instant::now();
    let verdicts = judge.judge_all("llm", &one_claim()).unwrap();
    let waited = started.elapsed();
    assert!(verdicts[0].positive);
    assert_eq!(server.bodies().len(), 2);
    assert!(
        waited >= Duration::from_secs(3),
        "waited out the timeout: {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(300),
        "gave up at the 3 s timeout, not at the late reply: {waited:?}"
    );
}

#[test]
fn a_malformed_reply_is_retried() {
    let server = Server::start(vec![Step::Malformed], Duration::ZERO);
    let judge = judge(&server);
    assert!(judge.judge_all("llm", &one_claim()).unwrap()[0].positive);
    assert_eq!(server.bodies().len(), 2);
}

#[test]
fn a_persistently_malformed_reply_is_an_error_naming_the_request() {
    let server = Server::start(vec![Step::Malformed; 10], Duration::ZERO);
    let judge = judge(&server);
    let error = judge
        .judge_all("llm", &one_claim())
        .unwrap_err()
        .to_string();
    assert!(error.contains("judge `llm`"), "{error}");
    assert!(error.contains("request 0"), "{error}");
    assert!(error.contains("Backups stay in Frankfurt"), "{error}");
    assert!(error.contains("unparseable"), "{error}");
    assert_eq!(server.bodies().len(), 4, "1 attempt + max_retries 3");
}

#[test]
fn a_dropped_connection_is_retried() {
    let server = Server::start(vec![Step::Drop], Duration::ZERO);
    let judge = judge(&server);
    assert!(judge.judge_all("llm", &one_claim()).unwrap()[0].positive);
    assert_eq!(server.bodies().len(), 2);
}

#[test]
fn persistent_500s_fail_closed_after_max_retries() {
    let server = Server::start(vec![Step::Status(500, None); 20], Duration::ZERO);
    let judge = judge(&server);
    let tasks = vec![
        support("Backups stay in Frankfurt.", "Backups stay in Frankfurt."),
        support("Invoices go out monthly.", "Invoices go out monthly."),
    ];
    let error = judge.judge_all("llm", &tasks).unwrap_err().to_string();
    // The root cause, whichever request failed first: never the other one, abandoned for it.
    assert!(
        error.contains("failed after 4 attempts (max_retries 3): HTTP 500"),
        "{error}"
    );
    assert!(!error.contains("abandoned"), "{error}");
    assert!(
        server.bodies().len() <= 8,
        "no more than 2 x (1 + 3) requests"
    );
}

#[test]
fn a_client_error_is_not_retried() {
    let server = Server::start(vec![Step::Status(401, None)], Duration::ZERO);
    let error = judge(&server)
        .judge_all("llm", &one_claim())
        .unwrap_err()
        .to_string();
    assert!(error.contains("HTTP 401"), "{error}");
    assert_eq!(server.bodies().len(), 1);
}

#[test]
fn the_budget_stops_a_run_that_needs_more_calls() {
    let server = Server::start(vec![], Duration::ZERO);
    let mut judge = judge(&server);
    judge.spec.max_calls = 2;
    let tasks: Vec<Task> = (0..3)
        .map(|i| support("Backups stay.", &format!("Backups stay. {i}")))
        .collect();
    let error = judge.judge_all("llm", &tasks).unwrap_err().to_string();
    assert!(error.contains("max_calls 2"), "{error}");
    assert_eq!(server.bodies().len(), 0, "refused before any call");

    // Retries count too: a run that fits at first but then needs retries is stopped.
    let server = Server::start(vec![Step::Status(503, None); 5], Duration::ZERO);
    let mut judge = self::judge(&server);
    judge.spec.max_calls = 2;
    let error = judge
        .judge_all("llm", &one_claim())
        .unwrap_err()
        .to_string();
    assert!(error.contains("budget"), "{error}");
    assert_eq!(server.bodies().len(), 2);
    assert_eq!(judge.usage().calls, 2);
}

pub(crate) fn setup_gate(dir: &Path, url: &str) {
    let config = format!(
        "version: 1
metrics: [recall@5, {{ name: faithfulness, judge: llm }}, {{ name: answer_relevance, judge: llm }}]
judges:
  llm: {{ kind: openai, base_url: \"{url}\", model: test-model, concurrency: 4, timeout_s: 5, max_retries: 2, max_calls: 100 }}
cache: {{ path: cache/judge.sqlite }}
tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  rules:
    - {{ metric: faithfulness, max_drop: 0.05 }}
"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
    let (mut qrels, mut run) = (String::new(), String::new());
    for i in 0..8 {
        writeln!(qrels, "{{\"qid\":\"q{i:02}\",\"query\":\"which region stores backups {i}\",\"gold_doc_ids\":[\"d{i}\"]}}").unwrap();
        let extra = if i % 4 == 0 {
            " Backups are encrypted twice."
        } else {
            ""
        };
        let line = json!({
            "qid": format!("q{i:02}"),
            "retrieved": [{"doc_id": format!("d{i}"), "text": format!("Backups for tenant {i} stay in the Frankfurt region.")}],
            "answer": format!("Backups stay in the Frankfurt region.{extra}"),
        });
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
}

fn without_status(results: &str) -> Value {
    let mut value: Value = serde_json::from_str(results).unwrap();
    value.as_object_mut().unwrap().remove("status");
    value
}

#[test]
fn a_gate_with_the_openai_judge_passes_and_a_rerun_is_all_cache_hits() {
    // A 500 and a dropped connection on the way: transient faults do not fail the run.
    let server = Server::start(vec![Step::Status(500, None), Step::Drop], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    let first_results = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    let results: Value = serde_json::from_str(&first_results).unwrap();
    assert_eq!(results["queries"]["q00"]["metrics"]["faithfulness"], 0.5);
    assert_eq!(results["queries"]["q01"]["metrics"]["faithfulness"], 1.0);
    assert_eq!(
        results["queries"]["q01"]["metrics"]["answer_relevance"],
        1.0
    );
    assert!(
        first_results.contains("prompt support-relevance-1"),
        "the judge and prompt version are in the provenance"
    );
    let calls = server.bodies().len();
    assert!(
        calls >= 16,
        "8 support + 8 relevance calls + retries: {calls}"
    );
    accept_baseline(dir, "smoke", "out/results.json", &[]);

    Ragate::gate("smoke", "run.jsonl", "out")
        .status(0)
        .run_in(dir); // passes
    assert_eq!(server.bodies().len(), calls, "no calls on the re-run");
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/run-stats.json")).unwrap())
            .unwrap();
    assert_eq!(stats["judge_calls"], 0, "{stats}");
    assert!(stats["judge_cache_hits"].as_u64().unwrap() > 0, "{stats}");
    let second_results = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    assert_eq!(
        without_status(&first_results),
        without_status(&second_results)
    );
}

#[test]
fn a_gate_fails_closed_when_the_judge_keeps_failing() {
    let server = Server::start(vec![Step::Status(500, None); 50], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    let out = Ragate::gate("smoke", "run.jsonl", "out")
        .status(2)
        .run_in(dir);
    assert!(out.stderr.contains("judge `llm`"), "{}", out.stderr);
    assert!(out.stderr.contains("HTTP 500"), "{}", out.stderr);
}

#[test]
fn a_judge_url_from_the_environment_is_never_printed() {
    // persistent 500s (retried, then failed), a 401 (not retried), a port nobody listens on
    let failing = Server::start(vec![Step::Status(500, None); 50], Duration::ZERO);
    let refusing = Server::start(vec![Step::Status(401, None); 50], Duration::ZERO);
    // Port 1 (tcpmux): nothing listens there, and unlike a port freed by a dropped listener no
    // concurrent test's server can be given it (that race once let this judge succeed).
    let closed = "http://127.0.0.1:1/v1".to_string();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let args = SMOKE_GATE;
    for (url, expected) in [
        (&failing.url, "HTTP 500"),
        (&refusing.url, "HTTP 401"),
        // The probe before the run finds nobody there: no retries, at once.
        (&closed, "refused"),
        (
            &"ftp://judge.internal:8443/v1".to_string(),
            "expected an http:// or https:// URL",
        ),
    ] {
        let host = url.split('/').nth(2).unwrap();
        setup_gate(dir, "${RAGATE_TEST_JUDGE_URL}");
        let out = ragate_env(dir, &args, &[("RAGATE_TEST_JUDGE_URL", url)]);
        assert_eq!(out.code, 2, "{url}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "{url}: {}", out.stderr);
        assert!(
            out.stderr
                .contains("judges.llm.base_url (from ${RAGATE_TEST_JUDGE_URL})"),
            "{url}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains(host), "{url} leaked: {}", out.stderr);
        // written literally, the URL is shown as it is
        setup_gate(dir, url);
        let out = ragate_in(dir, &args);
        assert_eq!(out.code, 2, "{url}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "{url}: {}", out.stderr);
        assert!(out.stderr.contains(host), "{url}: {}", out.stderr);
    }
}

#[test]
fn openai_judge_configs_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, "http://127.0.0.1:9/v1");
    let config = std::fs::read_to_string(dir.join("eval-config.yaml")).unwrap();
    for (from, to, expected) in [
        ("model: test-model, ", "", "an openai judge needs `model`"),
        (
            "base_url: \"http://127.0.0.1:9/v1\", ",
            "",
            "an openai judge needs `base_url`",
        ),
        (
            "max_calls: 100",
            "max_calls: 100, command: [x]",
            "judges.llm.command",
        ),
        ("concurrency: 4", "concurrency: 0", "judges.llm.concurrency"),
    ] {
        assert!(config.contains(from), "{from}");
        std::fs::write(dir.join("eval-config.yaml"), config.replace(from, to)).unwrap();
        let out = Ragate::gate("smoke", "run.jsonl", "out")
            .status(2)
            .run_in(dir);
        assert!(out.stderr.contains(expected), "{expected}: {}", out.stderr);
    }
}

/// Throughput: 50 ms latency per request, concurrency 16: at least 90% of 320 calls/s.
#[test]
#[ignore = "benchmark: run in release mode with --ignored --nocapture"]
fn openai_judge_throughput() {
    let server = Server::start(vec![], Duration::from_millis(50));
    let mut judge = OpenAiJudge::new(&server.url, "bench-model");
    judge.spec.endpoint.concurrency = 16;
    judge.spec.endpoint.timeout = Duration::from_secs(5);
    let calls = 1600;
    let tasks: Vec<Task> = (0..calls)
        .map(|i| {
            support(
                "Backups stay in Frankfurt.",
                &format!("Backups stay in Frankfurt. {i}"),
            )
        })
        .collect();
    // Warm up the connection pool.
    judge.judge_all("bench", &tasks[..16]).unwrap();
    let started = Instant::now();
    let verdicts = judge.judge_all("bench", &tasks).unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(verdicts.len(), calls);
    let rate = calls as f64 / seconds;
    println!(
        "openai judge throughput: {calls} calls in {seconds:.3} s = {rate:.1} calls/s ({:.1}% of 320)",
        rate / 320.0 * 100.0
    );
    assert!(rate >= 0.9 * 320.0, "{rate:.1} calls/s");
}

#[test]
fn a_missing_api_key_stops_the_gate_before_the_pipeline_runs() {
    let server = Server::start(vec![], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup_gate(dir, &server.url);
    // The pipeline would leave a marker; the key's variable is unique to this test and unset.
    let config = std::fs::read_to_string(dir.join("eval-config.yaml"))
        .unwrap()
        .replace(
            "max_calls: 100 }",
            "max_calls: 100, api_key_env: RAGATE_TEST_PREFLIGHT_KEY_UNSET }",
        )
        .replace(
            "cache: {",
            "pipeline: { command: [\"sh\", \"-c\", \"touch ran; cat run.jsonl\"] }\ncache: {",
        );
    std::fs::write(dir.join("eval-config.yaml"), &config).unwrap();
    let out = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "out"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("judges.llm.api_key_env")
            && out.stderr.contains("RAGATE_TEST_PREFLIGHT_KEY_UNSET"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("ran").exists(), "the pipeline did not run");
    let summary = std::fs::read_to_string(dir.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("error") && summary.contains("RAGATE_TEST_PREFLIGHT_KEY_UNSET"),
        "the outputs carry the error, never a pass: {summary}"
    );
    assert!(server.bodies().is_empty(), "no request was sent");
    // Replay calls nothing, so it needs no key: the gate gets past the check to the pipeline.
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace(
            "cache: { path: cache/judge.sqlite }",
            "cache: { path: cache/judge.sqlite, mode: replay }",
        ),
    )
    .unwrap();
    ragate_in(dir, &["gate", "--tier", "smoke", "--out", "out"]);
    assert!(dir.join("ran").exists(), "replay mode ran the pipeline");
}
