//! Runs a parsed command and returns its exit code; `main` only prints errors.

mod agreement;
pub(crate) mod baseline;
mod compare;
mod convert;
pub(crate) mod history;
mod init;
mod judge_eval;
mod manual;
pub(crate) mod merge;
mod report;
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
use crate::outputs::stdout::{write_document, write_human, write_stdout};
use crate::report::eval_output::{self, OutputFormat};
use crate::report::trec_eval_format;
use crate::run::gate_options::default_threads;
use crate::run::{plan, tier_run};
use crate::term;
use crate::testset::{holes, qrels_accept, qrels_apply, synth};

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
        Command::Gate(args) => tier_run::run(args),
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
