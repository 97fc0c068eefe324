//! The built pipeline answers a query on stdin with one native run line over the repository's
//! example corpus, the same way every time. (Also makes `cargo test --workspace` build the
//! `pipeline` binary, which ragate's integration tests run in place of the config's `cargo run`.)

use std::io::Write;
use std::process::{Command, Stdio};

fn answer(query: &str, variant: &str) -> serde_json::Value {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipeline"))
        .args(["--variant", variant, "--k", "3"])
        .current_dir(&repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the pipeline starts");
    let line = serde_json::json!({ "qid": "q1", "query": query }).to_string() + "\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    serde_json::from_str(text.trim_end()).unwrap()
}

#[test]
fn a_query_gets_one_run_line_with_docs_contexts_and_an_answer() {
    let query = "who owns objects uploaded by other accounts";
    let line = answer(query, "hybrid");
    assert_eq!(line["qid"], "q1", "{line}");
    let docs = line["retrieved"].as_array().expect("retrieved docs");
    assert!((1..=3).contains(&docs.len()), "{line}");
    assert!(
        docs.iter()
            .all(|d| d["doc_id"].is_string() && d["score"].is_number()),
        "{line}"
    );
    assert_eq!(docs[0]["doc_id"], "object-ownership", "{line}");
    assert!(
        !line["contexts"].as_array().expect("contexts").is_empty(),
        "{line}"
    );
    assert!(!line["answer"].as_str().unwrap_or("").is_empty(), "{line}");
    // Deterministic without --noise.
    assert_eq!(line, answer(query, "hybrid"));
}
