//! The arguments of `eval` and `convert`, and the input formats as the command line spells
//! them.

use std::path::PathBuf;

use clap::Args;

use crate::input::qrels::Grade;
use crate::input::{QrelsFormat, RunFormat};
use crate::metrics::conventions::{self, DEFAULT_RELEVANCE_LEVEL, NoRelevant};
use crate::metrics::written::WrittenMetric;
use crate::report::eval_output::OutputFormat;

#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// Relevance judgments: TREC `qid 0 doc_id grade`, TSV `qid<TAB>doc_id<TAB>grade` (header
    /// optional), native JSONL, or a BEIR folder.
    #[arg(long, value_name = "FILE")]
    pub qrels: PathBuf,
    /// Query texts: TSV `qid<TAB>text` or JSONL (`qid` or `_id`, `query` or `text`, other fields
    /// for --keep). The output follows this file's order.
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// The qrels format (auto: detected from the path and the first line).
    #[arg(long, value_enum, default_value_t = ConvertFormat::Auto)]
    pub format: ConvertFormat,
    /// A BEIR folder's split (`qrels/NAME.tsv`, default test); otherwise keep only the queries of
    /// the queries file whose `split` field is NAME.
    #[arg(long, value_name = "NAME")]
    pub split: Option<String>,
    /// A query field to write as a slice field (repeatable); every written query must have it.
    #[arg(long, value_name = "FIELD")]
    pub keep: Vec<String>,
    /// The native qrels JSONL to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// The qrels formats `convert` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ConvertFormat {
    /// Detected from the path (a folder is BEIR) and the first line.
    Auto,
    /// `qid iter doc_id grade`.
    Trec,
    /// `qid<TAB>doc_id<TAB>grade`, header optional.
    Tsv,
    /// A BEIR folder (`queries.jsonl`, `qrels/<split>.tsv`).
    Beir,
    /// Native qrels JSONL (rewritten in canonical form).
    Native,
}

#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// Relevance judgments: native JSONL, TREC, TSV, or a BEIR folder.
    #[arg(long, value_name = "FILE")]
    pub qrels: PathBuf,
    /// The run to score: native JSONL or TREC.
    #[arg(long, value_name = "FILE")]
    pub run: PathBuf,
    /// A metric to compute (repeatable), e.g. recall@5, mrr, ndcg@10, faithfulness; also
    /// ir_measures' and trec_eval's names (nDCG@10, ndcg_cut_10, P_5, recip_rank).
    /// Default: precision@5, recall@5, recall@10, mrr, ndcg@10.
    #[arg(short = 'm', long = "metric", value_name = "METRIC")]
    pub metrics: Vec<WrittenMetric>,
    /// Document texts (JSONL `{doc_id|_id, title, text}`) for answer metrics whose run has no
    /// `contexts` or retrieved `text`.
    #[arg(long, value_name = "FILE")]
    pub corpus: Option<PathBuf>,
    /// Also print every query's values.
    #[arg(long)]
    pub per_query: bool,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Qrels format (default: detected from the path and the first line).
    #[arg(long, value_enum)]
    pub qrels_format: Option<QrelsFormatArg>,
    /// Run format (default: detected from the path and the first line).
    #[arg(long, value_enum)]
    pub run_format: Option<RunFormatArg>,
    /// The qrels split of a BEIR folder.
    #[arg(long, default_value = "test", value_name = "NAME")]
    pub beir_split: String,
    /// Query texts for TREC or TSV qrels (TSV `qid<TAB>text` or JSONL).
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// Map retrieved chunk ids to documents: with `#`, `doc7#3` counts as `doc7`.
    #[arg(long, value_name = "SEP", value_parser = non_empty_separator)]
    pub chunk_separator: Option<String>,
    /// Worker threads for TREC runs (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// A document is relevant for binary metrics (precision, recall, hit rate, MRR, MAP,
    /// R-precision) with a grade at least L; nDCG keeps the graded gains (trec_eval `-l`).
    #[arg(long, value_name = "L", default_value_t = DEFAULT_RELEVANCE_LEVEL, value_parser = parse_relevance_level)]
    pub relevance_level: Grade,
    /// What a judged query without a relevant document scores: left out of the means (`exclude`)
    /// or 0 in every retrieval metric (`zero`, as trec_eval averages).
    #[arg(long, value_enum, value_name = "HOW", default_value_t = NoRelevantArg::Exclude)]
    pub no_relevant: NoRelevantArg,
}

/// `--relevance-level`: an integer grade from 1 to 100.
fn parse_relevance_level(text: &str) -> Result<Grade, String> {
    let value: i64 = text
        .parse()
        .map_err(|_| format!("`{text}`: expected an integer grade from 1 to 100"))?;
    conventions::relevance_level(value)
}

/// `--no-relevant`: [`NoRelevant`], as the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NoRelevantArg {
    /// Left out of every mean and counted (the default).
    Exclude,
    /// Kept in the means, scoring 0 in every retrieval metric (trec_eval).
    Zero,
}

impl From<NoRelevantArg> for NoRelevant {
    fn from(arg: NoRelevantArg) -> Self {
        match arg {
            NoRelevantArg::Exclude => NoRelevant::Exclude,
            NoRelevantArg::Zero => NoRelevant::Zero,
        }
    }
}

/// `--chunk-separator`: an empty separator would silently turn chunk mapping off.
fn non_empty_separator(text: &str) -> Result<String, String> {
    if text.is_empty() {
        Err(
            "empty: expected a separator such as `#` (leave the option out to match ids whole)"
                .to_string(),
        )
    } else {
        Ok(text.to_string())
    }
}

/// `--qrels-format`: the input layer's [`QrelsFormat`], as the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QrelsFormatArg {
    /// JSONL, one query a line (`qid`, `query`, `gold_doc_ids`, `graded_relevance`, ...).
    Native,
    /// `qid iter doc_id grade`.
    Trec,
    /// `qid<TAB>doc_id<TAB>grade`, header optional.
    Tsv,
    /// A BEIR folder (`queries.jsonl`, `qrels/<split>.tsv`).
    Beir,
}

impl From<QrelsFormatArg> for QrelsFormat {
    fn from(arg: QrelsFormatArg) -> Self {
        match arg {
            QrelsFormatArg::Native => QrelsFormat::Native,
            QrelsFormatArg::Trec => QrelsFormat::Trec,
            QrelsFormatArg::Tsv => QrelsFormat::Tsv,
            QrelsFormatArg::Beir => QrelsFormat::Beir,
        }
    }
}

/// `--run-format`: the input layer's [`RunFormat`], as the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RunFormatArg {
    /// JSONL, one query a line (`qid`, `retrieved`, `answer`, `contexts`).
    Native,
    /// `qid Q0 doc_id rank score tag`.
    Trec,
}

impl From<RunFormatArg> for RunFormat {
    fn from(arg: RunFormatArg) -> Self {
        match arg {
            RunFormatArg::Native => RunFormat::Native,
            RunFormatArg::Trec => RunFormat::Trec,
        }
    }
}
