//! Reader of native qrels JSONL: one query a line with gold ids, graded relevance and metadata.

use std::collections::BTreeMap;

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Location, Result};
use crate::input::judged_by::{DraftedBy, ModelJudgment};
use crate::input::judgments::Judgments;
use crate::input::qrels::{Grade, Judgment, Qrels, QueryQrels, Unfinished, bounded_grade};
use crate::input::text_file::{FirstLines, TextFile, check_id};
use crate::input::unique_keys::UniqueKeys;

/// One line of native qrels JSONL, as it is read and as every writer writes it (`convert`,
/// `synth`, `qrels apply`, `qrels accept`): the one spelling of the format, so a new field is
/// added here and nowhere else. Fields are written in this order; `None` fields are left out.
///
/// Every key that is not a field here is a slice attribute ([`QrelsLine::slices`]), unless it
/// is a near miss of a field ([`near_miss`]): a misspelled `reference_anwser` is refused, never
/// taken for a slice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    expecting = "a JSON object such as {\"qid\": \"q1\", \"query\": \"...\", \"gold_doc_ids\": [\"d1\"]}"
)]
pub(crate) struct QrelsLine {
    /// The query's id.
    pub qid: String,
    /// The query's text.
    pub query: String,
    /// The binary relevant ("gold") documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_doc_ids: Option<Vec<String>>,
    /// Grades by document: integers, checked when the line becomes a query ([`QrelsLine::grade`]
    /// writes one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graded_relevance: Option<UniqueKeys<Value>>,
    /// A text a good answer contains (metric `answer_contains`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_answer_substring: Option<String>,
    /// A reference answer (metrics `answer_f1`, `answer_exact`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_answer: Option<String>,
    /// `true`: the query must pass on its own, whatever the tier's statistics say (issue 49;
    /// docs/config.md "Must-pass queries").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub must_pass: Option<bool>,
    /// Slice attributes (`class`, ...): every other key of the line, by name.
    #[serde(flatten)]
    pub slices: UniqueKeys<Value>,
    /// Provenance of model judgments (`ragate qrels apply`), see [`crate::input::judged_by`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_by: Option<UniqueKeys<ModelJudgment>>,
    /// Provenance of a drafted query (`ragate synth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drafted_by: Option<DraftedBy>,
}

impl QrelsLine {
    /// The names of the fields of a line, in written order (slices aside): read off the type
    /// itself, a line with every field set, so that they cannot drift from it.
    pub(crate) fn fields() -> &'static [String] {
        static FIELDS: OnceLock<Vec<String>> = OnceLock::new();
        FIELDS.get_or_init(|| {
            let every = QrelsLine {
                qid: String::new(),
                query: String::new(),
                gold_doc_ids: Some(Vec::new()),
                graded_relevance: Some(UniqueKeys::default()),
                gold_answer_substring: Some(String::new()),
                reference_answer: Some(String::new()),
                must_pass: Some(true),
                slices: UniqueKeys::default(),
                judged_by: Some(UniqueKeys::default()),
                drafted_by: Some(DraftedBy {
                    generator: String::new(),
                    seed: None,
                    lexical_overlap: None,
                    accepted_at: None,
                }),
            };
            match serde_json::to_value(every) {
                Ok(Value::Object(fields)) => fields.keys().cloned().collect(),
                _ => unreachable!("a qrels line serialises to an object"),
            }
        })
    }

    /// Sets the grade of `doc` (in `graded_relevance`, created when absent).
    pub(crate) fn grade(&mut self, doc: &str, grade: Grade) {
        self.graded_relevance
            .get_or_insert_with(UniqueKeys::default)
            .0
            .insert(doc.to_string(), Value::from(grade));
    }

    /// The line as written: compact JSON, no line ending.
    pub(crate) fn to_json(&self) -> String {
        crate::json_text::compact(self)
    }
}

/// The field of [`QrelsLine`] that `key` is a near miss of, if any: a key that is not a field
/// but equals one once case, `-`, `_`, `.` and spaces are set aside (`judgedBy`,
/// `Reference-Answer`), or is within two edits of one (`reference_anwser`, `gold_doc_id`).
/// Such a key is refused instead of being read as a slice attribute. The required fields
/// (`qid`, `query`) are left out: misspelled, they are missing, which is an error of its own;
/// and short names are too close to ordinary slice names (`id`, `pid`) to judge by edits.
pub(crate) fn near_miss(key: &str) -> Option<&'static str> {
    const REQUIRED: [&str; 2] = ["qid", "query"];
    /// The letters and digits of a name, lower case.
    fn squeezed(name: &str) -> String {
        name.chars()
            .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
            .flat_map(char::to_lowercase)
            .collect()
    }
    let key_squeezed = squeezed(key);
    let lower = key.to_lowercase();
    let letters = lower.chars().count();
    QrelsLine::fields()
        .iter()
        .filter(|field| !REQUIRED.contains(&field.as_str()) && field.as_str() != key)
        .find(|field| {
            // Lengths further apart than two take more than two edits (and a long key is not
            // compared letter by letter).
            squeezed(field) == key_squeezed
                || (letters.abs_diff(field.len()) <= 2
                    && strsim::damerau_levenshtein(&lower, field) <= 2)
        })
        .map(String::as_str)
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
        let raw: QrelsLine = parse_json_line(file, line.number, line.text, EXPECTED_LINE)?;
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

fn build_query(raw: QrelsLine) -> Result<QueryQrels, String> {
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
    for (key, value) in raw.slices.into_inner() {
        if let Some(field) = near_miss(&key) {
            return Err(format!(
                "field `{}` is not a field of native qrels but is close to `{field}`: expected \
                 `{field}` spelled as such, or a slice attribute whose name is not that close to \
                 a field's (rename it)",
                crate::error::shorten(&key)
            ));
        }
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
        must_pass: raw.must_pass.unwrap_or(false),
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
        let err =
            read("{\"qid\":\"a\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"],\"mustPass\":true}")
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
}
