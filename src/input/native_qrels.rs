//! Reader of native qrels JSONL: one query a line with gold ids, graded relevance and metadata.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Location, Result};
use crate::input::judged_by::{DraftedBy, ModelJudgment};
use crate::input::judgments::Judgments;
use crate::input::qrels::{Grade, Judgment, Qrels, QueryQrels, Unfinished, bounded_grade};
use crate::input::text_file::{FirstLines, TextFile, check_id};
use crate::input::unique_keys::UniqueKeys;

/// One line as written. Fields that are not named here are slice attributes.
#[derive(Deserialize)]
#[serde(
    expecting = "a JSON object such as {\"qid\": \"q1\", \"query\": \"...\", \"gold_doc_ids\": [\"d1\"]}"
)]
struct RawQuery {
    qid: String,
    query: String,
    gold_doc_ids: Option<Vec<String>>,
    graded_relevance: Option<UniqueKeys<Value>>,
    gold_answer_substring: Option<String>,
    reference_answer: Option<String>,
    /// Provenance of model judgments (`ragate qrels apply`), see [`crate::input::judged_by`].
    judged_by: Option<UniqueKeys<ModelJudgment>>,
    /// Provenance of a drafted query (`ragate synth`).
    drafted_by: Option<DraftedBy>,
    #[serde(flatten)]
    attributes: UniqueKeys<Value>,
}

/// Parses a JSON line into `T`, turning serde's message into `file:line:column: ...`.
pub(crate) fn parse_json_line<'a, T: Deserialize<'a>>(
    file: &TextFile,
    line_number: u64,
    text: &'a str,
    expected: &str,
) -> Result<T> {
    serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let position = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&position).unwrap_or(&full);
        Error::Parse {
            location: Location::new(file.path(), line_number).with_column(e.column() as u64),
            message: format!("{message}: expected {expected}"),
        }
    })
}

/// A slice attribute value: strings as written, numbers and booleans as their JSON text.
pub(crate) fn attribute_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

const EXPECTED_LINE: &str =
    "a JSON object {\"qid\", \"query\", \"gold_doc_ids\" and/or \"graded_relevance\", ...}";

/// Reads native qrels JSONL: one query object a line (`qid`, `query`, `gold_doc_ids` and/or
/// `graded_relevance`, slice fields, ...).
pub fn read(file: &TextFile) -> Result<Qrels> {
    file.require_data("native qrels JSONL (one query object a line)")?;
    let mut qrels = Qrels::new(file.path());
    let mut first_lines = FirstLines::default();
    for line in file.lines() {
        let raw: RawQuery = parse_json_line(file, line.number, line.text, EXPECTED_LINE)?;
        check_id("qid", &raw.qid).map_err(|msg| Error::parse(file.path(), line.number, msg))?;
        first_lines.record(file, "qid", &raw.qid, line.number, "each query once")?;
        let query = build_query(raw).map_err(|msg| Error::parse(file.path(), line.number, msg))?;
        qrels.push(query);
    }
    qrels.finish().map_err(|unfinished| match unfinished {
        Unfinished::Empty(error) => error,
        // build_query already rejects a doc listed twice; this is the same check, kept honest
        Unfinished::Duplicate { qid, doc } => Error::parse(
            file.path(),
            first_lines.get(&qid).unwrap_or(0),
            format!(
                "query `{}` judges `{}` twice: expected each document once",
                crate::error::shorten(&qid),
                crate::error::shorten(&doc)
            ),
        ),
    })
}

fn build_query(raw: RawQuery) -> Result<QueryQrels, String> {
    if raw.gold_doc_ids.is_none() && raw.graded_relevance.is_none() {
        return Err(format!(
            "query `{}` has no judgments: expected \"gold_doc_ids\" or \"graded_relevance\"",
            raw.qid
        ));
    }
    let mut grades: BTreeMap<String, Grade> = BTreeMap::new();
    for (doc, value) in raw.graded_relevance.unwrap_or_default().into_inner() {
        let grade = value.as_i64().ok_or_else(|| {
            format!(
                "graded_relevance of `{}` is {}: expected an integer grade",
                crate::error::shorten(&doc),
                crate::error::shorten(&value.to_string())
            )
        })?;
        let grade = bounded_grade(grade, &doc)?;
        grades.insert(doc, grade);
    }
    let gold_listed: Vec<String> = raw.gold_doc_ids.clone().unwrap_or_default();
    let mut judgments = Judgments::default();
    match raw.gold_doc_ids {
        Some(gold) => {
            let mut listed = std::collections::BTreeSet::new();
            for doc in &gold {
                let grade = grades.get(doc).copied().unwrap_or(1);
                if grade < 1 {
                    return Err(format!(
                        "`{}` is in gold_doc_ids but graded {grade}: expected a gold document to have grade >= 1",
                        crate::error::shorten(doc)
                    ));
                }
                if !listed.insert(doc.as_str()) {
                    return Err(format!(
                        "gold_doc_ids lists `{}` twice: expected each document once",
                        crate::error::shorten(doc)
                    ));
                }
                judgments.push(
                    doc,
                    Judgment {
                        grade,
                        relevant: true,
                    },
                );
            }
            for (doc, &grade) in &grades {
                if !listed.contains(doc.as_str()) {
                    judgments.push(
                        doc,
                        Judgment {
                            grade,
                            relevant: false,
                        },
                    );
                }
            }
        }
        None => {
            for (doc, &grade) in &grades {
                judgments.push(doc, Judgment::from_grade(grade));
            }
        }
    }
    let judged_by = raw
        .judged_by
        .map(UniqueKeys::into_inner)
        .unwrap_or_default();
    if let Some(doc) = judged_by
        .keys()
        .find(|doc| !grades.contains_key(*doc) && !gold_listed.contains(doc))
    {
        return Err(format!(
            "judged_by names `{}`, which the query does not judge: expected a document of \"gold_doc_ids\" or \"graded_relevance\"",
            crate::error::shorten(doc)
        ));
    }
    let mut attributes = BTreeMap::new();
    for (key, value) in raw.attributes.into_inner() {
        let text = attribute_value(&value).ok_or_else(|| {
            format!(
                "field `{}` is {}: expected a string slice attribute (or a number or boolean)",
                crate::error::shorten(&key),
                crate::error::shorten(&value.to_string())
            )
        })?;
        attributes.insert(key, text);
    }
    Ok(QueryQrels {
        qid: raw.qid,
        text: Some(raw.query),
        judgments,
        attributes,
        gold_answer_substring: raw.gold_answer_substring,
        reference_answer: raw.reference_answer,
        judged_by,
        drafted_by: raw.drafted_by,
    })
}

#[cfg(test)]
mod tests {
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
}
