//! The example RAG pipeline ragate gates: BM25 retrieval in four variants and an extractive
//! generator, speaking ragate's `command` protocol (one JSON query a line in, one native run
//! line out). Standalone on purpose: std, clap, serde_json and rust-stemmers, not the ragate
//! library. Identical input gives identical output bytes.
//!
//! ```text
//! cargo run --release -p ragate-example-pipeline -- [--variant bm25|hybrid|rerank|degraded] [--k N]
//!     [--corpus FILE] [--synonyms FILE] [--queries FILE] [--out FILE] [--noise SIGMA --seed N]
//!     < queries.jsonl
//! ```

mod bm25;
mod corpus;
mod generate;
mod retrieve;
mod text;

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use serde_json::Value;

use crate::retrieve::{Noise, Retriever, Variant};

const DEFAULT_CORPUS: &str = "corpus/docs.jsonl";
const DEFAULT_SYNONYMS: &str = "corpus/synonyms.tsv";

/// A small deterministic extractive RAG pipeline (ragate's example and test subject).
///
/// Reads `{"qid","query"}` lines from stdin (or the native qrels of --queries) and writes one
/// native run line per query: retrieved docs with scores, the top-3 contexts, the answer and a
/// word-count stand-in for token usage.
#[derive(Debug, Parser)]
#[command(name = "pipeline")]
struct Args {
    /// Documents, JSONL `{"doc_id" (or "_id"), "title", "text"}`.
    #[arg(long, value_name = "FILE")]
    corpus: Option<PathBuf>,
    /// Retrieval variant.
    #[arg(long, value_enum, default_value_t = Variant::Hybrid)]
    variant: Variant,
    /// Retrieved documents to emit per query.
    #[arg(long, default_value_t = 10, value_name = "N")]
    k: usize,
    /// Query expansion table, `term<TAB>alt1,alt2` lines, the term a word or a short phrase
    /// (default: corpus/synonyms.tsv when it exists and the corpus is the default one).
    #[arg(long, value_name = "FILE")]
    synonyms: Option<PathBuf>,
    /// Read the queries from this native qrels JSONL file instead of stdin.
    #[arg(long, value_name = "FILE")]
    queries: Option<PathBuf>,
    /// Stochastic retrieval: multiply every score by exp(SIGMA z), z a standard normal drawn from
    /// (--seed, qid, doc_id), as approximate indexes and sampled rerankers vary run to run.
    #[arg(long, value_name = "SIGMA", default_value_t = 0.0)]
    noise: f64,
    /// The run's seed for --noise: same seed, same output.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
    /// Write the run here instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("pipeline: error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let corpus_path = args
        .corpus
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_CORPUS));
    let docs = corpus::read_corpus(&corpus_path)?;
    let synonyms_path = match &args.synonyms {
        Some(path) => Some(path.clone()),
        None if args.corpus.is_none() && Path::new(DEFAULT_SYNONYMS).exists() => {
            Some(PathBuf::from(DEFAULT_SYNONYMS))
        }
        None => None,
    };
    let synonyms = match &synonyms_path {
        Some(path) => corpus::read_synonyms(path)?,
        None => corpus::Synonyms::default(),
    };
    if !(args.noise.is_finite() && args.noise >= 0.0) {
        return Err(format!(
            "--noise {}: expected a finite number >= 0",
            args.noise
        ));
    }
    let mut retriever = Retriever::new(docs, synonyms);
    if args.noise > 0.0 {
        retriever = retriever.with_noise(Noise {
            sigma: args.noise,
            seed: args.seed,
        });
    }

    let (source, input): (String, Box<dyn BufRead>) = match &args.queries {
        Some(path) => {
            let file = File::open(path)
                .map_err(|err| format!("{}: cannot read: {err}", path.display()))?;
            (path.display().to_string(), Box::new(BufReader::new(file)))
        }
        None => ("stdin".to_string(), Box::new(io::stdin().lock())),
    };
    let (target, mut output): (String, Box<dyn Write>) = match &args.out {
        Some(path) => {
            let file = File::create(path)
                .map_err(|err| format!("{}: cannot write: {err}", path.display()))?;
            (path.display().to_string(), Box::new(BufWriter::new(file)))
        }
        None => ("stdout".to_string(), Box::new(io::stdout().lock())),
    };
    let write_error = |err: io::Error| format!("{target}: cannot write: {err}");

    for (index, line) in input.lines().enumerate() {
        let number = index + 1;
        let line = line.map_err(|err| format!("{source}:{number}: cannot read: {err}"))?;
        let line = if number == 1 {
            line.trim_start_matches('\u{feff}')
        } else {
            &line
        };
        if line.trim().is_empty() {
            continue;
        }
        let (qid, query) =
            parse_request(line).map_err(|what| format!("{source}:{number}: {what}"))?;
        let run_line = answer_query(&retriever, args.variant, args.k, &qid, &query);
        // One line at a time, flushed, so a parent that writes and reads concurrently never waits.
        writeln!(output, "{run_line}").map_err(write_error)?;
        output.flush().map_err(write_error)?;
    }
    output.flush().map_err(write_error)
}

/// `{"qid": "...", "query": "..."}`; other fields (a qrels line's gold ids, slices) are ignored.
fn parse_request(line: &str) -> Result<(String, String), String> {
    const EXPECTED: &str = "expected a JSON object {\"qid\": string, \"query\": string}";
    let value: Value = serde_json::from_str(line).map_err(|err| format!("{EXPECTED}: {err}"))?;
    let qid = match value.get("qid") {
        Some(Value::String(qid)) => qid.clone(),
        Some(Value::Number(qid)) => qid.to_string(),
        _ => return Err(format!("{EXPECTED}: \"qid\" is missing or not a string")),
    };
    match value.get("query") {
        Some(Value::String(query)) => Ok((qid, query.clone())),
        _ => Err(format!(
            "{EXPECTED}: \"query\" is missing or not a string (qid {qid:?})"
        )),
    }
}

/// Retrieves, generates and renders one native run line.
fn answer_query(
    retriever: &Retriever,
    variant: Variant,
    k: usize,
    qid: &str,
    query: &str,
) -> String {
    let ranking = retriever.retrieve(qid, query, variant, k);
    let contexts: Vec<String> = ranking
        .iter()
        .take(generate::CONTEXT_DOCS)
        .map(|&(doc, _)| &retriever.docs[doc])
        .map(|doc| {
            if doc.text.trim().is_empty() {
                doc.title.trim()
            } else {
                doc.text.trim()
            }
        })
        .filter(|context| !context.is_empty())
        .map(str::to_string)
        .collect();
    let mut answer = generate::answer(query, &contexts);
    if variant == Variant::Degraded
        && let Some(sentence) = generate::unsupported_sentence(qid)
    {
        answer = if answer.is_empty() {
            sentence
        } else {
            format!("{answer} {sentence}")
        };
    }
    let (prompt_tokens, completion_tokens) = generate::usage(query, &contexts, &answer);

    let json = |text: &str| Value::from(text).to_string();
    let retrieved: Vec<String> = ranking
        .iter()
        .map(|&(doc, score)| {
            format!(
                "{{\"doc_id\":{},\"score\":{score:.4}}}",
                json(&retriever.docs[doc].doc_id)
            )
        })
        .collect();
    let contexts: Vec<String> = contexts.iter().map(|context| json(context)).collect();
    format!(
        "{{\"qid\":{},\"retrieved\":[{}],\"contexts\":[{}],\"answer\":{},\"usage\":{{\"prompt_tokens\":{prompt_tokens},\"completion_tokens\":{completion_tokens}}}}}",
        json(qid),
        retrieved.join(","),
        contexts.join(","),
        json(&answer),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Document, Synonyms};

    fn retriever() -> Retriever {
        let doc = |id: &str, title: &str, text: &str| Document {
            doc_id: id.into(),
            title: title.into(),
            text: text.into(),
        };
        Retriever::new(
            vec![
                doc(
                    "limits",
                    "Upload limits",
                    "An upload is aborted after three failed parts. Parts may be 5 GiB.",
                ),
                doc("quotas", "Quotas", "Each bucket has a \"soft\" quota."),
                doc("empty", "", ""),
            ],
            Synonyms::default(),
        )
    }

    #[test]
    fn renders_a_native_run_line_with_fixed_decimals() {
        let line = answer_query(&retriever(), Variant::Bm25, 10, "q1", "failed upload parts");
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["retrieved"][0]["doc_id"], "limits");
        assert!(line.contains("\"score\":") && !line.contains("e-"));
        assert_eq!(
            value["answer"],
            "An upload is aborted after three failed parts."
        );
        assert_eq!(value["usage"]["completion_tokens"], 8);
        assert_eq!(value["usage"]["prompt_tokens"], 3 + 13);
    }

    #[test]
    fn same_input_same_bytes() {
        for variant in [
            Variant::Bm25,
            Variant::Hybrid,
            Variant::Rerank,
            Variant::Degraded,
        ] {
            let a = answer_query(&retriever(), variant, 10, "q7", "bucket quota \"soft\"");
            let b = answer_query(&retriever(), variant, 10, "q7", "bucket quota \"soft\"");
            assert_eq!(a, b);
        }
    }

    #[test]
    fn rejects_requests_without_qid_or_query() {
        assert!(
            parse_request("{\"qid\":\"q1\"}")
                .unwrap_err()
                .contains("\"query\" is missing")
        );
        assert!(parse_request("[1]").is_err());
        assert_eq!(
            parse_request("{\"qid\":\"q\",\"query\":\"x\",\"class\":\"c\"}").unwrap(),
            ("q".into(), "x".into())
        );
    }
}
