//! Joins a query file and TSV relevance judgments into ragate's native qrels JSONL, for the
//! real-data check (`.ci/real-data-check`) and other test collections.
//!
//! ```text
//! cargo run --release --example convert_qrels -- --queries queries.jsonl --qrels qrels.tsv
//!     [--split test] [--keep type]... --out native.jsonl
//! ```
//!
//! - `--queries`: JSONL, `qid` (or BEIR `_id`) and `query` (or `text`), other fields optional.
//! - `--qrels`: `qid<TAB>doc_id<TAB>grade` lines (an optional header `query-id corpus-id score`),
//!   or TREC `qid 0 doc_id grade`.
//! - `--split NAME`: keep only the queries whose `split` field is NAME.
//! - `--keep FIELD`: copy this query field into the output as a slice attribute (repeatable).
//!
//! Output, in query-file order: `{"qid","query","graded_relevance":{doc: grade},...kept}`.
//! Queries without judgments are skipped (and counted on stderr); judgments of queries that are
//! not in the query file (or not in the split) are ignored and counted. Errors name file and
//! line, exit code 2. Standalone: std, clap and serde_json.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use serde_json::{Map, Value};

/// Converts queries + TSV qrels into native qrels JSONL.
#[derive(Debug, Parser)]
#[command(name = "convert_qrels")]
struct Args {
    #[arg(long, value_name = "FILE")]
    queries: PathBuf,
    #[arg(long, value_name = "FILE")]
    qrels: PathBuf,
    /// Keep only the queries whose "split" field has this value.
    #[arg(long, value_name = "NAME")]
    split: Option<String>,
    /// A query field to copy as a slice attribute (repeatable).
    #[arg(long, value_name = "FIELD")]
    keep: Vec<String>,
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("convert_qrels: error: {message}");
            ExitCode::from(2)
        }
    }
}

/// A judged document and its grade, in qrels-file order per query.
type Judgments = BTreeMap<String, Vec<(String, i64)>>;

fn run(args: &Args) -> Result<(), String> {
    let judgments = read_qrels(&args.qrels)?;
    let text = read(&args.queries)?;
    let mut out = String::new();
    let (mut written, mut unjudged) = (0usize, 0usize);
    let mut used = BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", args.queries.display(), index + 1);
        let value: Value =
            serde_json::from_str(line).map_err(|err| format!("{at}: not JSON: {err}"))?;
        let string = |names: [&str; 2]| {
            names
                .iter()
                .find_map(|name| value.get(*name))
                .and_then(text_of)
        };
        let qid =
            string(["qid", "_id"]).ok_or_else(|| format!("{at}: expected \"qid\" or \"_id\""))?;
        let query = string(["query", "text"])
            .ok_or_else(|| format!("{at}: expected \"query\" or \"text\""))?;
        if let Some(split) = &args.split
            && value.get("split").and_then(text_of).as_deref() != Some(split.as_str())
        {
            continue;
        }
        let Some(docs) = judgments.get(&qid) else {
            unjudged += 1;
            continue;
        };
        used.insert(qid.clone());
        let mut fields = Map::new();
        fields.insert("qid".into(), Value::from(qid));
        fields.insert("query".into(), Value::from(query));
        let graded: Map<String, Value> = docs
            .iter()
            .map(|(doc, grade)| (doc.clone(), Value::from(*grade)))
            .collect();
        fields.insert("graded_relevance".into(), Value::Object(graded));
        for name in &args.keep {
            let kept = value
                .get(name)
                .and_then(text_of)
                .ok_or_else(|| format!("{at}: no field {name:?} to keep"))?;
            fields.insert(name.clone(), Value::from(kept));
        }
        out.push_str(&Value::Object(fields).to_string());
        out.push('\n');
        written += 1;
    }
    let ignored = judgments.keys().filter(|qid| !used.contains(*qid)).count();
    fs::write(&args.out, out)
        .map_err(|err| format!("{}: cannot write: {err}", args.out.display()))?;
    eprintln!(
        "convert_qrels: {written} queries to {}; {unjudged} without judgments skipped; \
         judgments of {ignored} other queries ignored",
        args.out.display()
    );
    if written == 0 {
        return Err(format!("{}: no judged query to write", args.out.display()));
    }
    Ok(())
}

fn read_qrels(path: &Path) -> Result<Judgments, String> {
    let text = read(path)?;
    let mut judgments = Judgments::new();
    for (index, line) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), index + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (qid, doc, grade) = match fields.as_slice() {
            [] => continue,
            [qid, doc, grade] | [qid, _, doc, grade] => (*qid, *doc, *grade),
            _ => {
                return Err(format!(
                    "{at}: expected qid<TAB>doc_id<TAB>grade or qid 0 doc_id grade"
                ));
            }
        };
        let Ok(grade) = grade.parse::<i64>() else {
            if index == 0 {
                continue; // a header line
            }
            return Err(format!("{at}: grade {grade:?} is not an integer"));
        };
        let docs = judgments.entry(qid.to_string()).or_default();
        if docs.iter().any(|(seen, _)| seen == doc) {
            return Err(format!("{at}: query {qid:?} judges document {doc:?} twice"));
        }
        docs.push((doc.to_string(), grade));
    }
    Ok(judgments)
}

/// A string field's text; numbers and booleans as their JSON text.
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(_) | Value::Bool(_) => Some(value.to_string()),
        _ => None,
    }
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path)
        .map(|text| text.trim_start_matches('\u{feff}').to_string())
        .map_err(|err| format!("{}: cannot read: {err}", path.display()))
}
