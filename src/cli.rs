//! Command-line arguments (clap derive types only; validation happens in `app`).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::builder::{PossibleValue, StyledStr};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::discover;
use crate::exit_code::ExitStatus;
use crate::input::qrels::Grade;
use crate::input::{QrelsFormat, RunFormat};
use crate::metrics::conventions::{self, DEFAULT_RELEVANCE_LEVEL, NoRelevant};
use crate::metrics::metric::Metric;
use crate::metrics::written::WrittenMetric;
use crate::report::eval_output::OutputFormat;
use crate::shard::Shard;
use crate::term::ColorWhen;

mod test_set;
pub(crate) use test_set::{
    HolesArgs, HolesFormat, PlanArgs, QrelsAcceptArgs, QrelsApplyArgs, QrelsCommand, SynthArgs,
};

/// `eval-config.yaml` in the working directory or the nearest parent that has one (not above the
/// repository root); the bare name when none does, so the error names the file looked for.
fn default_config() -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|dir| discover::config_file(&dir))
        .unwrap_or_else(|| PathBuf::from(discover::CONFIG_FILE))
}

#[derive(Debug, Parser)]
#[command(
    name = "ragate",
    // `0.1.0 (abc123def456)` when built from git (build.rs), else `0.1.0`.
    version = env!("RAGATE_VERSION"),
    about = "A CI regression gate for retrieval-augmented generation",
    after_help = exit_status_help()
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub terminal: TerminalArgs,
}

/// `Exit status:` and a line per code with its meaning, as `ragate --help` ends: generated from
/// [`ExitStatus`], as the man page's EXIT STATUS section is, so neither can drift from the codes.
fn exit_status_help() -> StyledStr {
    let header = *clap::builder::Styles::default().get_header();
    let mut text = StyledStr::new();
    let _ = write!(text, "{header}Exit status:{header:#}");
    for status in ExitStatus::ALL {
        let _ = write!(text, "\n  {status}  {}", status.meaning());
    }
    text
}

/// How ragate talks to the terminal (global: accepted before or after the subcommand).
#[derive(Debug, Args)]
pub(crate) struct TerminalArgs {
    /// When to colour the output: auto colours a terminal, unless NO_COLOR is set (FORCE_COLOR
    /// colours a pipe too); always and never override both.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
    /// Print only errors: nothing on stdout but what `--format json` (or tsv) asks for, no
    /// warnings, notes or progress on stderr. Exit codes are unchanged.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Score a run against qrels (retrieval metrics; answer metrics for native runs).
    Eval(EvalArgs),
    /// Evaluate a tier, compare it with its baseline and fail on a regression.
    Gate(GateArgs),
    /// Combine the outputs of `gate --shard I/N` runs into one gate run.
    Merge(MergeArgs),
    /// Accept or show a tier's baseline.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Compare two results files (A is the reference) with the gate's verdict machinery.
    Compare(CompareArgs),
    /// Check the config, every tier's qrels and baseline, and lint the qrels, running nothing.
    Validate(ValidateArgs),
    /// Two judges on the same claims: agreement, Cohen's kappa, disagreements.
    JudgeAgreement(AgreementArgs),
    /// Measure a judge against labelled claims or answers: balanced accuracy, TPR, TNR,
    /// precision, F1, AUC with 95% intervals, per class, and the items it got wrong.
    JudgeEval(JudgeEvalArgs),
    /// Turn TREC, TSV or BEIR qrels (and a queries file) into native qrels JSONL.
    Convert(ConvertArgs),
    /// Keep a tier's run history (one compact record per run) and show it.
    #[command(subcommand)]
    History(HistoryCommand),
    /// Scaffold a config, sample qrels, a stand-in pipeline, baselines/ and a GitHub workflow
    /// (overwrites nothing).
    Init(InitArgs),
    /// List a tier's judgment holes: retrieved documents the qrels do not judge, pooled across
    /// runs within the gated depth, most consequential first; `--judge` writes a judge's
    /// proposed grades to a proposals file (never to the qrels).
    Holes(HolesArgs),
    /// Draft test queries from a corpus with a generator (an `openai` or `command` judge): a
    /// seeded sample stratified by document length, literal / paraphrased / multi-topic /
    /// numeric questions with their gold documents and reference answers, checked for
    /// duplicates and answerability; writes a draft file and a review sheet (never a tier).
    Synth(SynthArgs),
    /// Write reviewed judgments or drafted queries into a tier's qrels.
    #[command(subcommand)]
    Qrels(QrelsCommand),
    /// Write one self-contained HTML report of a tier's gate run: verdicts, trends, per-query
    /// deltas, worst queries, judge calibration.
    Report(HtmlReportArgs),
    /// Before spending: what a gate run of a tier will cost: queries, answers, judge tasks,
    /// cache hits, calls, tokens, money and wall time (and whether it fits `gate.budget`).
    Plan(PlanArgs),
    /// Print a shell completion script on stdout (e.g. `ragate completions bash >
    /// ~/.local/share/bash-completion/completions/ragate`).
    Completions(CompletionsArgs),
    /// Print the man page ragate.1 on stdout, or write it and one page per subcommand
    /// (ragate-gate.1, ...) into a folder.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Write ragate.1 and a page per subcommand into this folder (created when missing) instead
    /// of printing ragate.1.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

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
pub(crate) struct InitArgs {
    /// How the config's pipeline produces a run: the Python stand-in through the `command`
    /// adapter, a generic `command` line, an `http` endpoint, or a precomputed `run-file`.
    #[arg(long, value_enum, default_value_t = InitPipeline::Python)]
    pub pipeline: InitPipeline,
    /// The folder to scaffold in (created when missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

/// The pipeline adapter `ragate init` configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum InitPipeline {
    Python,
    Command,
    Http,
    RunFile,
}

#[derive(Debug, Args)]
pub(crate) struct JudgeEvalArgs {
    /// Labelled items, JSONL: `{"claim" or "answer", "context" or "contexts", "label":
    /// "supported"|"unsupported", optional "id", "qid", "class"}` (docs/metrics.md).
    #[arg(long, value_name = "FILE", required_unless_present = "tier", conflicts_with_all = ["tier", "run", "labels"])]
    pub items: Option<PathBuf>,
    /// Instead of --items: the human labels of a tier (its `labels:` file, or --labels) against
    /// the judges' values on the answers of --run.
    #[arg(long, value_parser = tier_name, requires = "run")]
    pub tier: Option<String>,
    /// The run whose answers the labels judged (native JSONL), with --tier.
    #[arg(long, value_name = "FILE", requires = "tier")]
    pub run: Option<PathBuf>,
    /// The human labels file [default: the tier's `labels:`], with --tier.
    #[arg(long, value_name = "FILE", requires = "tier")]
    pub labels: Option<PathBuf>,
    /// With --tier: the judged metric whose labels are compared (a value of at least 0.5 is
    /// positive on both sides).
    #[arg(long, default_value = "faithfulness", value_name = "METRIC")]
    pub metric: Metric,
    /// The judges to measure, by name in the config (repeatable, or A,B); `lexical-1` and
    /// `lexical-2` are the built-in lexical judges [default: the config's `default` judge].
    #[arg(long = "judge", value_delimiter = ',', value_name = "NAME")]
    pub judges: Vec<String>,
    /// The config whose judges and cache are used [default: $RAGATE_CONFIG, else
    /// eval-config.yaml in this directory or the nearest parent up to the repository root; none:
    /// only the built-in lexical judges, no cache].
    #[arg(long, env = "RAGATE_CONFIG", hide_env = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The seed of the bootstrap intervals (balanced accuracy, F1, AUC).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub seed: u64,
    /// Exit 1 when a judge's balanced accuracy (the point estimate) is below this.
    #[arg(long, value_name = "X")]
    pub min_balanced_accuracy: Option<f64>,
    /// What to print on stdout: a report for people, or one JSON document
    /// (`ragate-judge-eval/1`: per judge the scores, per class and the misjudged items).
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
}

#[derive(Debug, Args)]
pub(crate) struct AgreementArgs {
    /// The tier whose judges (and config) judge the run's answers.
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// The two judges to compare, by name: A,B.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub judges: Vec<String>,
    /// The run whose answers are judged (native JSONL).
    #[arg(long, value_name = "FILE")]
    pub run: PathBuf,
    /// What to print on stdout: the agreement as text, or one JSON object
    /// `{"tier", "judges", "claims", "agreement", "kappa", "confusion", "disagreements"}`.
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
}

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
pub(crate) struct ValidateArgs {
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// What to print on stdout: the count of tiers, errors and warnings (the findings themselves
    /// are printed on stderr), or one JSON object `{"config", "tiers", "errors", "warnings"}` that
    /// holds them.
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
    /// The history directory (default: the config's `history: { dir }`).
    #[arg(long, value_name = "DIR")]
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
    /// The config, read only for its `history: { dir }` when --dir is not given [default:
    /// $RAGATE_CONFIG, else eval-config.yaml in this directory or the nearest parent up to the
    /// repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// The history directory (default: the config's `history: { dir }`).
    #[arg(long, value_name = "DIR")]
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

/// The command line `args` (the program name first), parsed. One that does not parse exits 2
/// after `on_error` is given its message (the first line, without `error: `), so that a
/// `--format json` document can say so; help and --version are not errors and exit 0.
pub(crate) fn parse(args: &[OsString], on_error: impl FnOnce(&str)) -> Cli {
    match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            if error.use_stderr() {
                let text = error.to_string();
                let first = text.lines().next().unwrap_or_default();
                on_error(first.strip_prefix("error: ").unwrap_or(first));
            }
            error.exit()
        }
    }
}

/// `ragate eval --format`: the report layer's [`OutputFormat`], which knows nothing of clap.
impl ValueEnum for OutputFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            OutputFormat::Table,
            OutputFormat::Json,
            OutputFormat::Tsv,
            OutputFormat::TrecEval,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            OutputFormat::Table => PossibleValue::new("table").help("Aligned columns for people"),
            OutputFormat::Json => PossibleValue::new("json").help("One JSON object"),
            OutputFormat::Tsv => PossibleValue::new("tsv")
                .help("`metric<TAB>qid|all<TAB>value` rows, trec_eval style, for diffs"),
            OutputFormat::TrecEval => PossibleValue::new("trec_eval").help(
                "trec_eval's own lines (its measure names, order and 4 decimals), to diff against it",
            ),
        })
    }
}

/// `--color`: the terminal's [`ColorWhen`], which knows nothing of clap.
impl ValueEnum for ColorWhen {
    fn value_variants<'a>() -> &'a [Self] {
        &[ColorWhen::Auto, ColorWhen::Always, ColorWhen::Never]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            ColorWhen::Auto => PossibleValue::new("auto").help(
                "On a terminal, unless NO_COLOR is set (non-empty); also off a terminal when \
                 FORCE_COLOR is",
            ),
            ColorWhen::Always => {
                PossibleValue::new("always").help("Always, whatever the environment says")
            }
            ColorWhen::Never => PossibleValue::new("never").help("Never"),
        })
    }
}

/// `--tier NAME`: one safe path component (the name is a folder of the outputs).
fn tier_name(name: &str) -> Result<String, String> {
    crate::config::tier_name::check(name).map(|()| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values and their help, as `--help` and the man pages list them.
    fn listed<T: ValueEnum>() -> Vec<(String, String)> {
        T::value_variants()
            .iter()
            .filter_map(T::to_possible_value)
            .map(|value| {
                let help = value.get_help().map(ToString::to_string);
                (value.get_name().to_string(), help.unwrap_or_default())
            })
            .collect()
    }

    #[test]
    fn every_argument_of_every_command_has_help() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path}: {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut command = <Cli as clap::CommandFactory>::command();
        command.build();
        let mut missing = Vec::new();
        walk(&command, "ragate", &mut missing);
        assert!(missing.is_empty(), "arguments without help: {missing:#?}");
    }

    #[test]
    fn the_help_ends_with_every_exit_code_and_its_meaning() {
        let help = exit_status_help().to_string();
        assert!(help.starts_with("Exit status:"), "{help}");
        for status in ExitStatus::ALL {
            assert!(
                help.contains(&format!("\n  {status}  {}", status.meaning())),
                "{help}"
            );
        }
    }

    #[test]
    fn the_library_enums_parse_and_list_as_before() {
        let owned = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(name, help)| (name.to_string(), help.to_string()))
                .collect()
        };
        assert_eq!(
            listed::<OutputFormat>(),
            owned(&[
                ("table", "Aligned columns for people"),
                ("json", "One JSON object"),
                (
                    "tsv",
                    "`metric<TAB>qid|all<TAB>value` rows, trec_eval style, for diffs"
                ),
                (
                    "trec_eval",
                    "trec_eval's own lines (its measure names, order and 4 decimals), to diff against it"
                ),
            ])
        );
        assert_eq!(
            listed::<ColorWhen>(),
            owned(&[
                (
                    "auto",
                    "On a terminal, unless NO_COLOR is set (non-empty); also off a terminal when \
                     FORCE_COLOR is"
                ),
                ("always", "Always, whatever the environment says"),
                ("never", "Never"),
            ])
        );
        assert_eq!(OutputFormat::from_str("TSV", true), Ok(OutputFormat::Tsv));
        assert!(ColorWhen::from_str("sometimes", false).is_err());
    }
}
