//! Bad input gives one error naming file, line and expectation, exit 2, never a panic;
//! a byte-order mark and CRLF line endings are accepted.

use std::path::Path;

use crate::{Outcome, path_str, ragate};

const QRELS: &str = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n";
const RUN: &str = "q1 Q0 d2 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq2 Q0 d3 1 1.0 t\n";

fn eval_files(dir: &Path, qrels: (&str, &[u8]), run: (&str, &[u8]), extra: &[&str]) -> Outcome {
    let qrels_path = dir.join(qrels.0);
    let run_path = dir.join(run.0);
    std::fs::write(&qrels_path, qrels.1).unwrap();
    std::fs::write(&run_path, run.1).unwrap();
    let mut args = vec![
        "eval",
        "--qrels",
        path_str(&qrels_path),
        "--run",
        path_str(&run_path),
    ];
    args.extend_from_slice(extra);
    ragate(&args)
}

fn assert_error(out: &Outcome, expected: &str) {
    assert_eq!(out.code, 2, "stderr: {}", out.stderr);
    assert!(
        out.stderr.contains(expected),
        "expected `{expected}` in:\n{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert!(
        out.stdout.is_empty(),
        "nothing is printed as a result: {}",
        out.stdout
    );
}

#[test]
fn bad_runs_name_file_line_and_expectation() {
    let cases: [(&str, &[u8], &str); 11] = [
        (
            "run.jsonl",
            b"{\"qid\":\"q1\",\"retrieved\":[",
            "run.jsonl:1:25: EOF while parsing a list: expected a JSON object",
        ),
        (
            "run.jsonl",
            b"{\"qid\":\"q1\",\"retrieved\":\"d1\"}",
            "run.jsonl:1:28: invalid type: string \"d1\", expected a sequence",
        ),
        (
            "run.txt",
            b"q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 high t\n",
            "run.txt:2: score `high`: expected a finite number",
        ),
        (
            "run.txt",
            b"q1 Q0 d1 1 NaN t\n",
            "run.txt:1: score `NaN`: expected a finite number",
        ),
        (
            "run.txt",
            b"q1 Q0 d1 1 inf t\n",
            "run.txt:1: score `inf`: expected a finite number",
        ),
        (
            "run.txt",
            b"q1 Q0 d1 1 3.0 t\nq1 Q0 d\xFF 2 2.0 t\n",
            "run.txt:2: invalid UTF-8 at byte 8 of the line: expected UTF-8 text",
        ),
        (
            "run.txt",
            b"q1 Q0 d1 1 3.0 t\n\nq1 Q0 d2 2.0 t\n",
            "run.txt:3: expected 6 whitespace-separated fields `qid Q0 doc_id rank score tag`, found 5",
        ),
        (
            "run.txt",
            b"q1 Q0 d1 first 3.0 t\n",
            "run.txt:1: rank `first`: expected an integer",
        ),
        ("run.txt", b"", "run.txt: the file is empty: expected a run"),
        (
            "run.txt",
            b"q1 d1 3.0\n",
            "run.txt:1: cannot tell the run format: tried native JSONL (a JSON object a line) and TREC",
        ),
        (
            "run.txt",
            b"x1 Q0 d1 1 3.0 t\nx2 Q0 d1 1 3.0 t\n",
            "none of the run's 2 queries is in the qrels",
        ),
    ];
    for (name, run, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = eval_files(
            dir.path(),
            ("qrels.txt", QRELS.as_bytes()),
            (name, run),
            &[],
        );
        assert_error(&out, expected);
    }
}

#[test]
fn an_explicit_run_format_is_obeyed() {
    let dir = tempfile::tempdir().unwrap();
    let out = eval_files(
        dir.path(),
        ("qrels.txt", QRELS.as_bytes()),
        ("run.txt", RUN.as_bytes()),
        &["--run-format", "native"],
    );
    assert_error(&out, "run.txt:1:1: expected value: expected a JSON object");
}

#[test]
fn bad_qrels_name_file_line_and_expectation() {
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "qrels.txt",
            b"",
            "qrels.txt: the file is empty: expected qrels (native JSONL, TREC",
        ),
        (
            "qrels.txt",
            b"q1 0 d1 1\nq1 0 d2 two\n",
            "qrels.txt:2: grade `two` of doc `d2`: expected an integer grade",
        ),
        (
            "qrels.jsonl",
            b"{\"qid\":\"q1\",\"query\":\"x\",\"graded_relevance\":{\"d1\":\"high\"}}",
            "qrels.jsonl:1: graded_relevance of `d1` is \"high\": expected an integer grade",
        ),
        (
            "qrels.txt",
            b"q1 d1\n",
            "qrels.txt:1: cannot tell the qrels format",
        ),
    ];
    for (name, qrels, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = eval_files(dir.path(), (name, qrels), ("run.txt", RUN.as_bytes()), &[]);
        assert_error(&out, expected);
    }
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = eval_files(
        dir.path(),
        ("qrels.txt", QRELS.as_bytes()),
        ("run.txt", RUN.as_bytes()),
        &["-m", "recal@5"],
    );
    assert_error(
        &out,
        "unknown metric `recal@5` (did you mean `recall@5`?): expected one of precision@K, recall@K",
    );
    let missing = ragate(&["eval", "--qrels", "/nonexistent/qrels.txt", "--run", "x"]);
    assert_error(
        &missing,
        "error: cannot read /nonexistent/qrels.txt\n  caused by: No such file or directory",
    );
}

#[test]
fn bom_and_crlf_are_accepted() {
    let plain_dir = tempfile::tempdir().unwrap();
    let plain = eval_files(
        plain_dir.path(),
        ("qrels.txt", QRELS.as_bytes()),
        ("run.txt", RUN.as_bytes()),
        &["--format", "json", "--per-query"],
    );
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let windows = |text: &str| format!("\u{feff}{}", text.replace('\n', "\r\n")).into_bytes();
    let crlf_dir = tempfile::tempdir().unwrap();
    let crlf = eval_files(
        crlf_dir.path(),
        ("qrels.txt", &windows(QRELS)),
        ("run.txt", &windows(RUN)),
        &["--format", "json", "--per-query"],
    );
    assert_eq!(crlf.code, 0, "{}", crlf.stderr);
    assert_eq!(crlf.stdout, plain.stdout);
    assert!(
        plain
            .stdout
            .contains("\"q1\":{\"precision@5\":0.2,\"recall@5\":1.0"),
        "{}",
        plain.stdout
    );
}

/// A 30 MB id from an untrusted file is echoed cut to 200 characters with its full length,
/// in errors and warnings alike.
#[test]
fn a_huge_id_is_echoed_cut_with_its_length() {
    let dir = tempfile::tempdir().unwrap();
    let big = "Q".repeat(30_000_000);
    let line = |qid: &str, gold: &str| {
        format!("{{\"qid\":\"{qid}\",\"query\":\"x\",\"gold_doc_ids\":[{gold}]}}\n")
    };
    let run_line =
        |qid: &str| format!("{{\"qid\":\"{qid}\",\"retrieved\":[{{\"doc_id\":\"d\"}}]}}\n");
    let cut = format!("{}… (30000000 characters)", "Q".repeat(200));
    let twice = format!("{}{}", line(&big, "\"d\""), line(&big, "\"d\""));
    let doc_twice = line("q1", &format!("\"{big}\",\"{big}\""));
    let unknown = format!("{}{}", run_line("q1"), run_line(&big));
    let cases: [(&str, &str, &str); 3] = [
        (&twice, &run_line("q1"), "appears twice"),
        (
            &doc_twice,
            &run_line("q1"),
            "twice: expected each document once",
        ),
        (
            &line("q1", "\"d\""),
            &unknown,
            "run queries are not in the qrels",
        ),
    ];
    for (qrels, run, expected) in cases {
        let outcome = eval_files(
            dir.path(),
            ("qrels.jsonl", qrels.as_bytes()),
            ("run.jsonl", run.as_bytes()),
            &[],
        );
        assert!(
            outcome.stderr.contains(expected),
            "{expected}: {}",
            &outcome.stderr[..outcome.stderr.len().min(600)]
        );
        assert!(outcome.stderr.contains(&cut), "{expected}");
        assert!(
            outcome.stderr.len() < 2_000,
            "{expected}: {} bytes on stderr",
            outcome.stderr.len()
        );
    }
}
