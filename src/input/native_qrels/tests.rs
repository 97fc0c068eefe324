//! The native qrels reader's unit tests: fields, slices, near misses, and lines read back.

use super::*;

fn read_str(text: &str) -> Result<Qrels> {
    read(&TextFile::from_bytes("qrels.jsonl", text.as_bytes().to_vec()).unwrap())
}

const SEED_Q1: &str = r#"{"qid": "q1", "query": "what is the threshold before a multipart upload is dropped", "gold_doc_ids": ["d3", "d1"], "gold_answer_substring": "three failed parts", "graded_relevance": {"d3": 3, "d1": 2, "d2": 1}, "class": "paraphrased"}"#;

#[test]
fn seed_q1_gold_and_graded_are_distinct() {
    let qrels = read_str(SEED_Q1).unwrap();
    let q = &qrels.queries()[0];
    assert_eq!(
        q.judgments.get("d3").unwrap(),
        Judgment {
            grade: 3,
            relevant: true
        }
    );
    assert_eq!(
        q.judgments.get("d1").unwrap(),
        Judgment {
            grade: 2,
            relevant: true
        }
    );
    assert_eq!(
        q.judgments.get("d2").unwrap(),
        Judgment {
            grade: 1,
            relevant: false
        }
    );
    assert_eq!(q.num_relevant(), 2);
    assert_eq!(q.attributes["class"], "paraphrased");
    assert_eq!(
        q.gold_answer_substring.as_deref(),
        Some("three failed parts")
    );
}

#[test]
fn gold_without_grade_gets_grade_one_and_grades_alone_define_relevance() {
    let qrels = read_str(
        "{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"]}\n{\"qid\":\"b\",\"query\":\"y\",\"graded_relevance\":{\"d1\":0,\"d2\":2}}",
    )
    .unwrap();
    assert_eq!(
        qrels.queries()[0].judgments.get("d1").unwrap(),
        Judgment {
            grade: 1,
            relevant: true
        }
    );
    assert_eq!(qrels.queries()[1].num_relevant(), 1);
}

#[test]
fn errors_name_the_line_and_what_was_expected() {
    let cases = [
        (
            "{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"]}\n{\"qid\":\"a\",\"query\":\"y\",\"gold_doc_ids\":[\"d2\"]}",
            "qrels.jsonl:2: qid `a` appears twice (lines 1 and 2): expected each query once",
        ),
        (
            "{\"qid\":\"a\",\"query\":\"x\"}",
            "qrels.jsonl:1: query `a` has no judgments: expected \"gold_doc_ids\" or \"graded_relevance\"",
        ),
        (
            "{\"qid\":\"a\",\"query\":\"x\",\"graded_relevance\":{\"d1\":1.5}}",
            "qrels.jsonl:1: graded_relevance of `d1` is 1.5: expected an integer grade",
        ),
        (
            "{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],\"graded_relevance\":{\"d1\":0}}",
            "qrels.jsonl:1: `d1` is in gold_doc_ids but graded 0: expected a gold document to have grade >= 1",
        ),
        (
            "{\"qid\":\"a\",\"query\":\"x\",\"graded_relevance\":{\"d1\":1024}}",
            "qrels.jsonl:1: grade 1024 of doc `d1` is out of range: expected an integer grade in -100..=100 (relevance levels; negative grades mean judged non-relevant)",
        ),
        (
            "{\"qid\":\"a\",\"query\":\"x\",\"graded_relevance\":{\"d1\":-4294967296}}",
            "qrels.jsonl:1: grade -4294967296 of doc `d1` is out of range: expected an integer grade in -100..=100 (relevance levels; negative grades mean judged non-relevant)",
        ),
        (
            "{\"qid\":\"a\",\"query\":\"x\",\"graded_relevance\":{\"d1\":3,\"d2\":1,\"d1\":0}}",
            "qrels.jsonl:1:61: key `d1` appears twice in one object: expected each key once: expected a JSON object {\"qid\", \"query\", \"gold_doc_ids\" and/or \"graded_relevance\", ...}",
        ),
        (
            "{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],\"tags\":[1]}",
            "qrels.jsonl:1: field `tags` is [1]: expected a string slice attribute (or a number or boolean)",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(read_str(input).unwrap_err().to_string(), expected);
    }
}

#[test]
fn judged_by_marks_model_judgments_of_judged_documents_only() {
    let qrels = read_str(
        "{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],\"graded_relevance\":{\"d2\":1},\"judged_by\":{\"d2\":{\"judge\":\"command `j`\",\"at\":\"2026-12-03T00:00:00Z\"},\"d1\":{\"judge\":\"m\"}}}",
    )
    .unwrap();
    let q = &qrels.queries()[0];
    assert_eq!(q.judged_by.len(), 2);
    assert_eq!(q.judged_by["d2"].judge, "command `j`");
    assert_eq!(q.judged_by["d1"].at, None);
    assert!(q.attributes.is_empty(), "not a slice attribute");
    let err = read_str(
        "{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],\"judged_by\":{\"d9\":{\"judge\":\"m\"}}}",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("judged_by names `d9`, which the query does not judge"),
        "{err}"
    );
    let err = read_str(
        "{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],\"judged_by\":{\"d1\":\"m\"}}",
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("qrels.jsonl:1:"), "{err}");
}

#[test]
fn must_pass_is_a_field_not_a_slice_and_takes_a_boolean() {
    let read = read_str;
    let qrels = read(
        "{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],\"must_pass\":true}\n\
         {\"qid\":\"b\",\"query\":\"y\",\"gold_doc_ids\":[\"d1\"],\"must_pass\":false}\n\
         {\"qid\":\"c\",\"query\":\"z\",\"gold_doc_ids\":[\"d1\"]}",
    )
    .unwrap();
    let flags: Vec<bool> = qrels.queries().iter().map(|q| q.must_pass).collect();
    assert_eq!(flags, [true, false, false]);
    assert!(qrels.queries()[0].attributes.is_empty());
    let err =
        read("{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],\"must_pass\":\"yes\"}")
            .unwrap_err()
            .to_string();
    assert!(err.contains("expected a boolean"), "{err}");
    let err = read("{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],\"mustPass\":true}")
        .unwrap_err()
        .to_string();
    assert!(err.contains("close to `must_pass`"), "{err}");
}

#[test]
fn a_written_line_reads_back_equal() {
    let mut line = QrelsLine {
        qid: "q1".into(),
        query: "where are \"backups\"\tkept".into(),
        gold_doc_ids: Some(vec!["d2".into(), "d1".into()]),
        graded_relevance: None,
        gold_answer_substring: Some("nightly".into()),
        reference_answer: Some("In the vault.".into()),
        must_pass: Some(true),
        slices: UniqueKeys(BTreeMap::from([
            ("class".to_string(), Value::from("literal")),
            ("hops".to_string(), Value::from(2)),
            ("reviewed".to_string(), Value::from(true)),
        ])),
        judged_by: Some(UniqueKeys(BTreeMap::from([(
            "d2".to_string(),
            ModelJudgment {
                judge: "command `j`".into(),
                at: Some("2026-12-03T00:00:00Z".into()),
            },
        )]))),
        drafted_by: Some(DraftedBy {
            generator: "g".into(),
            seed: Some(7),
            lexical_overlap: Some(0.25),
            accepted_at: None,
        }),
    };
    for (doc, grade) in [("d1", 2), ("d2", 3), ("d3", 0), ("d4", -1)] {
        line.grade(doc, grade);
    }
    let text = line.to_json();
    assert_eq!(serde_json::from_str::<QrelsLine>(&text).unwrap(), line);
    // ... and the reader takes it as the query it says
    let qrels = read_str(&text).unwrap();
    let query = &qrels.queries()[0];
    assert_eq!(query.num_relevant(), 2);
    assert_eq!(query.judgments.get("d4").unwrap().grade, -1);
    assert_eq!(
        query.attributes.keys().collect::<Vec<_>>(),
        ["class", "hops", "reviewed"]
    );
    assert_eq!(query.attributes["hops"], "2");
    assert_eq!(query.judged_by["d2"].judge, "command `j`");
    assert_eq!(query.drafted_by.as_ref().unwrap().seed, Some(7));
    assert_eq!(query.reference_answer.as_deref(), Some("In the vault."));
    // Fields in the type's order, the slices after the answers.
    assert!(text.starts_with("{\"qid\":\"q1\",\"query\":"), "{text}");
    let position = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
    assert!(position("reference_answer") < position("class"));
    assert!(position("class") < position("judged_by"));
}

#[test]
fn the_fields_are_read_off_the_type() {
    assert_eq!(
        QrelsLine::fields(),
        [
            "qid",
            "query",
            "gold_doc_ids",
            "graded_relevance",
            "gold_answer_substring",
            "reference_answer",
            "must_pass",
            "judged_by",
            "drafted_by"
        ]
    );
}

#[test]
fn a_misspelled_field_is_refused_not_taken_for_a_slice() {
    let line = |extra: &str| {
        format!("{{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],{extra}}}")
    };
    for (extra, key, field) in [
        (
            "\"reference_anwser\":\"y\"",
            "reference_anwser",
            "reference_answer",
        ),
        (
            "\"gold_answer_substrng\":\"y\"",
            "gold_answer_substrng",
            "gold_answer_substring",
        ),
        (
            "\"Reference-Answer\":\"y\"",
            "Reference-Answer",
            "reference_answer",
        ),
        ("\"gold_doc_id\":\"d2\"", "gold_doc_id", "gold_doc_ids"),
        (
            "\"judgedBy\":{\"d1\":{\"judge\":\"m\"}}",
            "judgedBy",
            "judged_by",
        ),
        (
            "\"graded_relevence\":{\"d1\":2}",
            "graded_relevence",
            "graded_relevance",
        ),
    ] {
        let err = read_str(&line(extra)).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "qrels.jsonl:1: field `{key}` is not a field of native qrels but is close to \
                 `{field}`: expected `{field}` spelled as such, or a slice attribute whose \
                 name is not that close to a field's (rename it)"
            )
        );
    }
    // Slice names of every committed qrels file, and short ones, stay slices.
    let qrels = read_str(&line(
        "\"class\":\"a\",\"variant\":\"b\",\"type\":\"c\",\"split\":\"d\",\"id\":\"e\",\"judge\":\"f\",\"drafted\":\"g\"",
    ))
    .unwrap();
    assert_eq!(qrels.queries()[0].attributes.len(), 7);
}

#[test]
fn truncated_json_names_line_and_column() {
    let err =
        read_str("{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"]}\n{\"qid\":\"b\",")
            .unwrap_err()
            .to_string();
    assert_eq!(
        err,
        format!("qrels.jsonl:2:11: EOF while parsing a value: expected {EXPECTED_LINE}")
    );
}

#[test]
fn wrong_type_is_an_error() {
    let err = read_str("{\"qid\":1,\"query\":\"x\",\"gold_doc_ids\":[\"d1\"]}")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("qrels.jsonl:1:"), "{err}");
    assert!(
        err.contains("invalid type: integer `1`, expected a string"),
        "{err}"
    );
}
