//! What the command line promises whatever the run: a closed stderr never turns a status into a
//! panic (101); `validate`'s findings are diagnostics on stderr; `--help` and the man page state
//! every exit code and its meaning; every `--tier` says what it is; `gate --shard I/N --format
//! json` prints a document; an error document says whether a retry may fix its cause.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;

use ragate::exit_code::ExitStatus;
use serde_json::Value;

use crate::gate_flow::setup;
use crate::json_schema::Schema;
use crate::{clean_command, ragate, ragate_in};

/// The gate_flow data (120 queries) gated through a `command` pipeline that prints its run: the
/// gate writes a note, a line per tenth of the queries and warnings on stderr.
const COMMAND_PIPELINE: &str = r#"version: 1
metrics: [recall@5, mrr, ndcg@10]
slices: [class]
pipeline:
  command: ["sh", "-c", "cat base.jsonl"]
tiers:
  regression: { qrels: qrels.jsonl, baseline: baselines/regression.json }
gate:
  min_queries: 5
  rules:
    - { metric: recall@5, max_drop: 0.02 }
"#;

/// Runs ragate in `dir` with stderr on a pipe whose read end is closed before ragate writes to
/// it (and, with `close_stdout`, stdout too, as `ragate ... 2>&1 | head -0` leaves them); the exit
/// code and what stdout got (nothing when it was closed).
fn with_stderr_closed(dir: &Path, args: &[&str], close_stdout: bool) -> (i32, String) {
    let mut child = clean_command(env!("CARGO_BIN_EXE_ragate"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ragate binary runs");
    drop(child.stderr.take());
    let mut stdout = String::new();
    let pipe = child.stdout.take().unwrap();
    if close_stdout {
        drop(pipe);
    } else {
        let mut pipe = pipe;
        pipe.read_to_string(&mut stdout).unwrap();
    }
    let status = child.wait().unwrap();
    let code = status.code().expect("exited, not killed by a signal");
    (code, stdout)
}

#[test]
fn a_closed_stderr_ends_the_run_with_its_own_status_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    std::fs::write(dir.join("eval-config.yaml"), COMMAND_PIPELINE).unwrap();
    // The first run: no baseline yet (exit 2), with progress, a note and warnings on stderr.
    let (code, stdout) = with_stderr_closed(dir, &["gate", "--tier", "regression"], false);
    assert_eq!(code, 2, "not 101 (a panic): {stdout}");
    assert!(stdout.contains("recall@5"), "the run went on: {stdout}");
    let accepted = ragate_in(
        dir,
        &[
            "baseline",
            "accept",
            "--tier",
            "regression",
            "--from",
            ".ragate/out/regression/results.json",
        ],
    );
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    // A pass, with both streams closed (`ragate gate ... 2>&1 | head -0`).
    let (code, _) = with_stderr_closed(dir, &["gate", "--tier", "regression"], true);
    assert_eq!(code, 0, "not 101 (a panic)");
    // A regression still exits 1: ranks 7 and 9 instead of 1 and 2 for most paraphrased queries.
    let regressed = COMMAND_PIPELINE.replace("cat base.jsonl", "cat regressed.jsonl");
    std::fs::write(dir.join("eval-config.yaml"), regressed).unwrap();
    let (code, _) = with_stderr_closed(dir, &["gate", "--tier", "regression"], false);
    assert_eq!(code, 1, "not 101 (a panic)");
}

#[test]
fn validate_prints_its_findings_on_stderr_and_its_document_alone_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    // No baseline yet: a warning.
    let warned = ragate_in(dir, &["validate"]);
    assert_eq!(warned.code, 0, "{}", warned.stderr);
    assert!(
        warned
            .stderr
            .starts_with("warning: tier `regression`: no baseline yet"),
        "{}",
        warned.stderr
    );
    assert!(!warned.stdout.contains("warning:"), "{}", warned.stdout);
    assert!(
        warned.stdout.ends_with("1 tiers, 0 errors, 1 warnings\n"),
        "the count stays on stdout: {}",
        warned.stdout
    );
    let json = ragate_in(dir, &["validate", "--format", "json"]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let document: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["warnings"].as_array().map(Vec::len), Some(1));

    // Missing qrels: an error as well.
    std::fs::remove_file(dir.join("qrels.jsonl")).unwrap();
    let failed = ragate_in(dir, &["validate"]);
    assert_eq!(failed.code, 2, "{}", failed.stderr);
    assert!(
        failed.stderr.contains("\nerror: tier `regression`: "),
        "{}",
        failed.stderr
    );
    assert!(
        !failed.stdout.contains("error:") && !failed.stdout.contains("warning:"),
        "{}",
        failed.stdout
    );
    assert!(failed.stdout.ends_with("1 tiers, 1 errors, 1 warnings\n"));
    let json = ragate_in(dir, &["validate", "--format", "json"]);
    assert_eq!(json.code, 2, "{}", json.stderr);
    let document: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["errors"].as_array().map(Vec::len), Some(1));
}

#[test]
fn help_and_the_man_page_state_every_exit_code_and_its_meaning() {
    let help = ragate(&["--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    let short = ragate(&["-h"]);
    let man = ragate(&["man"]);
    assert_eq!(man.code, 0, "{}", man.stderr);
    let page = man.stdout.replace("\\-", "-").replace("\\*(Aq", "'");
    let section = page
        .split_once(".SH \"EXIT STATUS\"\n")
        .expect("an EXIT STATUS section")
        .1;
    for (code, word) in [(0, "pass: "), (1, "regression: "), (2, "not evaluated: ")] {
        let status = ExitStatus::from_code(code).unwrap();
        let meaning = status.meaning();
        assert!(meaning.starts_with(word), "{meaning}");
        let line = format!("\n  {code}  {meaning}");
        assert!(help.stdout.contains(&line), "{line} in {}", help.stdout);
        assert!(short.stdout.contains(&line), "{line} in {}", short.stdout);
        let entry = format!(".TP\n\\fB{code}\\fR\n{meaning}\n");
        assert!(section.contains(&entry), "{entry} in {section}");
    }
    assert!(
        help.stdout.contains("\nExit status:\n  0  "),
        "{}",
        help.stdout
    );
    let error = ExitStatus::Error.meaning();
    assert!(
        error.contains("config or input to fix")
            && error.contains("endpoint down")
            && error.contains("\"retryable\": true"),
        "{error}"
    );
}

#[test]
fn every_tier_option_says_what_it_is() {
    for command in [
        &["baseline", "accept"][..],
        &["baseline", "show"],
        &["report"],
        &["history", "add"],
        &["history", "show"],
        &["judge-agreement"],
        &["gate"],
        &["merge"],
        &["plan"],
        &["holes"],
    ] {
        let help = ragate(&[command, &["-h"]].concat());
        assert_eq!(help.code, 0, "{command:?}: {}", help.stderr);
        let line = help
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with("--tier <TIER>"))
            .unwrap_or_else(|| panic!("{command:?}: {}", help.stdout));
        let text = line.trim_start().trim_start_matches("--tier <TIER>").trim();
        assert!(
            text.starts_with("The tier"),
            "{command:?}: `{line}` has no help"
        );
    }
}

#[test]
fn a_shard_with_format_json_prints_its_document() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    let schema = Schema::published("gate-shard.schema.json");
    let mut total = 0;
    for index in 1..=2 {
        let shard = format!("{index}/2");
        let out = format!("shard{index}");
        let outcome = ragate_in(
            dir,
            &[
                "gate",
                "--tier",
                "regression",
                "--run",
                "base.jsonl",
                "--shard",
                &shard,
                "--out",
                &out,
                "--format",
                "json",
            ],
        );
        assert_eq!(outcome.code, 0, "{}", outcome.stderr);
        let document: Value = serde_json::from_str(&outcome.stdout)
            .unwrap_or_else(|e| panic!("{e}: {:?}", outcome.stdout));
        assert_eq!(schema.errors(&document), Vec::<String>::new(), "{document}");
        assert_eq!(document["format"], "ragate-gate-shard/1");
        assert_eq!(document["tier"], "regression");
        assert_eq!(document["shard"], shard.as_str());
        assert_eq!(document["exit_code"], 0);
        let output = document["output"].as_str().unwrap();
        assert_eq!(Path::new(output), Path::new(&out).join("shard.json"));
        let written: Value =
            serde_json::from_slice(&std::fs::read(dir.join(output)).unwrap()).unwrap();
        let queries = document["queries"].as_u64().unwrap();
        assert_eq!(
            written["evaluated"]["results"]["queries"]
                .as_object()
                .map(|q| q.len() as u64),
            Some(queries),
        );
        total += queries;
    }
    assert_eq!(total, 120, "every query in one shard");
    // The table format prints no document.
    let table = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "base.jsonl",
            "--shard",
            "1/2",
            "--out",
            "table",
        ],
    );
    assert_eq!(
        (table.code, table.stdout.as_str()),
        (0, ""),
        "{}",
        table.stderr
    );
}

/// An `http` pipeline at `url` with `max_retries` and a short timeout.
fn http_pipeline(dir: &Path, url: &str, max_retries: u32) {
    let config = COMMAND_PIPELINE.replace(
        r#"command: ["sh", "-c", "cat base.jsonl"]"#,
        &format!("http: {{ url: \"{url}\", max_retries: {max_retries}, timeout_s: 5 }}"),
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
}

/// A loopback endpoint that answers every request with `status` (`404 Not Found`).
fn answering(status: &'static str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/query", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
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
                        if reader.read_line(&mut header).unwrap_or(0) == 0 {
                            return;
                        }
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
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let response = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nno"
                    );
                    if stream.write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

#[test]
fn an_error_document_says_whether_a_retry_may_fix_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    // Nothing listens there: every attempt is refused (a transient failure), then retries run out.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}/query", closed.local_addr().unwrap());
    drop(closed);
    let gate = ["gate", "--tier", "regression", "--format", "json"];
    let holes = ["holes", "--tier", "regression", "--format", "json"];
    let document = |args: &[&str]| -> Value {
        let outcome = ragate_in(dir, args);
        assert_eq!(outcome.code, 2, "{args:?}: {}", outcome.stderr);
        serde_json::from_str(&outcome.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {:?}", outcome.stdout))
    };
    http_pipeline(dir, &down, 1);
    for args in [&gate[..], &holes[..]] {
        let document = document(args);
        assert_eq!(document["status"], "error", "{document}");
        assert_eq!(document["retryable"], true, "{args:?}: {document}");
    }
    // 503 on every attempt: the endpoint is down too.
    http_pipeline(dir, &answering("503 Service Unavailable"), 0);
    assert_eq!(document(&gate)["retryable"], true);
    // A 404 would recur: fix the URL.
    http_pipeline(dir, &answering("404 Not Found"), 1);
    for args in [&gate[..], &holes[..]] {
        let document = document(args);
        assert_eq!(document["retryable"], false, "{args:?}: {document}");
    }
    // A config error would recur.
    std::fs::write(
        dir.join("eval-config.yaml"),
        "version: 1\nmetrics: [nope]\n",
    )
    .unwrap();
    for args in [&gate[..], &holes[..], &["validate", "--format", "json"][..]] {
        let document = document(args);
        assert_eq!(document["retryable"], false, "{args:?}: {document}");
    }
    let gate_schema = Schema::published("gate.schema.json");
    assert!(gate_schema.is_valid(&document(&gate)));
}
