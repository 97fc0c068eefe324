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
mod tests;
