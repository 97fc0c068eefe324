//! The canary of the forms a secret takes on its way out: HTTP Basic auth made from a URL's
//! userinfo and echoed back, a key echoed JSON-escaped (`\u002d`, `\/`) or base64-encoded at
//! every alignment, a piece of a key quoted in a judge's reason, a pipeline printing a key in
//! base64 on its stderr, and commands and paths holding a `${VAR}` whose name does not look
//! secret (a DSN in a judge's argv, a folder in a qrels path). No stream and no output file holds
//! the value, any 12 characters of it, or any 12 characters of its base64 or base64url.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::json;
use std::fmt::Write as _;

use crate::secrets::EchoServer;
use crate::{Outcome, Ragate};

/// What every secret of this test holds.
const CORE: &str = "f0rm5c4n4ry7e2d19b3a";

fn key() -> String {
    format!("sk-live-{CORE}")
}
fn password() -> String {
    format!("pw-{CORE}")
}
/// A DSN: its variable's name does not look secret, so only "as written" protects it.
fn dsn() -> String {
    format!("https://{CORE}@o1.ingest.example/42")
}
/// A folder name, under a variable that does not look secret either.
fn stem() -> String {
    format!("qrels-{CORE}")
}

/// `text` as an endpoint may echo it in a JSON body: every other character (from the first when
/// `odd_first`) as `\uXXXX`, `/` as `\/`.
fn escaped_alternately(text: &str, odd_first: bool) -> String {
    let mut escaped = String::new();
    for (index, c) in text.chars().enumerate() {
        match c {
            '/' => escaped.push_str("\\/"),
            c if (index % 2 == 0) == odd_first => write!(escaped, "\\u{:04x}", c as u32).unwrap(),
            c => escaped.push(c),
        }
    }
    escaped
}

/// A 401 body that echoes the `Authorization` header JSON-escaped ([`escaped_alternately`]).
pub(super) fn json_escaped_echo(authorization: &str) -> String {
    format!(
        "{{\"error\": {{\"message\": \"Incorrect API key provided: {}\"}}}}",
        escaped_alternately(authorization, false)
    )
}

/// The header in base64 and base64url, after 0, 1 and 2 other bytes.
pub(super) fn base64_echo(authorization: &str) -> String {
    let forms: Vec<String> = ["", "x", "xy"]
        .iter()
        .flat_map(|before| {
            let input = format!("{before}{authorization}!");
            [STANDARD.encode(&input), URL_SAFE_NO_PAD.encode(&input)]
        })
        .collect();
    json!({"error": {"message": format!("bad credentials {}", forms.join(" "))}}).to_string()
}

/// Every 12-character run of `text`.
fn windows(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .windows(12)
        .map(|window| window.iter().collect())
        .collect()
}

/// What must never be written: 12 characters of any secret, of its base64 or base64url at any
/// alignment (leaving out 4 characters at each end, which mix in the neighbouring bytes), and
/// the core as `json_escaped_echo` writes it.
fn needles() -> Vec<String> {
    let mut needles = Vec::new();
    for secret in [
        key(),
        password(),
        format!("judge:{}", password()),
        dsn(),
        stem(),
    ] {
        needles.extend(windows(&secret));
        for before in ["", "x", "xy"] {
            for engine in [&STANDARD, &URL_SAFE] {
                let encoded = engine.encode(format!("{before}{secret}"));
                let encoded = encoded.trim_end_matches('=');
                needles.extend(windows(&encoded[4..encoded.len() - 4]));
            }
        }
    }
    needles.push(escaped_alternately(CORE, false));
    needles.push(escaped_alternately(CORE, true));
    needles.sort();
    needles.dedup();
    needles
}

/// The first needle `text` holds.
fn leak<'a>(text: &str, needles: &'a [String]) -> Option<&'a str> {
    needles
        .iter()
        .find(|needle| text.contains(needle.as_str()))
        .map(String::as_str)
}

struct Project {
    dir: tempfile::TempDir,
    server: EchoServer,
    needles: Vec<String>,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let (mut qrels, mut run) = (String::new(), String::new());
        // A piece of the key in an answer: the default judge quotes the unsupported name.
        let piece = &CORE[2..18];
        for i in 0..6 {
            writeln!(qrels, "{}", json!({"qid": format!("q{i}"), "query": format!("where do backups stay {i}"), "gold_doc_ids": [format!("d{i}")]})).unwrap();
            let answer = format!("Backups stay in Frankfurt under account {piece}.");
            writeln!(run, "{}", json!({"qid": format!("q{i}"), "retrieved": [{"doc_id": format!("d{i}"), "text": "Backups stay in Frankfurt."}, {"doc_id": format!("x{i}"), "text": "Backups are kept for 30 days."}], "answer": answer})).unwrap();
        }
        std::fs::write(dir.path().join("qrels.jsonl"), qrels).unwrap();
        std::fs::write(dir.path().join("run.jsonl"), run).unwrap();
        let retrieved = (0..6).flat_map(|i| {
            [
                ("d", "Backups stay in Frankfurt."),
                ("x", "Backups are kept for 30 days."),
            ]
            .map(|(prefix, text)| json!({"doc_id": format!("{prefix}{i}"), "text": text}))
        });
        let corpus: String = (1..=4)
            .map(|i| {
                let text = format!("Backups of region {i} stay in Frankfurt for 30 days. They are encrypted at rest with keys rotated every 90 days.");
                format!("{}\n", json!({"doc_id": format!("c{i}"), "title": format!("Backups {i}"), "text": text}))
            })
            .chain(retrieved.map(|document| format!("{document}\n")))
            .collect();
        std::fs::write(dir.path().join("corpus.jsonl"), corpus).unwrap();
        Project {
            dir,
            server: EchoServer::start(),
            needles: needles(),
        }
    }

    /// Writes a config whose faithfulness judge is `judge` (`default` or one of `judges`).
    fn configure(&self, judge: &str, pipeline: &str, qrels: &str) {
        let root = &self.server.root;
        let host = root.trim_start_matches("http://");
        let config = format!(
            "version: 1
corpus: corpus.jsonl
metrics: [recall@5, {{ name: faithfulness, judge: {judge} }}]
judges:
  basic: {{ kind: openai, base_url: \"http://judge:${{LLM_PASSWD}}@{host}/echo401/v1\", model: m, timeout_s: 5, max_retries: 0 }}
  json: {{ kind: openai, base_url: \"{root}/echojson401/v1\", model: m, api_key_env: CANARY_API_KEY, timeout_s: 5, max_retries: 0 }}
  b64: {{ kind: openai, base_url: \"{root}/echob64401/v1\", model: m, api_key_env: CANARY_API_KEY, timeout_s: 5, max_retries: 0 }}
  cj: {{ kind: command, command: [sh, -c, \"exit 1\", \"--dsn=${{SENTRY_DSN}}\"] }}
cache: {{ mode: off }}
{pipeline}tiers:
  smoke: {{ qrels: {qrels}, baseline: baselines/smoke.json }}
gate:
  decision: point
  min_queries: 1
  rules:
    - {{ metric: faithfulness, max_drop: 0.05 }}
"
        );
        std::fs::write(self.dir.path().join("eval-config.yaml"), config).unwrap();
    }

    /// Runs ragate with the secrets in the environment and GitHub Actions' outputs on; no
    /// stream holds a needle.
    fn run(&self, command: Ragate) -> Outcome {
        let summary = self.dir.path().join("step-summary.md");
        let (key, password, dsn, stem) = (key(), password(), dsn(), stem());
        let env = [
            ("CANARY_API_KEY", key.as_str()),
            ("LLM_PASSWD", password.as_str()),
            ("SENTRY_DSN", dsn.as_str()),
            ("QRELS_STEM", stem.as_str()),
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ];
        let line = command.command_line();
        let outcome = command.envs(&env).run_in(self.dir.path());
        for (stream, text) in [("stdout", &outcome.stdout), ("stderr", &outcome.stderr)] {
            if let Some(needle) = leak(text, &self.needles) {
                panic!("`ragate {line}` printed `{needle}` on {stream}:\n{text}");
            }
        }
        outcome
    }

    /// No file ragate wrote (everything but the inputs) holds a needle.
    fn assert_no_output_leaks(&self) {
        let inputs = [
            "eval-config.yaml",
            "qrels.jsonl",
            "run.jsonl",
            "corpus.jsonl",
        ];
        let mut files = vec![self.dir.path().to_path_buf()];
        let mut checked = 0;
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            let name = path.file_name().unwrap().to_str().unwrap();
            if inputs.contains(&name) && path.parent() == Some(self.dir.path()) {
                continue;
            }
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            if let Some(needle) = leak(&text, &self.needles) {
                panic!("{} holds `{needle}`:\n{text}", path.display());
            }
            checked += 1;
        }
        assert!(
            checked >= 5,
            "the runs wrote their outputs ({checked} files)"
        );
    }

    fn summary(&self, out: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(out).join("summary.md")).unwrap()
    }
}

#[test]
fn no_encoded_form_or_piece_of_a_secret_reaches_any_output() {
    let project = Project::new();
    let gate_fails = |judge: &str, out: &str, expected: &str| {
        project.configure(judge, "", "qrels.jsonl");
        let outcome = project.run(Ragate::gate("smoke", "run.jsonl", out));
        assert_eq!(outcome.code, 2, "{judge}: {}", outcome.stderr);
        assert!(
            outcome.stderr.contains(expected),
            "{judge}: {}",
            outcome.stderr
        );
        let summary = project.summary(out);
        assert!(
            summary.replace('\\', "").contains(expected),
            "{judge}: {summary}"
        );
        outcome
    };

    // Basic auth from the URL's userinfo, echoed back by a 401.
    gate_fails("basic", "out-basic", "HTTP 401");
    let seen = project.server.seen.lock().unwrap().clone();
    assert!(
        seen.iter().any(|(auth, _)| auth.starts_with("Basic ")),
        "the userinfo really went out as Basic auth: {seen:?}"
    );
    // The key echoed JSON-escaped, and in base64 at every alignment.
    let json = gate_fails("json", "out-json", "HTTP 401");
    assert!(json.stderr.contains("[redacted]"), "{}", json.stderr);
    let b64 = gate_fails("b64", "out-b64", "HTTP 401");
    assert!(
        b64.stderr.contains("bad credentials QmVhcmVyIH[redacted]"),
        "{}",
        b64.stderr
    );

    // A piece of the key in an answer, quoted in the default judge's reason.
    project.configure("default", "", "qrels.jsonl");
    let outcome = project.run(Ragate::gate("smoke", "run.jsonl", "out-piece"));
    assert_eq!(outcome.code, 2, "no baseline yet: {}", outcome.stderr);
    let results =
        std::fs::read_to_string(project.dir.path().join("out-piece/results.json")).unwrap();
    assert!(results.contains("under account [redacted]"), "{results}");

    // A command judge whose argv holds a DSN, in the gate, `synth` and `holes`.
    let outcome = gate_fails("cj", "out-cj", "--dsn=${SENTRY_DSN}");
    assert!(outcome.stderr.contains("judge `cj`"), "{}", outcome.stderr);
    let synth = project.run(Ragate::new([
        "synth",
        "--generator",
        "cj",
        "--out",
        "drafts",
        "--count",
        "2",
    ]));
    assert_eq!(synth.code, 2, "{}", synth.stderr);
    assert!(
        synth.stderr.contains("--dsn=${SENTRY_DSN}"),
        "{}",
        synth.stderr
    );
    let holes = project.run(Ragate::new([
        "holes",
        "--tier",
        "smoke",
        "--run",
        "run.jsonl",
        "--judge",
        "cj",
        "--out",
        "holes.jsonl",
    ]));
    assert_eq!(holes.code, 2, "{}", holes.stderr);
    assert!(
        holes.stderr.contains("--dsn=${SENTRY_DSN}"),
        "{}",
        holes.stderr
    );

    // A pipeline that prints the key in base64 on its stderr, then fails.
    let pipeline = "pipeline: { command: [sh, -c, 'cat > /dev/null; printf %s \"$CANARY_API_KEY\" | base64 >&2; printf \"ab%s\" \"$CANARY_API_KEY\" | base64 >&2; exit 1'] }\n";
    project.configure("default", pipeline, "qrels.jsonl");
    let outcome = project.run(Ragate::new([
        "gate",
        "--tier",
        "smoke",
        "--out",
        "out-pipeline",
    ]));
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(outcome.stderr.contains("[redacted]"), "{}", outcome.stderr);

    // A qrels path from a variable, missing: named as written.
    project.configure("default", "", "\"${QRELS_STEM}.jsonl\"");
    let outcome = project.run(Ragate::gate("smoke", "run.jsonl", "out-path"));
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(
        outcome.stderr.contains("${QRELS_STEM}.jsonl"),
        "{}",
        outcome.stderr
    );

    project.assert_no_output_leaks();
}

#[test]
fn the_needles_find_what_they_stand_for() {
    let needles = needles();
    let header = format!("Basic {}", STANDARD.encode(format!("judge:{}", password())));
    assert!(leak(&header, &needles).is_some());
    assert!(leak(&base64_echo(&format!("Bearer {}", key())), &needles).is_some());
    assert!(leak(&json_escaped_echo(&key()), &needles).is_some());
    assert!(leak(&format!("name {} not here", &CORE[2..14]), &needles).is_some());
    assert!(leak("nothing of it", &needles).is_none());
}
