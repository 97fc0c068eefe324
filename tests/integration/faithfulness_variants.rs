//! The example's smoke gate against answers rewritten to contradict their contexts: every number
//! n becomes 3n+1, or a `not` follows the first is/are/can/must of each sentence (exit 1, a JUnit
//! failure naming faithfulness); the control, the same sentences in reverse order, passes.

use std::path::Path;

use regex_lite::Regex;
use serde_json::Value;

use crate::gate_flow::{README_PIPELINE, built_example_pipeline, copy_files};
use crate::{path_str, ragate_in};

/// The answer's sentences (split after `.`, `!` or `?` followed by whitespace).
fn sentences(answer: &str) -> Vec<String> {
    let end = Regex::new(r"[.!?]\s+").unwrap();
    let mut out = Vec::new();
    let mut start = 0;
    for m in end.find_iter(answer) {
        out.push(answer[start..m.start() + 1].to_string());
        start = m.end();
    }
    out.push(answer[start..].trim().to_string());
    out.retain(|s| !s.is_empty());
    out
}

fn numbers_tripled(answer: &str) -> String {
    Regex::new(r"\d+")
        .unwrap()
        .replace_all(answer, |c: &regex_lite::Captures<'_>| {
            (3 * c[0].parse::<u64>().unwrap() + 1).to_string()
        })
        .into_owned()
}

fn negated(answer: &str) -> String {
    let verb = Regex::new(r"\b(is|are|can|must)\b").unwrap();
    sentences(answer)
        .iter()
        .map(|s| verb.replace(s, "$1 not").into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn reordered(answer: &str) -> String {
    let mut sentences = sentences(answer);
    sentences.reverse();
    sentences.join(" ")
}

/// The run with every answer rewritten by `rewrite`, and how many answers changed.
fn rewritten(run: &str, rewrite: fn(&str) -> String) -> (String, usize) {
    let mut changed = 0;
    let mut out = String::new();
    for line in run.lines() {
        let mut record: Value = serde_json::from_str(line).unwrap();
        if let Some(answer) = record["answer"].as_str() {
            let new = rewrite(answer);
            changed += usize::from(new != answer);
            record["answer"] = Value::String(new);
        }
        out.push_str(&record.to_string());
        out.push('\n');
    }
    (out, changed)
}

#[test]
fn the_smoke_gate_fails_on_contradicted_answers_and_passes_the_reordered_control() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    for sub in ["corpus", "qrels", "baselines"] {
        copy_files(&repo.join(sub), &dir.join(sub));
    }
    let config = std::fs::read_to_string(repo.join("eval-config.yaml")).unwrap();
    let pipeline = built_example_pipeline(repo);
    let command = format!(r#"["{}", "--variant", "hybrid"]"#, path_str(&pipeline));
    std::fs::write(
        dir.join("eval-config.yaml"),
        config.replace(README_PIPELINE, &command),
    )
    .unwrap();
    let real = ragate_in(dir, &["gate", "--tier", "smoke", "--out", "real"]);
    assert_eq!(real.code, 0, "{}\n{}", real.stdout, real.stderr);
    let run = std::fs::read_to_string(dir.join("real/run.jsonl")).unwrap();

    type Rewrite = fn(&str) -> String;
    let variants: [(&str, Rewrite, i32); 3] = [
        ("numbers", numbers_tripled, 1),
        ("negated", negated, 1),
        ("control", reordered, 0),
    ];
    for (name, rewrite, expected) in variants {
        let (text, changed) = rewritten(&run, rewrite);
        assert!(changed >= 5, "{name}: only {changed} answers changed");
        let file = format!("{name}.jsonl");
        std::fs::write(dir.join(&file), text).unwrap();
        let out = format!("out-{name}");
        let gate = ragate_in(
            dir,
            &["gate", "--tier", "smoke", "--run", &file, "--out", &out],
        );
        assert_eq!(
            gate.code, expected,
            "{name}: {}\n{}",
            gate.stdout, gate.stderr
        );
        let junit = std::fs::read_to_string(dir.join(&out).join("junit.xml")).unwrap();
        let failure = Regex::new(r#"<testcase name="faithfulness \[all\]"[^>]*>\s*<failure"#)
            .unwrap()
            .is_match(&junit);
        assert_eq!(failure, expected == 1, "{name}: {junit}");
        let summary = std::fs::read_to_string(dir.join(&out).join("summary.md")).unwrap();
        let reason = match name {
            "numbers" => Some("(unsupported: number "),
            "negated" => Some("(contradicted: the claim negates "),
            _ => None,
        };
        if let Some(reason) = reason {
            assert!(summary.contains(reason), "{name}: {summary}");
        }
    }
}
