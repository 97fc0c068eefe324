//! The arguments of the commands that measure the judges: `judge-eval` and `judge-agreement`.

use std::path::PathBuf;

use clap::Args;

use super::{GateFormat, default_config, tier_name};
use crate::metrics::metric::Metric;

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
