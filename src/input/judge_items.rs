//! Reader of labelled judge items (JSONL), the input of `ragate judge-eval`.
//!
//! One JSON object a line, for example
//! `{"id":"c1","claim":"Parts are uploaded independently.","context":"...","label":"supported","class":"paraphrase"}`:
//!
//! - what is judged: `claim` (one statement) or `answer` (split into claims by the claim
//!   splitter; it is supported when every claim is), exactly one of them, non-empty;
//! - what it is judged against: `context` (a string) or `contexts` (strings, joined with a blank
//!   line as the gate joins a run's contexts), exactly one of them;
//! - `label`: `"supported"` or `"unsupported"` (a person's verdict);
//! - optional: `id` (default `line N`; each id once), `qid` (kept for the reader) and `class`
//!   (an error class or slice: scores are also reported per class).
//!
//! Any other key, a missing or misspelt one, or a value of another type is an error naming the
//! line, so a typo cannot drop an item silently.

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::input::native_qrels::parse_json_line;
use crate::input::text_file::{FirstLines, TextFile, check_id};

/// One labelled item.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeItem {
    /// The item's id (`line N` when the file gives none).
    pub id: String,
    /// The query the item comes from, when given.
    pub qid: Option<String>,
    /// What the judge decides on.
    pub subject: Subject,
    /// The context (several joined with a blank line).
    pub context: String,
    /// The person's verdict: supported or not.
    pub supported: bool,
    /// The item's class, when given.
    pub class: Option<String>,
    /// 1-based line number in the file.
    pub line: u64,
}

/// What an item asks the judge about.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// One claim.
    Claim(String),
    /// A whole answer, split into claims.
    Answer(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a JSON object with `id` or `qid`, the text the judge reads and its `label`")]
struct RawItem {
    id: Option<String>,
    qid: Option<String>,
    claim: Option<String>,
    answer: Option<String>,
    context: Option<String>,
    contexts: Option<Vec<String>>,
    label: RawLabel,
    class: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawLabel {
    Supported,
    Unsupported,
}

const EXPECTED_LINE: &str = "a JSON object {\"claim\" or \"answer\": string, \"context\": string or \
     \"contexts\": [string], \"label\": \"supported\" or \"unsupported\", optional \"id\", \"qid\", \"class\"}";

/// Reads a labelled items file; errors name `file:line` and what was expected.
pub fn read(file: &TextFile) -> Result<Vec<JudgeItem>> {
    file.require_data(
        "labelled judge items JSONL (one {\"claim\", \"context\", \"label\"} a line)",
    )?;
    let mut first_lines = FirstLines::default();
    let mut items = Vec::new();
    for line in file.lines() {
        let raw: RawItem = parse_json_line(file, line.number, line.text, EXPECTED_LINE)?;
        let item =
            build(raw, line.number).map_err(|msg| Error::parse(file.path(), line.number, msg))?;
        first_lines.record(file, "item id", &item.id, line.number, "each id once")?;
        items.push(item);
    }
    Ok(items)
}

fn build(raw: RawItem, line: u64) -> Result<JudgeItem, String> {
    let subject = match (raw.claim, raw.answer) {
        (Some(claim), None) => Subject::Claim(claim),
        (None, Some(answer)) => Subject::Answer(answer),
        (Some(_), Some(_)) => {
            return Err("both `claim` and `answer`: expected one of them".to_string());
        }
        (None, None) => {
            return Err("no `claim` or `answer`: expected the text to judge".to_string());
        }
    };
    let (Subject::Claim(text) | Subject::Answer(text)) = &subject;
    if text.trim().is_empty() {
        return Err("the text to judge is empty: expected a claim or an answer".to_string());
    }
    let context = match (raw.context, raw.contexts) {
        (Some(context), None) => context,
        (None, Some(contexts)) => contexts.join("\n\n"),
        (Some(_), Some(_)) => {
            return Err("both `context` and `contexts`: expected one of them".to_string());
        }
        (None, None) => {
            return Err(
                "no `context` or `contexts`: expected what the claim is judged against".to_string(),
            );
        }
    };
    let id = raw.id.unwrap_or_else(|| format!("line {line}"));
    check_id("id", &id)?;
    if let Some(qid) = &raw.qid {
        check_id("qid", qid)?;
    }
    Ok(JudgeItem {
        id,
        qid: raw.qid,
        subject,
        context,
        supported: matches!(raw.label, RawLabel::Supported),
        class: raw.class,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Result<Vec<JudgeItem>> {
        read(&TextFile::from_bytes(
            "items.jsonl",
            text.as_bytes().to_vec(),
        )?)
    }

    fn error(text: &str) -> String {
        read_text(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_claims_and_answers_with_their_labels() {
        let items = read_text(
            "{\"id\":\"a\",\"claim\":\"X is 3.\",\"context\":\"X is 3.\",\"label\":\"supported\",\"class\":\"verbatim\"}\n\
             \n\
             {\"qid\":\"q1\",\"answer\":\"Y. Z.\",\"contexts\":[\"Y.\",\"Z.\"],\"label\":\"unsupported\"}\n",
        )
        .unwrap();
        assert_eq!(
            items,
            vec![
                JudgeItem {
                    id: "a".into(),
                    qid: None,
                    subject: Subject::Claim("X is 3.".into()),
                    context: "X is 3.".into(),
                    supported: true,
                    class: Some("verbatim".into()),
                    line: 1,
                },
                JudgeItem {
                    id: "line 3".into(),
                    qid: Some("q1".into()),
                    subject: Subject::Answer("Y. Z.".into()),
                    context: "Y.\n\nZ.".into(),
                    supported: false,
                    class: None,
                    line: 3,
                },
            ]
        );
    }

    #[test]
    fn every_malformed_item_names_its_line_and_what_was_expected() {
        let ok = "{\"claim\":\"c\",\"context\":\"x\",\"label\":\"supported\"}\n";
        let cases = [
            (
                "{\"claim\":\"c\",\"context\":\"x\",\"label\":\"yes\"}",
                "items.jsonl:2:",
                "unknown variant `yes`, expected `supported` or `unsupported`",
            ),
            (
                "{\"claim\":\"c\",\"context\":\"x\",\"label\":\"supported\",\"lable\":1}",
                "items.jsonl:2:",
                "unknown field `lable`",
            ),
            (
                "{\"claim\":\"c\",\"answer\":\"a\",\"context\":\"x\",\"label\":\"supported\"}",
                "items.jsonl:2",
                "both `claim` and `answer`: expected one of them",
            ),
            (
                "{\"context\":\"x\",\"label\":\"supported\"}",
                "items.jsonl:2",
                "no `claim` or `answer`",
            ),
            (
                "{\"claim\":\" \",\"context\":\"x\",\"label\":\"supported\"}",
                "items.jsonl:2",
                "the text to judge is empty",
            ),
            (
                "{\"claim\":\"c\",\"label\":\"supported\"}",
                "items.jsonl:2",
                "no `context` or `contexts`",
            ),
            (
                "{\"claim\":\"c\",\"context\":\"x\",\"contexts\":[],\"label\":\"supported\"}",
                "items.jsonl:2",
                "both `context` and `contexts`",
            ),
            (
                "{\"claim\":\"c\",\"context\":\"x\"}",
                "items.jsonl:2:",
                "missing field `label`",
            ),
            (
                "{\"id\":\"line 1\",\"claim\":\"c\",\"context\":\"x\",\"label\":\"supported\"}",
                "items.jsonl:2",
                "line 1",
            ),
        ];
        for (line, location, message) in cases {
            let shown = error(&format!("{ok}{line}\n"));
            assert!(
                shown.contains(location) && shown.contains(message),
                "{line}: {shown}"
            );
        }
        assert!(error("").contains("the file is empty: expected labelled judge items"));
    }
}
