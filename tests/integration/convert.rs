//! `ragate convert`: TREC qrels with TSV texts to native JSONL that `eval` reads, in the queries
//! file's order, the same bytes every time; a malformed line is an error with file:line, exit 2.

use crate::ragate_in;

#[test]
fn trec_qrels_and_tsv_queries_become_native_qrels_in_a_fixed_order() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("qrels.txt"),
        "q2 0 d9 1\nq1 0 d2 2\nq1 0 d1 0\nq3 0 d5 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("queries.tsv"),
        "q3\tthird\nq1\tfirst\nq2\tsecond\nq4\tnone\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("run.jsonl"),
        "{\"qid\":\"q1\",\"retrieved\":[{\"doc_id\":\"d2\"}]}\n",
    )
    .unwrap();
    let convert = |out: &str| {
        let outcome = ragate_in(
            dir,
            &[
                "convert",
                "--qrels",
                "qrels.txt",
                "--queries",
                "queries.tsv",
                "--out",
                out,
            ],
        );
        assert_eq!(outcome.code, 0, "{}", outcome.stderr);
        assert!(
            outcome
                .stderr
                .contains("ragate convert: 3 queries written to"),
            "{}",
            outcome.stderr
        );
        assert!(
            outcome
                .stderr
                .contains("; 1 queries without judgments left out"),
            "{}",
            outcome.stderr
        );
        std::fs::read_to_string(dir.join(out)).unwrap()
    };
    let first = convert("a.jsonl");
    assert_eq!(
        first,
        "{\"qid\":\"q3\",\"query\":\"third\",\"graded_relevance\":{\"d5\":1}}\n\
         {\"qid\":\"q1\",\"query\":\"first\",\"graded_relevance\":{\"d1\":0,\"d2\":2}}\n\
         {\"qid\":\"q2\",\"query\":\"second\",\"graded_relevance\":{\"d9\":1}}\n"
    );
    assert_eq!(convert("b.jsonl"), first, "the same bytes every run");
    let eval = ragate_in(
        dir,
        &[
            "eval",
            "--qrels",
            "a.jsonl",
            "--run",
            "run.jsonl",
            "-m",
            "mrr",
            "--format",
            "tsv",
        ],
    );
    assert_eq!(eval.code, 0, "{}", eval.stderr);
}

#[test]
fn a_malformed_line_is_named_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("qrels.tsv"), "q1\td1\t1\nq2\td2\tx\n").unwrap();
    std::fs::write(dir.join("queries.tsv"), "q1\tfirst\nq2 no tab\n").unwrap();
    let bad_qrels = ragate_in(
        dir,
        &[
            "convert",
            "--qrels",
            "qrels.tsv",
            "--queries",
            "queries.tsv",
            "--out",
            "out.jsonl",
        ],
    );
    assert_eq!(bad_qrels.code, 2, "{}", bad_qrels.stderr);
    assert!(
        bad_qrels
            .stderr
            .contains("qrels.tsv:2: grade `x` of doc `d2`: expected an integer grade"),
        "{}",
        bad_qrels.stderr
    );
    std::fs::write(dir.join("qrels.tsv"), "q1\td1\t1\n").unwrap();
    let bad_queries = ragate_in(
        dir,
        &[
            "convert",
            "--qrels",
            "qrels.tsv",
            "--queries",
            "queries.tsv",
            "--out",
            "out.jsonl",
        ],
    );
    assert_eq!(bad_queries.code, 2, "{}", bad_queries.stderr);
    assert!(
        bad_queries
            .stderr
            .contains("queries.tsv:2: expected `qid<TAB>text` (no tab found)"),
        "{}",
        bad_queries.stderr
    );
    assert!(!dir.join("out.jsonl").exists(), "nothing written");
}

#[test]
fn a_beir_folder_keeps_the_answer_references_its_queries_carry() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::create_dir_all(dir.join("beir/qrels")).unwrap();
    std::fs::write(
        dir.join("beir/queries.jsonl"),
        "{\"_id\":\"b1\",\"text\":\"how long is the link valid\",\"metadata\":{},\
         \"gold_answer_substring\":\"30 minutes\",\"reference_answer\":\"It is valid for 30 minutes.\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("beir/qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nb1\treset\t2\n",
    )
    .unwrap();
    let outcome = ragate_in(dir, &["convert", "--qrels", "beir", "--out", "qrels.jsonl"]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    assert!(
        !outcome.stderr.contains("gold_answer_substring"),
        "written, not left out: {}",
        outcome.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("qrels.jsonl")).unwrap(),
        "{\"qid\":\"b1\",\"query\":\"how long is the link valid\",\"graded_relevance\":{\"reset\":2},\
         \"gold_answer_substring\":\"30 minutes\",\"reference_answer\":\"It is valid for 30 minutes.\"}\n"
    );
}
