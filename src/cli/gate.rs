//! The arguments of the commands that gate a tier's run and keep its record: `gate`, `merge`,
//! `compare`, `report`, `baseline` and `history`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{RunFormatArg, default_config, tier_name};
use crate::shard::Shard;

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The reference results (e.g. the main branch, or a baseline).
    pub a: PathBuf,
    /// The results to judge against A.
    pub b: PathBuf,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// Also write the JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// When A was judged by other judges than B, re-judge A's stored answers with the config's
    /// judges (those behind B) instead of failing.
    #[arg(long)]
    pub allow_judge_change: bool,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
}

#[derive(Debug, Args)]
pub(crate) struct GateArgs {
    /// The tier to gate (smoke, regression, deep, ...).
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// The run to evaluate (native JSONL or TREC).
    #[arg(long, value_name = "FILE")]
    pub run: Option<PathBuf>,
    /// Run format (default: detected).
    #[arg(long, value_enum)]
    pub run_format: Option<RunFormatArg>,
    #[command(flatten)]
    pub report: ReportArgs,
    /// Worker threads for TREC runs (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Evaluate only shard I of N (a query's shard is 1 + sha256(qid)[..8] mod N) and write a
    /// partial `shard.json` for `ragate merge` instead of gating.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
}

#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// The tier the shards evaluated.
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    #[command(flatten)]
    pub report: ReportArgs,
    /// The output directories of `ragate gate --shard I/N`, one per shard.
    #[arg(required = true, value_name = "DIR")]
    pub shards: Vec<PathBuf>,
}

/// Where and how `gate` and `merge` report.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Where results.json, junit.xml, summary.md, trace.jsonl and run-stats.json go
    /// (default: .ragate/out/<tier> beside the config, wherever ragate runs). Never inside a
    /// history folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
    /// When a judge differs from the one behind the baseline, re-judge the baseline's stored
    /// answers with the current judge (contexts rebuilt from the corpus) instead of failing.
    #[arg(long)]
    pub allow_judge_change: bool,
    /// The run history (`ragate history add` writes it): adds a `drift` check per `all` check
    /// and the trends (sparklines) to the summary.
    #[arg(long, value_name = "DIR")]
    pub history: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HistoryCommand {
    /// Store one record of a gate run (its results.json) in the history directory.
    Add(HistoryAddArgs),
    /// List a tier's recorded runs, with the series breaks (config or judge changes).
    Show(HistoryShowArgs),
}

#[derive(Debug, Args)]
pub(crate) struct HistoryAddArgs {
    /// The tier the run gated (its records are kept apart from other tiers').
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// The results to record (default: .ragate/out/<tier>/results.json beside the config).
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// The history directory (default: the config's `history: { dir }`); `--dir` is the same
    /// option under its former name.
    #[arg(long = "history", visible_alias = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Also keep every query's metric values (larger records).
    #[arg(long)]
    pub with_queries: bool,
}

#[derive(Debug, Args)]
pub(crate) struct HtmlReportArgs {
    /// The tier whose gate run is reported (its outputs are read from .ragate/out/<tier> beside
    /// the config by default).
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// The gate's output folder, or its results.json (default: .ragate/out/<tier> beside the
    /// config).
    #[arg(long, value_name = "DIR|FILE")]
    pub from: Option<PathBuf>,
    /// A history directory (`ragate history add`): trend charts and the drift checks.
    #[arg(long, value_name = "DIR")]
    pub history: Option<PathBuf>,
    /// Where to write the HTML file (never inside a history folder).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct HistoryShowArgs {
    /// The tier whose recorded runs are listed.
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config, read only for its `history: { dir }` when --history is not given [default:
    /// $RAGATE_CONFIG, else eval-config.yaml in this directory or the nearest parent up to the
    /// repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// The history directory (default: the config's `history: { dir }`); `--dir` is the same
    /// option under its former name.
    #[arg(long = "history", visible_alias = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Only the last N runs.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// What to print on stdout: a table, or one JSON object `{"tier", "earlier_runs_not_shown", "runs"}`.
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
}

/// What `ragate gate` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum GateFormat {
    Table,
    Json,
}

#[derive(Debug, Subcommand)]
pub(crate) enum BaselineCommand {
    /// Promote a tier's last results to its baseline.
    Accept(AcceptArgs),
    /// Print a tier's baseline summary.
    Show(ShowArgs),
}

#[derive(Debug, Args)]
pub(crate) struct AcceptArgs {
    /// The tier whose baseline (its `baseline:` file in the config) is replaced.
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// The results to accept (default: .ragate/out/<tier>/results.json beside the config).
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Accept even in CI (`CI` set, but not to 0 or false), and overwrite an existing baseline
    /// that cannot be read (corrupt, or written by a newer ragate).
    #[arg(long)]
    pub force: bool,
    /// What to print on stdout: the summary's diff, or one JSON object
    /// `{"tier", "from", "baseline", "changed", "diff"}`.
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The tier whose baseline (its `baseline:` file in the config) is shown.
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// What to print on stdout: provenance and summary as lines, or one JSON object
    /// `{"tier", "path", "queries", "provenance", "summary"}`.
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
}
