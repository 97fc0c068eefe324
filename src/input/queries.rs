//! Reader of query texts (TSV `qid<TAB>text` or JSONL) for qrels formats that carry none.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use crate::error::{Error, Result, shorten};
use crate::input::native_qrels::{attribute_value, parse_json_line};
use crate::input::qrels::Qrels;
use crate::input::text_file::{TextFile, check_id};

/// One query's text and metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryText {
    /// The query's id.
    pub qid: String,
    /// The line of the file it was read from.
    pub line: u64,
    /// The query text.
    pub text: String,
    /// A reference answer, when the line has one.
    pub reference_answer: Option<String>,
    /// A substring the answer must contain (`answer_contains`), when the line has one.
    pub gold_answer_substring: Option<String>,
    /// Other scalar fields of a JSONL line (slice attributes such as `class`).
    pub attributes: BTreeMap<String, String>,
}

const JSONL_EXPECTED: &str =
    "a JSON object with \"qid\" (or BEIR \"_id\") and \"query\" (or BEIR \"text\")";

/// Reads queries as JSONL when the first line is a JSON object, else as TSV.
pub fn read(file: &TextFile) -> Result<Vec<QueryText>> {
    file.require_data("queries (TSV `qid<TAB>text` or JSONL)")?;
    let is_jsonl = file
        .first_line()
        .is_some_and(|l| l.text.trim_start().starts_with('{'));
    let mut queries = Vec::new();
    let mut lines_by_qid: HashMap<String, u64> = HashMap::new();
    for line in file.lines() {
        let query = if is_jsonl {
            let object: Map<String, Value> =
                parse_json_line(file, line.number, line.text, JSONL_EXPECTED)?;
            from_json(object, line.number)
                .map_err(|msg| Error::parse(file.path(), line.number, msg))?
        } else {
            let (qid, text) = line.text.split_once('\t').ok_or_else(|| {
                Error::parse(
                    file.path(),
                    line.number,
                    "expected `qid<TAB>text` (no tab found)",
                )
            })?;
            QueryText {
                qid: qid.trim().to_string(),
                line: line.number,
                text: text.trim().to_string(),
                reference_answer: None,
                gold_answer_substring: None,
                attributes: BTreeMap::new(),
            }
        };
        check_id("qid", &query.qid).map_err(|msg| Error::parse(file.path(), line.number, msg))?;
        if let Some(first) = lines_by_qid.insert(query.qid.clone(), line.number) {
            return Err(Error::parse(
                file.path(),
                line.number,
                format!(
                    "query `{}` is given twice (lines {first} and {}): expected one text per qid",
                    shorten(&query.qid),
                    line.number
                ),
            ));
        }
        queries.push(query);
    }
    Ok(queries)
}

fn take_string(object: &mut Map<String, Value>, keys: [&str; 2]) -> Result<Option<String>, String> {
    for key in keys {
        match object.remove(key) {
            None => continue,
            Some(Value::String(s)) => return Ok(Some(s)),
            Some(Value::Number(n)) => return Ok(Some(n.to_string())),
            Some(other) => {
                return Err(format!(
                    "field `{key}` is {}: expected a string",
                    crate::error::shorten(&other.to_string())
                ));
            }
        }
    }
    Ok(None)
}

fn from_json(mut object: Map<String, Value>, line: u64) -> Result<QueryText, String> {
    let qid = take_string(&mut object, ["qid", "_id"])?
        .ok_or_else(|| format!("no \"qid\" field: expected {JSONL_EXPECTED}"))?;
    let text = take_string(&mut object, ["query", "text"])?.ok_or_else(|| {
        format!(
            "query `{}` has no \"query\" field: expected {JSONL_EXPECTED}",
            crate::error::shorten(&qid)
        )
    })?;
    let reference_answer = take_string(&mut object, ["reference_answer", "reference_answer"])?;
    let gold_answer_substring = take_string(
        &mut object,
        ["gold_answer_substring", "gold_answer_substring"],
    )?;
    // Non-scalar metadata (BEIR's `metadata` object) cannot be a slice value and is not kept.
    let attributes = object
        .iter()
        .filter_map(|(key, value)| Some((key.clone(), attribute_value(value)?)))
        .collect();
    Ok(QueryText {
        qid,
        line,
        text,
        reference_answer,
        gold_answer_substring,
        attributes,
    })
}

/// Gives qrels queries their texts: the file's text replaces one the qrels carry; metadata already
/// in the qrels wins. Queries of the file that the qrels do not judge are not evaluated (a queries
/// file usually covers more than one split): returns how many, for the caller to say so.
pub fn attach(qrels: &mut Qrels, queries: Vec<QueryText>) -> usize {
    let mut unjudged = 0;
    for query in queries {
        let Some(position) = qrels.position(&query.qid) else {
            unjudged += 1;
            continue;
        };
        let target = qrels.query_mut(position);
        target.text = Some(query.text);
        if target.reference_answer.is_none() {
            target.reference_answer = query.reference_answer;
        }
        if target.gold_answer_substring.is_none() {
            target.gold_answer_substring = query.gold_answer_substring;
        }
        for (key, value) in query.attributes {
            target.attributes.entry(key).or_insert(value);
        }
    }
    unjudged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<Vec<QueryText>> {
        read(&TextFile::from_bytes("queries", text.as_bytes().to_vec()).unwrap())
    }

    #[test]
    fn reads_tsv_and_both_jsonl_spellings() {
        let tsv = read_str("q1\twhat is a bucket\n").unwrap();
        let native =
            read_str("{\"qid\":\"q1\",\"query\":\"what is a bucket\",\"class\":\"literal\"}")
                .unwrap();
        let beir =
            read_str("{\"_id\":\"q1\",\"text\":\"what is a bucket\",\"metadata\":{}}").unwrap();
        assert_eq!(tsv[0].text, "what is a bucket");
        assert_eq!(native[0].attributes["class"], "literal");
        assert_eq!(beir[0].qid, "q1");
        assert!(beir[0].attributes.is_empty());
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            read_str("q1\tok\nq2 no tab\n").unwrap_err().to_string(),
            "queries:2: expected `qid<TAB>text` (no tab found)"
        );
        assert_eq!(
            read_str("{\"qid\":\"q1\"}").unwrap_err().to_string(),
            format!("queries:1: query `q1` has no \"query\" field: expected {JSONL_EXPECTED}")
        );
        assert_eq!(
            read_str("q1\ta\nq2\tb\nq1\tc\n").unwrap_err().to_string(),
            "queries:3: query `q1` is given twice (lines 1 and 3): expected one text per qid"
        );
    }

    #[test]
    fn attach_replaces_texts_and_counts_the_unjudged() {
        let file = TextFile::from_bytes(
            "q.jsonl",
            b"{\"qid\":\"q1\",\"query\":\"old\",\"gold_doc_ids\":[\"d\"],\"class\":\"a\"}\n"
                .to_vec(),
        )
        .unwrap();
        let mut qrels = crate::input::native_qrels::read(&file).unwrap();
        let texts = read_str("{\"qid\":\"q1\",\"query\":\"new\",\"class\":\"b\"}\n{\"qid\":\"q9\",\"query\":\"x\"}\n")
            .unwrap();
        assert_eq!(attach(&mut qrels, texts), 1, "q9 has no judgments");
        let q1 = &qrels.queries()[0];
        assert_eq!(
            q1.text.as_deref(),
            Some("new"),
            "the queries file's text wins"
        );
        assert_eq!(q1.attributes["class"], "a", "the qrels' metadata wins");
    }

    #[test]
    fn the_answer_references_of_a_queries_file_reach_the_qrels_without_replacing_theirs() {
        let file = TextFile::from_bytes(
            "q.jsonl",
            b"{\"qid\":\"q1\",\"query\":\"\",\"gold_doc_ids\":[\"d\"]}\n\
              {\"qid\":\"q2\",\"query\":\"\",\"gold_doc_ids\":[\"d\"],\"gold_answer_substring\":\"own\"}\n"
                .to_vec(),
        )
        .unwrap();
        let mut qrels = crate::input::native_qrels::read(&file).unwrap();
        let texts = read_str(
            "{\"_id\":\"q1\",\"text\":\"a\",\"gold_answer_substring\":\"30 minutes\",\"reference_answer\":\"It is 30 minutes.\"}\n\
             {\"_id\":\"q2\",\"text\":\"b\",\"gold_answer_substring\":\"theirs\"}\n",
        )
        .unwrap();
        assert!(texts[0].attributes.is_empty(), "{:?}", texts[0].attributes);
        assert_eq!(attach(&mut qrels, texts), 0);
        let (q1, q2) = (&qrels.queries()[0], &qrels.queries()[1]);
        assert_eq!(q1.gold_answer_substring.as_deref(), Some("30 minutes"));
        assert_eq!(q1.reference_answer.as_deref(), Some("It is 30 minutes."));
        assert_eq!(
            q2.gold_answer_substring.as_deref(),
            Some("own"),
            "the qrels' wins"
        );
    }
}
