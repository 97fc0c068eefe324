//! Reader of human labels (JSONL), the gold side of judge calibration by prediction-powered inference.
//!
//! One JSON object a line, for example `{"qid":"q1","answer":"Paris.","faithfulness":1}`:
//!
//! - `qid` (string, non-empty) and `answer` (string: the answer the human judged) are required;
//! - every other key is a judged metric (`faithfulness`, `faithfulness_graded`,
//!   `answer_relevance`, `context_precision@K`) whose value is a number in [0, 1] (a 0/1 verdict or
//!   a graded score); a line needs at least one. Any other key (a misspelt metric: "did you mean")
//!   or value (a string, a boolean, null) is an error, so a typo cannot silently drop a label;
//! - a (qid, whitespace-normalised answer) pair appears once; a repeat names both lines.
//!
//! A label judges one answer, not the query: when the system's answer changes, the old label no
//! longer says anything about it. [`current_labels`] therefore keeps a label only while its answer
//! equals the current answer after [`normalise_answer`], and counts the stale ones.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::input::native_qrels::parse_json_line;
use crate::input::text_file::{FirstLines, TextFile, check_id};
use crate::input::unique_keys::UniqueKeys;

/// One human label line.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// The labelled query.
    pub qid: String,
    /// The answer as written in the labels file (compare with [`normalise_answer`]).
    pub answer: String,
    /// Metric name -> human value in [0, 1]; never empty.
    pub values: BTreeMap<String, f64>,
    /// 1-based line number in the labels file.
    pub line: u64,
}

impl Label {
    /// The human value for `metric`, if this line labels it.
    pub fn value(&self, metric: &str) -> Option<f64> {
        self.values.get(metric).copied()
    }
}

/// The labels of one metric sorted against the current answers (see [`current_labels`]).
#[derive(Debug, Default)]
pub struct LabelMatch<'a> {
    /// Labels whose answer equals the current answer (whitespace-normalised), in file order; at
    /// most one per qid, because [`read`] rejects repeated (qid, answer) pairs.
    pub usable: Vec<&'a Label>,
    /// Labels of a known qid whose answer is no longer the current one: reported, not used.
    pub stale: usize,
    /// Labels whose qid has no current answer (not in the run, or a query of another tier).
    pub unknown_qid: usize,
}

#[derive(Deserialize)]
#[serde(
    expecting = "a JSON object {\"qid\": string, \"answer\": string, \"<metric>\": number in [0, 1], ...}"
)]
struct RawLabel {
    qid: String,
    answer: String,
    #[serde(flatten)]
    values: UniqueKeys<Value>,
}

const EXPECTED_LINE: &str =
    "a JSON object {\"qid\": string, \"answer\": string, \"<metric>\": number in [0, 1], ...}";

/// Reads a labels file; errors name `file:line` and what was expected.
/// Accepts a label key when it names a metric human labels can calibrate, else says why (the
/// metrics layer's `metrics::labelled::check_label_metric`, passed in so that the reader stays
/// below the metrics it names).
pub type MetricCheck = fn(&str) -> std::result::Result<(), String>;

/// The labels of `file`, each key besides `qid` and `answer` accepted by `check_metric`.
pub fn read(file: &TextFile, check_metric: MetricCheck) -> Result<Vec<Label>> {
    file.require_data(
        "human labels JSONL (one {\"qid\", \"answer\", \"<metric>\": 0..1} object a line)",
    )?;
    let mut first_lines = FirstLines::default();
    let mut labels = Vec::new();
    for line in file.lines() {
        let raw: RawLabel = parse_json_line(file, line.number, line.text, EXPECTED_LINE)?;
        let label = build(raw, line.number, check_metric)
            .map_err(|msg| Error::parse(file.path(), line.number, msg))?;
        // A JSON array is an unambiguous, readable key for the pair.
        let key = serde_json::to_string(&[label.qid.as_str(), &normalise_answer(&label.answer)])
            .expect("strings always serialise");
        first_lines.record(
            file,
            "label [qid, normalised answer]",
            &key,
            line.number,
            "one label line per qid and answer (answers compared whitespace-normalised)",
        )?;
        labels.push(label);
    }
    Ok(labels)
}

fn build(raw: RawLabel, line: u64, check_metric: MetricCheck) -> Result<Label, String> {
    if raw.qid.trim().is_empty() {
        return Err("`qid` is empty: expected a non-empty query id".to_string());
    }
    check_id("qid", &raw.qid)?;
    let mut values = BTreeMap::new();
    for (metric, value) in raw.values.into_inner() {
        check_metric(&metric)?;
        match value.as_f64() {
            Some(number) if (0.0..=1.0).contains(&number) => {
                values.insert(metric, number);
            }
            Some(_) => {
                return Err(format!(
                    "label `{metric}` is {value}: expected a number in [0, 1]"
                ));
            }
            None => {
                return Err(format!(
                    "label `{metric}` is {}, not a number: expected a number in [0, 1] \
                     (every key besides `qid` and `answer` is a metric label)",
                    crate::error::shorten(&value.to_string())
                ));
            }
        }
    }
    if values.is_empty() {
        return Err(
            "no label: expected at least one metric key with a number in [0, 1] besides `qid` and `answer`"
                .to_string(),
        );
    }
    Ok(Label {
        qid: raw.qid,
        answer: raw.answer,
        values,
        line,
    })
}

/// Whitespace-normalised answer text: runs of Unicode whitespace become one space, and the ends
/// are trimmed. Nothing else changes (case and punctuation matter to a judge).
pub fn normalise_answer(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Equality of [`normalise_answer`] of both sides, without allocating.
fn same_answer(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// Sorts the labels of `metric` against the current answers (`answers`: qid -> current answer).
///
/// Only labels with a value for `metric` take part; the others are neither used nor counted.
/// Each of those is exactly one of:
/// - usable: its qid has a current answer equal to the label's answer, whitespace-normalised;
/// - stale: its qid has a current answer, but a different one (the label judged an old answer);
/// - unknown qid: `answers` has no entry for its qid.
pub fn current_labels<'a>(
    labels: &'a [Label],
    answers: &BTreeMap<String, String>,
    metric: &str,
) -> LabelMatch<'a> {
    let mut matched = LabelMatch::default();
    for label in labels.iter().filter(|l| l.values.contains_key(metric)) {
        match answers.get(&label.qid) {
            None => matched.unknown_qid += 1,
            Some(current) if same_answer(current, &label.answer) => matched.usable.push(label),
            Some(_) => matched.stale += 1,
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<Vec<Label>> {
        read(
            &TextFile::from_bytes("labels.jsonl", text.as_bytes().to_vec()).unwrap(),
            crate::metrics::labelled::check_label_metric,
        )
    }

    fn error(text: &str) -> String {
        read_str(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_labels_with_several_metrics() {
        let labels = read_str(
            "{\"qid\":\"q1\",\"answer\":\"Paris.\",\"faithfulness\":1}\n\n\
             {\"qid\":\"q2\",\"answer\":\"\",\"faithfulness\":0,\"answer_relevance\":0.5}\n",
        )
        .unwrap();
        assert_eq!(labels.len(), 2);
        assert_eq!(labels[0].qid, "q1");
        assert_eq!(labels[0].value("faithfulness"), Some(1.0));
        assert_eq!(labels[0].line, 1);
        assert_eq!(labels[1].line, 3);
        assert_eq!(labels[1].value("answer_relevance"), Some(0.5));
        assert_eq!(labels[1].value("faithfulness"), Some(0.0));
        assert_eq!(labels[1].values.len(), 2);
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let ok = "{\"qid\":\"q1\",\"answer\":\"a\",\"faithfulness\":1}\n";
        let out_of_range =
            format!("{ok}{{\"qid\":\"q2\",\"answer\":\"b\",\"faithfulness\":1.5}}\n");
        assert_eq!(
            error(&out_of_range),
            "labels.jsonl:2: label `faithfulness` is 1.5: expected a number in [0, 1]"
        );
        let text = error("{\"qid\":\"q1\",\"answer\":\"a\",\"faithfulness\":\"yes\"}");
        assert!(
            text.starts_with("labels.jsonl:1: label `faithfulness` is \"yes\", not a number"),
            "{text}"
        );
        let text = error("{\"qid\":\"q1\",\"answer\":\"a\",\"faithfulness\":true}");
        assert!(text.contains("is true, not a number"), "{text}");
        let text = error(&format!("{ok}{{\"qid\":\"q2\",\"faithfulness\":1}}"));
        assert!(text.starts_with("labels.jsonl:2:"), "{text}");
        assert!(text.contains("missing field `answer`"), "{text}");
        assert!(text.contains("expected a JSON object {\"qid\""), "{text}");
        let text = error("{\"qid\":\"q1\",\"answer\":\"a\"}");
        assert!(
            text.starts_with("labels.jsonl:1: no label: expected at least one metric key"),
            "{text}"
        );
        assert_eq!(
            error(&format!(
                "{ok}{{\"qid\":\"q2\",\"answer\":\"b\",\"faithfullness\":1}}\n"
            )),
            "labels.jsonl:2: `faithfullness` is not a judged metric: expected faithfulness, \
             faithfulness_graded, answer_relevance or context_precision@K (every key besides \
             `qid` and `answer` is a metric label) (did you mean `faithfulness`?)"
        );
        let text = error("{\"qid\":\"q1\",\"answer\":\"a\",\"context_precison@3\":1}");
        assert!(
            text.ends_with("(did you mean `context_precision@3`?)"),
            "{text}"
        );
        let text = error("{\"qid\":\"q1\",\"answer\":\"a\",\"recall@5\":1}");
        assert!(text.contains("`recall@5` is not a judged metric"), "{text}");
        assert!(!text.contains("did you mean"), "{text}");
        let text = error("{\"qid\":\" \",\"answer\":\"a\",\"faithfulness\":1}");
        assert!(text.contains("`qid` is empty"), "{text}");
        let text = error("{\"qid\":\"q1\",\"answer\":7,\"faithfulness\":1}");
        assert!(text.contains("invalid type: integer `7`"), "{text}");
        assert_eq!(
            read_str("\n").unwrap_err().to_string(),
            "labels.jsonl: the file is empty: expected human labels JSONL \
             (one {\"qid\", \"answer\", \"<metric>\": 0..1} object a line)"
        );
    }

    #[test]
    fn duplicate_pair_names_both_lines_after_whitespace_normalisation() {
        let text = error(
            "{\"qid\":\"q1\",\"answer\":\"Paris  is\\nbig.\",\"faithfulness\":1}\n\
             {\"qid\":\"q1\",\"answer\":\"Other.\",\"faithfulness\":1}\n\
             {\"qid\":\"q1\",\"answer\":\" Paris is big. \",\"faithfulness\":0}\n",
        );
        assert_eq!(
            text,
            "labels.jsonl:3: label [qid, normalised answer] `[\"q1\",\"Paris is big.\"]` appears \
             twice (lines 1 and 3): expected one label line per qid and answer (answers compared \
             whitespace-normalised)"
        );
    }

    #[test]
    fn normalise_answer_collapses_and_trims_whitespace_only() {
        assert_eq!(normalise_answer("  A\tb \r\n\u{a0}C.  "), "A b C.");
        assert_eq!(normalise_answer(""), "");
        assert!(same_answer(" x  y", "x y\n"));
        assert!(!same_answer("x y", "X y"));
        assert!(!same_answer("xy", "x y"));
    }

    #[test]
    fn current_labels_sorts_usable_stale_and_unknown() {
        let labels = read_str(
            "{\"qid\":\"q1\",\"answer\":\"old answer\",\"faithfulness\":0}\n\
             {\"qid\":\"q1\",\"answer\":\"new  answer\",\"faithfulness\":1}\n\
             {\"qid\":\"q2\",\"answer\":\"two\",\"faithfulness\":1}\n\
             {\"qid\":\"q3\",\"answer\":\"three\",\"faithfulness\":1}\n\
             {\"qid\":\"q2\",\"answer\":\"two, v2\",\"answer_relevance\":1}\n",
        )
        .unwrap();
        let answers: BTreeMap<String, String> = [("q1", " new answer"), ("q2", "two v2")]
            .into_iter()
            .map(|(q, a)| (q.to_string(), a.to_string()))
            .collect();
        let matched = current_labels(&labels, &answers, "faithfulness");
        let lines: Vec<u64> = matched.usable.iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![2]);
        assert_eq!((matched.stale, matched.unknown_qid), (2, 1));
        // The relevance label judged "two, v2", which is not the current "two v2".
        let matched = current_labels(&labels, &answers, "answer_relevance");
        assert!(matched.usable.is_empty());
        assert_eq!((matched.stale, matched.unknown_qid), (1, 0));
        let matched = current_labels(&labels, &answers, "context_precision@5");
        assert_eq!(
            (matched.usable.len(), matched.stale, matched.unknown_qid),
            (0, 0, 0)
        );
    }
}
