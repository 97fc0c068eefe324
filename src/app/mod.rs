//! Runs a parsed command and returns its exit code; `main` only prints errors.

use std::path::Path;

mod agreement;
mod baseline;
mod compare;
mod config_judge;
mod convert;
pub(crate) mod error_output;
mod finish;
mod gate;
mod gate_options;
mod hand_edits;
mod history;
mod holes;
mod init;
mod judge_consistency;
mod judge_eval;
mod judge_events;
mod judged_depth;
mod judged_run;
mod judges_called;
mod manual;
pub(crate) mod merge;
mod model_judgments;
mod output_files;
mod output_place;
mod output_table;
mod outputs;
mod plan;
mod preflight;
mod qrels_accept;
mod qrels_apply;
mod rejudge;
mod repeats;
mod report;
mod synth;
mod tier_baseline;
mod tier_labels;
mod validate;

use crate::cli::{BaselineCommand, Cli, Command, EvalArgs, HistoryCommand, QrelsCommand};
use crate::config::DEFAULT_JUDGE;
use crate::error::{Error, Result};
use crate::evaluate::{EvalOptions, evaluate};
use crate::exit_code;
use crate::input;
use crate::input::corpus;
use crate::judge::{self, kinds};
use crate::metrics::aliases;
use crate::metrics::conventions::Conventions;
use crate::metrics::metric::{Metric, MetricSpec};
use crate::metrics::retrieval::DEFAULT_METRICS;
use crate::report::eval_output::{self, OutputFormat};
use crate::report::trec_eval_format;
use crate::term;

pub(crate) fn run(cli: Cli) -> Result<i32> {
    // Children lead process groups of their own: ragate passes SIGINT and SIGTERM on to them.
    if let Err(e) = crate::process_group::end_on_signals() {
        term::warning(format!(
            "cannot watch for SIGINT/SIGTERM ({e}): on either, child processes are left running"
        ));
    }
    let result = run_command(cli);
    // A command that ended because a signal stopped its children waits for the signal's exit.
    crate::process_group::hold_if_stopping();
    result
}

fn run_command(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Eval(args) => eval(args),
        Command::Gate(args) => gate::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Baseline(BaselineCommand::Accept(args)) => baseline::accept(args),
        Command::Baseline(BaselineCommand::Show(args)) => baseline::show(args),
        Command::Compare(args) => compare::run(args),
        Command::Validate(args) => validate::run(args),
        Command::JudgeAgreement(args) => agreement::run(args),
        Command::JudgeEval(args) => judge_eval::run(args),
        Command::Convert(args) => convert::run(args),
        Command::History(HistoryCommand::Add(args)) => history::add(args),
        Command::History(HistoryCommand::Show(args)) => history::show(args),
        Command::Init(args) => init::run(args),
        Command::Holes(args) => holes::run(args),
        Command::Qrels(QrelsCommand::Apply(args)) => qrels_apply::run(args),
        Command::Qrels(QrelsCommand::Accept(args)) => qrels_accept::run(args),
        Command::Synth(args) => synth::run(args),
        Command::Report(args) => report::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Completions(args) => manual::completions(args),
        Command::Man(args) => manual::man(args),
    }
}

pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn eval(args: EvalArgs) -> Result<i32> {
    let asked: Vec<Metric> = args.metrics.iter().map(|m| m.metric).collect();
    if let Some(metric) = asked.iter().find(|m| matches!(m, Metric::Ppi(_))) {
        return Err(Error::Usage(format!(
            "`{metric}` is a tier-level estimate from human labels: use it in a gate rule, not in eval"
        )));
    }
    let metrics: Vec<MetricSpec> = if asked.is_empty() {
        DEFAULT_METRICS
            .iter()
            .map(|&m| MetricSpec::new(Metric::Retrieval(m)))
            .collect()
    } else {
        asked.into_iter().map(MetricSpec::new).collect()
    };
    if args.format == OutputFormat::TrecEval {
        let computed: Vec<Metric> = metrics.iter().map(|spec| spec.metric).collect();
        trec_eval_format::check(&computed).map_err(Error::Usage)?;
    }
    let mut noted = std::collections::BTreeSet::new();
    for written in &args.metrics {
        if noted.insert(written.written.as_str())
            && let Some(note) = aliases::note(&written.written)
        {
            term::note(note);
        }
    }
    let corpus = corpus::read_optional(args.corpus.as_deref())?;
    let qrels = input::load_qrels(
        &args.qrels,
        args.qrels_format.map(Into::into),
        &args.beir_split,
        args.queries.as_deref(),
    )?;
    let run_format = match args.run_format {
        Some(format) => format.into(),
        None => input::detect_run_format(&args.run)?,
    };
    let options = EvalOptions {
        judge_repeat: 1,
        metrics,
        judges: [(
            DEFAULT_JUDGE.to_string(),
            judge::build(&kinds::default_judge()),
        )]
        .into_iter()
        .collect(),
        corpus: corpus.as_ref(),
        cache: None,
        embeddings: None,
        chunk_separator: args.chunk_separator,
        threads: args.threads.unwrap_or_else(default_threads),
        keep_ranked: 0,
        conventions: Conventions {
            relevance_level: args.relevance_level,
            no_relevant: args.no_relevant.into(),
        },
    };
    let evaluation = evaluate(&qrels, &args.run, run_format, &options)?;
    for warning in &evaluation.warnings {
        term::warning(warning);
    }
    let text = eval_output::render(&evaluation, args.format, args.per_query);
    match args.format {
        OutputFormat::Table => write_human(&text)?,
        OutputFormat::Json => write_document(&text)?,
        OutputFormat::Tsv | OutputFormat::TrecEval => write_stdout(&text)?,
    }
    Ok(exit_code::SUCCESS)
}

/// Whether the command printed something on stdout: a failure after its document (a run
/// without a baseline prints one, then exits 2) prints no second, error document.
static STDOUT_WRITTEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Prints what a command was asked to produce for machines (tsv, completions), also under
/// `--quiet`: text for a terminal (secrets redacted, then `escape::terminal`).
pub(crate) fn write_stdout(text: &str) -> Result<()> {
    print_stdout(text, term::Stdout::Terminal)
}

/// Prints a JSON or JSON Lines document (`--format json`), also under `--quiet`, as it is: its
/// encoder (`json_text`) redacted and escaped it already, and the terminal's guard would break it.
pub(crate) fn write_document(text: &str) -> Result<()> {
    print_stdout(text, term::Stdout::Document)
}

fn print_stdout(text: &str, kind: term::Stdout) -> Result<()> {
    if !text.is_empty() {
        STDOUT_WRITTEN.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    match term::write_stdout(text, kind) {
        // Its reader closed stdout (`ragate eval ... | head`): the output ends there, as a
        // pipe's does, and the command goes on to its own exit status (a gate that fails
        // still exits 1).
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
        result => result.map_err(|e| Error::write(Path::new("<stdout>"), e)),
    }
}

/// Whether stdout's reader has closed it: nothing more is written there.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether [`write_stdout`] printed anything yet.
pub(crate) fn stdout_written() -> bool {
    STDOUT_WRITTEN.load(std::sync::atomic::Ordering::Relaxed)
}

/// Prints a report for people (a table, a summary, lines of findings); nothing under `--quiet`.
pub(crate) fn write_human(text: &str) -> Result<()> {
    if term::quiet() {
        return Ok(());
    }
    write_stdout(text)
}
