//! Reader of native run JSONL: per query the ranked retrieved docs, the answer and its contexts.

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::input::native_qrels::parse_json_line;
use crate::input::text_file::{FirstLines, TextFile, check_id};

/// One retrieved document (or chunk) as the system under test returned it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retrieved {
    /// The retrieved document's (or chunk's) id.
    pub doc_id: String,
    /// The retriever's score, when given (the order of `retrieved` is the ranking).
    pub score: Option<f64>,
    /// The retrieved text, used as a context when the line has no `contexts`.
    pub text: Option<String>,
}

/// What the system produced for one query. `retrieved` is in rank order.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunQuery {
    /// The query's id.
    pub qid: String,
    /// The retrieved documents in rank order.
    pub retrieved: Vec<Retrieved>,
    /// The generated answer, when the system answers.
    pub answer: Option<String>,
    /// The texts the answer was generated from (default: the retrieved texts).
    pub contexts: Option<Vec<String>>,
    /// How long the pipeline took for the query, measured by an adapter or reported by the pipeline.
    pub latency_ms: Option<f64>,
    /// The tokens the pipeline's generator consumed.
    pub usage: Option<Usage>,
    /// The query's cost in whatever unit the pipeline reports (dollars, say).
    pub cost: Option<f64>,
    /// The 1-based line of the run file, for messages.
    #[serde(skip)]
    pub line: u64,
}

/// Token counts as OpenAI-compatible APIs report them.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Tokens of the prompt.
    pub prompt_tokens: u64,
    /// Tokens of the completion.
    pub completion_tokens: u64,
    /// Accepted as APIs send it; ragate uses prompt + completion.
    pub total_tokens: Option<u64>,
}

const EXPECTED: &str = "a JSON object {\"qid\", \"retrieved\": [{\"doc_id\", \"score\"?, \"text\"?}], \"answer\"?, \"contexts\"?, \"latency_ms\"?, \"usage\"?, \"cost\"?}";

/// Reads a whole native run; a qid on two lines is an error naming both.
pub fn read(file: &TextFile) -> Result<Vec<RunQuery>> {
    file.require_data("native run JSONL (one query object a line)")?;
    let mut run = Vec::new();
    let mut lines = FirstLines::default();
    for line in file.lines() {
        let mut query: RunQuery = parse_json_line(file, line.number, line.text, EXPECTED)?;
        query.line = line.number;
        check_id("qid", &query.qid).map_err(|msg| Error::parse(file.path(), line.number, msg))?;
        check_contexts(&query).map_err(|msg| Error::parse(file.path(), line.number, msg))?;
        lines.record(file, "qid", &query.qid, line.number, "one line per query")?;
        run.push(query);
    }
    Ok(run)
}

/// A context is the text the answer was generated from: an empty one is a pipeline bug, and
/// would make faithfulness judge the answer against nothing.
fn check_contexts(query: &RunQuery) -> Result<(), String> {
    let contexts = query.contexts.as_deref().unwrap_or_default();
    match contexts.iter().position(|c| c.trim().is_empty()) {
        None => Ok(()),
        Some(index) => Err(format!(
            "contexts[{index}] of query `{}` is empty: expected the text of each context the \
             answer was generated from (or no \"contexts\", to use the retrieved docs' texts)",
            query.qid
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<Vec<RunQuery>> {
        read(&TextFile::from_bytes("run.jsonl", text.as_bytes().to_vec()).unwrap())
    }

    #[test]
    fn reads_ranked_docs_answer_and_contexts() {
        let run = read_str(
            "{\"qid\":\"q1\",\"retrieved\":[{\"doc_id\":\"d3\",\"score\":12.1,\"text\":\"t\"},{\"doc_id\":\"d1\"}],\"answer\":\"a\",\"contexts\":[\"c\"]}\n",
        )
        .unwrap();
        assert_eq!(run[0].retrieved[1].doc_id, "d1");
        assert_eq!(run[0].retrieved[0].score, Some(12.1));
        assert_eq!(run[0].contexts.as_deref(), Some(&["c".to_string()][..]));
        assert_eq!(run[0].line, 1);
    }

    #[test]
    fn reads_usage_and_cost() {
        let run = read_str(
            "{\"qid\":\"q1\",\"retrieved\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":9},\"cost\":0.002}\n",
        )
        .unwrap();
        let usage = Usage {
            prompt_tokens: 120,
            completion_tokens: 9,
            total_tokens: None,
        };
        assert_eq!((run[0].usage, run[0].cost), (Some(usage), Some(0.002)));
        let typo = read_str("{\"qid\":\"q1\",\"retrieved\":[],\"usage\":{\"prompt\":1}}")
            .unwrap_err()
            .to_string();
        assert!(typo.contains("unknown field `prompt`"), "{typo}");
    }

    #[test]
    fn misspelt_and_mistyped_fields_are_errors() {
        let typo = read_str("{\"qid\":\"q1\",\"retreived\":[]}")
            .unwrap_err()
            .to_string();
        assert!(typo.starts_with("run.jsonl:1:"), "{typo}");
        assert!(typo.contains("unknown field `retreived`"), "{typo}");
        let score =
            read_str("{\"qid\":\"q1\",\"retrieved\":[{\"doc_id\":\"d\",\"score\":\"high\"}]}")
                .unwrap_err()
                .to_string();
        assert!(
            score.contains("invalid type: string \"high\", expected f64"),
            "{score}"
        );
    }

    #[test]
    fn empty_contexts_and_control_characters_in_qids_are_errors() {
        let err = read_str("{\"qid\":\"q1\",\"retrieved\":[],\"contexts\":[\"c\",\" \"]}")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "run.jsonl:1: contexts[1] of query `q1` is empty: expected the text of each context \
             the answer was generated from (or no \"contexts\", to use the retrieved docs' texts)"
        );
        let err = read_str("{\"qid\":\"q\\t1\",\"retrieved\":[]}")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("run.jsonl:1: qid \"q\\t1\" contains the control character U+0009"),
            "{err}"
        );
        assert!(read_str("{\"qid\":\"q1\",\"retrieved\":[],\"contexts\":[]}").is_ok());
    }

    #[test]
    fn duplicate_qid_names_both_lines() {
        let err = read_str("{\"qid\":\"q\",\"retrieved\":[]}\n{\"qid\":\"q\",\"retrieved\":[]}")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "run.jsonl:2: qid `q` appears twice (lines 1 and 2): expected one line per query"
        );
    }
}
