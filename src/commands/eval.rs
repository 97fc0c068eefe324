//! `ragate eval`: a run scored against qrels, every metric per query and in the mean, as a
//! table, JSON, TSV or trec_eval's format.

use crate::cli::EvalArgs;
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
use crate::metrics::retrieval::{DEFAULT_METRICS, RetrievalMetric};
use crate::outputs::stdout::{write_document, write_human, write_stdout};
use crate::report::eval_output::{self, OutputFormat};
use crate::report::trec_eval_format;
use crate::run::gate_options::default_threads;
use crate::term;

pub(super) fn run(args: EvalArgs) -> Result<i32> {
    let metrics = metrics(&args)?;
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

/// `metrics` with RBP's residual beside each `rbp@p` that comes without it (`rbp_residual@p`
/// right after it): RBP is read with the bound its unjudged docs leave.
fn with_residuals(metrics: Vec<MetricSpec>) -> Vec<MetricSpec> {
    let named: Vec<Metric> = metrics.iter().map(|spec| spec.metric).collect();
    let mut out = Vec::with_capacity(metrics.len());
    for spec in metrics {
        let residual = match spec.metric {
            Metric::Retrieval(RetrievalMetric::Rbp(p)) => {
                Some(Metric::Retrieval(RetrievalMetric::RbpResidual(p)))
            }
            _ => None,
        }
        .filter(|residual| !named.contains(residual));
        out.push(spec);
        out.extend(residual.map(MetricSpec::new));
    }
    out
}

/// The metrics to compute: `--metric`s (a tier-level estimate is refused), else the default
/// retrieval metrics; the trec_eval format's limits checked, and a note for each name another
/// tool spells differently.
fn metrics(args: &EvalArgs) -> Result<Vec<MetricSpec>> {
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
    let metrics = if args.format == OutputFormat::TrecEval {
        let computed: Vec<Metric> = metrics.iter().map(|spec| spec.metric).collect();
        trec_eval_format::check(&computed).map_err(Error::Usage)?;
        metrics
    } else {
        with_residuals(metrics)
    };
    let mut noted = std::collections::BTreeSet::new();
    for written in &args.metrics {
        if noted.insert(written.written.as_str())
            && let Some(note) = aliases::note(&written.written)
        {
            term::note(note);
        }
    }
    Ok(metrics)
}
