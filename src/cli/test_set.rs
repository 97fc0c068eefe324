//! The arguments of the commands that build and budget a test set: `holes`, `qrels apply` and
//! `plan`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{GateFormat, default_config, tier_name};

#[derive(Debug, Args)]
pub(crate) struct HolesArgs {
    /// The tier whose qrels have the holes (and whose queries and corpus the judge reads).
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// A run to pool (native JSONL or TREC; repeatable): the holes are the union of every run's
    /// top documents per query that the qrels do not judge.
    #[arg(long = "run", required = true, value_name = "FILE")]
    pub runs: Vec<PathBuf>,
    /// How deep each run is pooled [default: the largest cut-off of the tier's gated retrieval
    /// metrics; 10 for one without a cut-off, such as mrr, or when none is gated].
    #[arg(long, value_name = "K")]
    pub depth: Option<usize>,
    /// Only the first N holes (listed, or judged).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// A judge of the config (`openai` or `command`) to propose a grade 0-3 for every hole.
    #[arg(long, value_name = "NAME", requires = "out")]
    pub judge: Option<String>,
    /// The proposals file to write (JSONL), with --judge.
    #[arg(long, value_name = "FILE", requires = "judge")]
    pub out: Option<PathBuf>,
    /// What to print on stdout without --judge: a table, one JSON object, or one JSON object a
    /// hole (`{"qid", "doc_id", "priority", "best_rank", "runs"}`).
    #[arg(long, value_enum, default_value_t = HolesFormat::Table)]
    pub format: HolesFormat,
    /// Worker threads for TREC runs (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// What `ragate holes` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum HolesFormat {
    Table,
    Json,
    Jsonl,
}

#[derive(Debug, Subcommand)]
pub(crate) enum QrelsCommand {
    /// Write the accepted proposals of a proposals file into the tier's qrels, in the qrels'
    /// own format, each marked with the judge that proposed it; shows the diff first and writes
    /// only with --yes.
    Apply(QrelsApplyArgs),
}

#[derive(Debug, Args)]
pub(crate) struct QrelsApplyArgs {
    /// The proposals file (`ragate holes --judge NAME --out FILE`).
    #[arg(value_name = "PROPOSALS")]
    pub proposals: PathBuf,
    /// The tier whose qrels file the accepted proposals are written into.
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// Accept only these proposals: qid:doc_id pairs (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "QID:DOC")]
    pub only: Vec<String>,
    /// Accept only proposals whose score (the judge's confidence) is at least S; one without a
    /// score is left out.
    #[arg(long, value_name = "S")]
    pub min_score: Option<f64>,
    /// Replace existing judgments (human or model) with the proposals; without it they are kept.
    #[arg(long)]
    pub overwrite: bool,
    /// Write the qrels (without it, only the diff is shown).
    #[arg(long)]
    pub yes: bool,
    /// Apply even in CI (`CI` set, but not to 0 or false).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The tier to plan.
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// The answers to plan for (a native run); default: the configured run file, else the
    /// baseline's stored answers (an estimate).
    #[arg(long, value_name = "FILE")]
    pub run: Option<PathBuf>,
    /// What to print on stdout: a table with notes, or one JSON object (`ragate-plan/1`).
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
}
