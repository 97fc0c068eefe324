//! How the gate evaluates a run: its evaluation options, shared by `gate` and by `plan` (and
//! the budget), so that a plan builds exactly the tasks the gate puts to its judges.

use crate::config::{Config, Tier};
use crate::evaluate::EvalOptions;
use crate::input::corpus::Corpus;
use crate::judge::Clients;
use crate::judge::cache::JudgeCache;
use crate::metrics::metric::{JudgedMetric, Metric};

/// How many ranked doc ids results keep per query when no metric reads deeper.
const MIN_KEPT_RANKS: usize = 10;

/// Who judges an evaluation: the run's clients of the config's judges, and which asking of the
/// judges this is (1: the first).
pub(crate) struct Judging<'a> {
    pub clients: &'a Clients,
    pub repeat: usize,
}

/// How the gate evaluates a run of `config` (one thread: TREC runs set theirs), judged by
/// `judging`: shared with `ragate plan` and the budget, which build the same tasks.
pub(crate) fn eval_options<'a>(
    config: &Config,
    tier: &Tier,
    judging: Judging<'a>,
    corpus: Option<&'a Corpus>,
    cache: Option<&'a JudgeCache>,
) -> EvalOptions<'a> {
    // Deep enough for every cut-off and for the contexts of faithfulness (so that
    // --allow-judge-change can rebuild a baseline's contexts from its ranked doc ids).
    let deepest = tier
        .metrics
        .iter()
        .filter_map(|spec| match spec.metric {
            Metric::Judged(JudgedMetric::Faithfulness | JudgedMetric::FaithfulnessGraded) => {
                Some(spec.contexts_k)
            }
            metric => metric.cutoff(),
        })
        .max()
        .unwrap_or(0);
    EvalOptions {
        metrics: tier.metrics.clone(),
        judges: judging.clients.judges.clone(),
        corpus,
        cache,
        embeddings: judging.clients.embeddings.as_ref(),
        chunk_separator: config.chunk_separator.clone(),
        threads: 1,
        keep_ranked: deepest.max(MIN_KEPT_RANKS),
        judge_repeat: judging.repeat,
        conventions: tier.conventions,
    }
}

/// Threads for evaluation when `--threads` is not given: one per available core.
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
