//! Command-line arguments (clap derive types only; validation happens in `app`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::input::{QrelsFormat, RunFormat};
use crate::metrics::retrieval::RetrievalMetric;
use crate::report::eval_output::OutputFormat;

#[derive(Debug, Parser)]
#[command(
    name = "ragate",
    version,
    about = "A CI regression gate for retrieval-augmented generation"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Score a run against qrels with retrieval metrics.
    Eval(EvalArgs),
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Relevance judgments: native JSONL, TREC, TSV, or a BEIR folder.
    #[arg(long, value_name = "FILE")]
    pub qrels: PathBuf,
    /// The run to score: native JSONL or TREC.
    #[arg(long, value_name = "FILE")]
    pub run: PathBuf,
    /// A metric to compute (repeatable), e.g. recall@5, mrr, ndcg@10.
    /// Default: precision@5, recall@5, recall@10, mrr, ndcg@10.
    #[arg(short = 'm', long = "metric", value_name = "METRIC")]
    pub metrics: Vec<RetrievalMetric>,
    /// Also print every query's values.
    #[arg(long)]
    pub per_query: bool,
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Qrels format (default: detected from the path and the first line).
    #[arg(long, value_enum)]
    pub qrels_format: Option<QrelsFormat>,
    /// Run format (default: detected from the path and the first line).
    #[arg(long, value_enum)]
    pub run_format: Option<RunFormat>,
    /// The qrels split of a BEIR folder.
    #[arg(long, default_value = "test", value_name = "NAME")]
    pub beir_split: String,
    /// Query texts for TREC or TSV qrels (TSV `qid<TAB>text` or JSONL).
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// Map retrieved chunk ids to documents: with `#`, `doc7#3` counts as `doc7`.
    #[arg(long, value_name = "SEP")]
    pub chunk_separator: Option<String>,
    /// Worker threads for TREC runs (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}
