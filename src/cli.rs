//! Command-line arguments (clap derive types only; validation happens in `commands`), the
//! argument structs of each group of subcommands in a file of its own under `cli/`.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::builder::{PossibleValue, StyledStr};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::config::discover;
use crate::exit_code::ExitStatus;
use crate::report::eval_output::OutputFormat;
use crate::term::ColorWhen;

mod eval;
mod gate;
mod judges;
mod test_set;
pub(crate) use eval::{ConvertArgs, ConvertFormat, EvalArgs, RunFormatArg};
pub(crate) use gate::{
    AcceptArgs, BaselineCommand, CompareArgs, GateArgs, GateFormat, HistoryAddArgs, HistoryCommand,
    HistoryShowArgs, HtmlReportArgs, MergeArgs, ReportArgs, ShowArgs,
};
pub(crate) use judges::{AgreementArgs, JudgeEvalArgs};
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
    /// Check as for `ragate gate --allow-judge-change`: judges other than a baseline's are not an
    /// error (the gate re-judges the baseline's stored answers).
    #[arg(long)]
    pub allow_judge_change: bool,
}

/// Where the subcommand's `--config` came from (the option, `RAGATE_CONFIG` or the search), when
/// it has one: its error, if the file is not there, says so.
fn config_source(matches: &clap::ArgMatches) -> Option<discover::ConfigSource> {
    let mut leaf = matches;
    while let Some((_, sub)) = leaf.subcommand() {
        leaf = sub;
    }
    if !matches!(leaf.try_get_raw("config"), Ok(Some(_))) {
        return None;
    }
    Some(match leaf.value_source("config")? {
        clap::parser::ValueSource::EnvVariable => discover::ConfigSource::Environment,
        clap::parser::ValueSource::DefaultValue => discover::ConfigSource::Discovered,
        _ => discover::ConfigSource::Option,
    })
}

/// The command line `args` (the program name first), parsed. One that does not parse exits 2
/// after `on_error` is given its message (the first line, without `error: `), so that a
/// `--format json` document can say so; help and --version are not errors and exit 0.
pub(crate) fn parse(args: &[OsString], on_error: impl FnOnce(&str)) -> Cli {
    let parsed = Cli::command()
        .try_get_matches_from(args)
        .and_then(|mut matches| {
            if let Some(source) = config_source(&matches) {
                discover::set_source(source);
            }
            Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut Cli::command()))
        });
    match parsed {
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
