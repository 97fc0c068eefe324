//! The streaming TREC reader across block boundaries: queries larger than a block, errors deep in
//! the file, duplicates and chunk ids, checked against the native reader on the same ranking.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::{path_str, ragate};

fn eval_json(qrels: &Path, run: &Path, extra: &[&str]) -> (Value, String) {
    let mut args = vec![
        "eval",
        "--qrels",
        path_str(qrels),
        "--run",
        path_str(run),
        "--format",
        "json",
        "--per-query",
        "-m",
        "precision@10",
        "-m",
        "recall@1000",
        "-m",
        "mrr",
        "-m",
        "ndcg@20",
        "-m",
        "map",
        "-m",
        "r_precision",
    ];
    args.extend_from_slice(extra);
    let out = ragate(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    (serde_json::from_str(&out.stdout).unwrap(), out.stderr)
}

/// A deterministic run: `queries` queries; query i retrieves `docs(i)` docs in score order.
fn write_runs(
    dir: &Path,
    queries: usize,
    docs: impl Fn(usize) -> usize,
) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let (mut qrels, mut trec, mut native) = (String::new(), String::new(), String::new());
    for q in 0..queries {
        let n = docs(q);
        let mut retrieved = Vec::new();
        for rank in 1..=n {
            let doc = format!("doc{:06}", (rank * 7919 + q * 31) % 1_000_003);
            let score = (n - rank) as f64 / 8.0; // ties come in runs of 8 only at equal scores: none here
            writeln!(trec, "query{q} Q0 {doc} {rank} {score} tag").unwrap();
            retrieved.push(format!("{{\"doc_id\":\"{doc}\"}}"));
            if rank % 97 == q % 97 || rank == n {
                writeln!(qrels, "query{q} 0 {doc} {}", 1 + rank % 3).unwrap();
            }
        }
        writeln!(
            native,
            "{{\"qid\":\"query{q}\",\"retrieved\":[{}]}}",
            retrieved.join(",")
        )
        .unwrap();
    }
    let paths = (
        dir.join("qrels.txt"),
        dir.join("run.txt"),
        dir.join("run.jsonl"),
    );
    std::fs::write(&paths.0, qrels).unwrap();
    std::fs::write(&paths.1, trec).unwrap();
    std::fs::write(&paths.2, native).unwrap();
    paths
}

#[test]
fn many_blocks_and_a_query_larger_than_a_block_agree_with_the_native_reader() {
    let dir = tempfile::tempdir().unwrap();
    // ~36 bytes a line; query 3 has 200,000 lines (> 4 MiB), the rest 3,000 each: about 10 blocks.
    let (qrels, trec, native) =
        write_runs(dir.path(), 60, |q| if q == 3 { 200_000 } else { 3_000 });
    assert!(std::fs::metadata(&trec).unwrap().len() > 12 << 20);
    for threads in ["1", "2", "3"] {
        let (from_trec, _) = eval_json(&qrels, &trec, &["--threads", threads]);
        let (from_native, _) = eval_json(&qrels, &native, &[]);
        assert_eq!(from_trec, from_native, "threads {threads}");
        assert_eq!(from_trec["queries"], 60);
    }
}

#[test]
fn an_error_deep_in_the_file_names_its_absolute_line() {
    let dir = tempfile::tempdir().unwrap();
    let (qrels, trec, _) = write_runs(dir.path(), 40, |_| 5_000);
    let mut text = std::fs::read_to_string(&trec).unwrap();
    let line = 187_654; // in the fifth block or so
    let start: usize = text.lines().take(line - 1).map(|l| l.len() + 1).sum();
    let end = start + text[start..].find('\n').unwrap();
    // Fields after the sixth are accepted (as trec_eval does); a missing one is an error.
    let broken = text[start..end].replace(" tag", "");
    text.replace_range(start..end, &broken);
    std::fs::write(&trec, text).unwrap();
    let out = ragate(&[
        "eval",
        "--qrels",
        path_str(&qrels),
        "--run",
        path_str(&trec),
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(&format!("run.txt:{line}: expected 6 whitespace-separated fields `qid Q0 doc_id rank score tag`, found 5")),
        "{}",
        out.stderr
    );
}

#[test]
fn duplicates_are_ignored_with_one_warning_and_chunks_map_to_documents() {
    let dir = tempfile::tempdir().unwrap();
    let qrels = dir.path().join("qrels.txt");
    std::fs::write(&qrels, "q1 0 a 1\nq1 0 b 1\n").unwrap();
    let run = dir.path().join("run.txt");
    // a twice (the second is ignored), then b at rank 2 of the deduplicated list
    std::fs::write(&run, "q1 Q0 a 1 3.0 t\nq1 Q0 a 2 2.5 t\nq1 Q0 b 3 2.0 t\n").unwrap();
    let (values, stderr) = eval_json(&qrels, &run, &[]);
    assert_eq!(values["per_query"]["q1"]["map"], 1.0);
    assert_eq!(
        stderr.matches("warning:").count(),
        1,
        "one warning: {stderr}"
    );
    assert!(stderr.contains("1 duplicate doc ids in rankings were ignored (the first occurrence counts), the first: `a` in query `q1`"), "{stderr}");

    let chunks = dir.path().join("chunks.jsonl");
    std::fs::write(&chunks, "{\"qid\":\"q1\",\"retrieved\":[{\"doc_id\":\"a#0\"},{\"doc_id\":\"a#3\"},{\"doc_id\":\"x#1\"},{\"doc_id\":\"b#2\"}]}\n").unwrap();
    let (with_sep, stderr) = eval_json(&qrels, &chunks, &["--chunk-separator", "#"]);
    // a, x, b after mapping: b is at rank 3, AP = (1 + 2/3) / 2; the later chunk of a is silent
    let map = with_sep["per_query"]["q1"]["map"].as_f64().unwrap();
    assert!((map - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-12, "{map}");
    assert!(!stderr.contains("duplicate"), "{stderr}");
}

#[test]
fn missing_and_unknown_queries_are_counted_and_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let qrels = dir.path().join("qrels.txt");
    std::fs::write(&qrels, "q1 0 a 1\nq2 0 b 1\nq3 0 c 0\n").unwrap();
    let run = dir.path().join("run.txt");
    std::fs::write(&run, "q1 Q0 a 1 3.0 t\nzz Q0 a 1 3.0 t\n").unwrap();
    let (values, stderr) = eval_json(&qrels, &run, &[]);
    assert_eq!(values["queries"], 2);
    assert_eq!(values["missing_from_run"], 1);
    assert_eq!(values["excluded_no_relevant"], 1);
    assert_eq!(values["run_queries_not_in_qrels"], 1);
    assert_eq!(values["metrics"]["mrr"], 0.5, "q2 is missing and scores 0");
    assert!(
        stderr.contains("1 run queries are not in the qrels and were ignored, the first: `zz`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 judged queries are missing from the run and score 0"),
        "{stderr}"
    );
}

#[test]
fn an_ungrouped_run_larger_than_the_blocks_in_flight_gives_the_grouped_values() {
    let dir = tempfile::tempdir().unwrap();
    // ~21 MB: more than the 4 blocks of 4 MiB one worker keeps in flight (the reader used to
    // wait forever on its channel once a repeated qid had stopped the first pass).
    let (qrels, trec, _) = write_runs(dir.path(), 150, |q| 3_500 + q * 7);
    let text = std::fs::read_to_string(&trec).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..lines.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        lines.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let shuffled = dir.path().join("shuffled.txt");
    std::fs::write(&shuffled, lines.join("\n")).unwrap();
    assert!(std::fs::metadata(&shuffled).unwrap().len() > 20 << 20);
    let (from_grouped, grouped_stderr) = eval_json(&qrels, &trec, &["--threads", "1"]);
    for threads in ["1", "2"] {
        let (from_shuffled, stderr) = eval_json(&qrels, &shuffled, &["--threads", threads]);
        assert_eq!(from_shuffled, from_grouped, "threads {threads}");
        assert!(
            stderr.contains("are not contiguous") && stderr.contains("sorted by query in memory"),
            "{stderr}"
        );
    }
    assert!(!grouped_stderr.contains("contiguous"), "{grouped_stderr}");
}
