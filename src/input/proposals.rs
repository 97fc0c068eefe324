//! Proposals files (`ragate holes --judge --out FILE`, read by `ragate qrels apply`): JSONL, one
//! proposed judgment a line,
//! `{"qid", "doc_id", "grade": 0-3, "judge": "<judge identity>", "score": 0.8|null,
//! "rationale": "..."|null, "priority": 1.5}`. `score` is the judge's confidence (null when it
//! gives none), `priority` the hole's pooling score (see `ragate holes`). A proposal is never a
//! judgment until `ragate qrels apply` writes it.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::input::native_qrels::parse_json_line;
use crate::input::text_file::{FirstLines, TextFile, check_id};

/// The highest grade a proposal may carry (and a judge may propose).
pub const MAX_GRADE: u8 = 3;

/// One proposed judgment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    /// The query.
    pub qid: String,
    /// The retrieved, unjudged document.
    pub doc_id: String,
    /// The proposed grade, 0 irrelevant .. 3 perfectly relevant.
    pub grade: u8,
    /// The judge's identity (model, endpoint as written, prompt versions).
    pub judge: String,
    /// The judge's confidence in [0, 1], when it gives one.
    pub score: Option<f64>,
    /// Why, in the judge's words.
    pub rationale: Option<String>,
    /// The hole's pooling score when it was proposed.
    #[serde(default)]
    pub priority: Option<f64>,
}

const EXPECTED: &str = "a JSON object {\"qid\", \"doc_id\", \"grade\", \"judge\", \"score\", \"rationale\", \"priority\"?}";

/// Reads a proposals file: every line a proposal, each (qid, doc_id) once, grades 0-3, scores in
/// [0, 1].
pub fn read(file: &TextFile) -> Result<Vec<Proposal>> {
    file.require_data("proposals JSONL (`ragate holes --judge NAME --out FILE` writes one)")?;
    let mut proposals = Vec::new();
    let mut lines = FirstLines::default();
    for line in file.lines() {
        let proposal: Proposal = parse_json_line(file, line.number, line.text, EXPECTED)?;
        let at = |message: String| Error::parse(file.path(), line.number, message);
        check_id("qid", &proposal.qid).map_err(at)?;
        check_id("doc_id", &proposal.doc_id).map_err(at)?;
        if proposal.grade > MAX_GRADE {
            return Err(at(format!(
                "grade {}: expected 0, 1, 2 or 3",
                proposal.grade
            )));
        }
        if let Some(score) = proposal.score
            && !(0.0..=1.0).contains(&score)
        {
            return Err(at(format!("score {score}: expected a number in [0, 1]")));
        }
        if proposal.judge.trim().is_empty() {
            return Err(at("`judge` is blank: expected the judge's identity".into()));
        }
        let key = format!("{}:{}", proposal.qid, proposal.doc_id);
        lines.record(
            file,
            "proposal",
            &key,
            line.number,
            "each (qid, doc_id) once",
        )?;
        proposals.push(proposal);
    }
    Ok(proposals)
}

/// The JSONL line of `proposal` (with its line feed).
pub fn line(proposal: &Proposal) -> String {
    let mut text = crate::json_text::compact(proposal);
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<Vec<Proposal>> {
        read(&TextFile::from_bytes("p.jsonl", text.as_bytes().to_vec()).unwrap())
    }

    #[test]
    fn proposals_round_trip_and_are_checked() {
        let proposal = Proposal {
            qid: "q1".into(),
            doc_id: "d2".into(),
            grade: 2,
            judge: "command `j`".into(),
            score: Some(0.5),
            rationale: None,
            priority: Some(1.5),
        };
        let text = line(&proposal);
        assert_eq!(
            text,
            "{\"qid\":\"q1\",\"doc_id\":\"d2\",\"grade\":2,\"judge\":\"command `j`\",\"score\":0.5,\"rationale\":null,\"priority\":1.5}\n"
        );
        assert_eq!(read_str(&text).unwrap(), vec![proposal]);
        let bad = [
            (text.replace("\"grade\":2", "\"grade\":4"), "grade 4"),
            (text.replace("0.5", "1.5"), "score 1.5"),
            (text.replace("command `j`", " "), "`judge` is blank"),
            (
                text.replace("\"priority\"", "\"prio\""),
                "unknown field `prio`",
            ),
            (format!("{text}{text}"), "appears twice"),
        ];
        for (input, expected) in bad {
            let err = read_str(&input).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
    }
}
