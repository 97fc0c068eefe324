//! Every metric ragate computes: its name, its direction, and what it reads.

use std::fmt;
use std::str::FromStr;

use crate::metrics::aliases;
use crate::metrics::claims::ClaimSplitter;
use crate::metrics::retrieval::{self, Direction, RetrievalMetric};

/// A metric: retrieval quality from the ranking, answer quality from the answer (judged or
/// against a reference), or the pipeline's cost; one enum per family, so that code that handles
/// one family cannot be handed another. Every name is in [`NAMED`] (the metrics without a
/// parameter) or parsed by its family ([`RetrievalMetric`], `context_precision@K`, `*_ppi`);
/// ir_measures' and trec_eval's names read as a retrieval metric ([`aliases`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// A metric of the ranking alone.
    Retrieval(RetrievalMetric),
    /// A judge's verdicts on the answer's claims or on the answer.
    Judged(JudgedMetric),
    /// RAGAS rank-weighted precision over the top k retrieved chunks.
    ContextPrecision(usize),
    /// The answer's text, alone or against the query's reference.
    Answer(AnswerMetric),
    /// What the pipeline reported or ragate measured about the query's cost.
    Operational(OperationalMetric),
    /// The prediction-powered estimate of a judged metric's mean, calibrated on human labels:
    /// a tier-level value for rules (`faithfulness_ppi` with `min`), not a per-query metric.
    Ppi(JudgedMetric),
}

/// A metric a judge decides; human labels can calibrate it (`Metric::Ppi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JudgedMetric {
    /// Share of the answer's claims that the judge finds supported by the contexts.
    Faithfulness,
    /// Mean claim grade (0 unsupported, 1 partly, 2 fully supported) divided by 2.
    FaithfulnessGraded,
    /// Whether the answer addresses the question (judge verdict, 1 or 0).
    AnswerRelevance,
}

/// A metric of the answer's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnswerMetric {
    /// 1 when the query's gold_answer_substring occurs in the answer (case and spaces normalised).
    Contains,
    /// SQuAD token F1 against the reference answer.
    F1,
    /// SQuAD exact match against the reference answer.
    Exact,
    /// The answer's length in words (lower is better).
    Length,
    /// 1 when the answer is empty (or only whitespace) or the query is missing from the run, else
    /// 0: its mean is the share of queries without an answer (lower is better). Computed whenever
    /// an answer metric is, and gated by default (`{ metric: empty_answers, max_increase: 0.05 }`).
    Empty,
}

/// A metric of the pipeline's cost, read from the run line (lower is better).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperationalMetric {
    /// How long the pipeline took for the query, in milliseconds.
    LatencyMs,
    /// Prompt plus completion tokens the pipeline reported.
    Tokens,
    /// The cost the pipeline reported for the query.
    Cost,
}

/// The metrics computed from a query's answer and contexts (`metrics::generation::value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnswerLevel {
    /// A judge's verdicts.
    Judged(JudgedMetric),
    /// The ranked chunks' relevance (from the qrels or a judge).
    ContextPrecision(usize),
    /// The answer's text.
    Answer(AnswerMetric),
}

/// Every metric without a parameter, by name: the one place a new one is named. Its family's
/// enum says how it is computed; [`Metric::direction`] and [`Metric::value_range`] follow from
/// the family, but for the answer's length (words, lower is better) and the share of empty
/// answers (lower is better).
pub const NAMED: [(&str, Metric); 11] = [
    ("faithfulness", Metric::Judged(JudgedMetric::Faithfulness)),
    (
        "faithfulness_graded",
        Metric::Judged(JudgedMetric::FaithfulnessGraded),
    ),
    (
        "answer_relevance",
        Metric::Judged(JudgedMetric::AnswerRelevance),
    ),
    ("answer_contains", Metric::Answer(AnswerMetric::Contains)),
    ("answer_f1", Metric::Answer(AnswerMetric::F1)),
    ("answer_exact", Metric::Answer(AnswerMetric::Exact)),
    ("answer_length", Metric::Answer(AnswerMetric::Length)),
    ("empty_answers", Metric::Answer(AnswerMetric::Empty)),
    (
        "latency_ms",
        Metric::Operational(OperationalMetric::LatencyMs),
    ),
    ("tokens", Metric::Operational(OperationalMetric::Tokens)),
    ("cost", Metric::Operational(OperationalMetric::Cost)),
];

/// The retrieval metrics' names without their `@K` (their family parses them).
const RETRIEVAL_BASE_NAMES: [&str; 12] = [
    "precision",
    "recall",
    "hit_rate",
    "mrr",
    "ndcg",
    "ndcg_linear",
    "map",
    "r_precision",
    "bpref",
    "rbp",
    "rbp_residual",
    "judged",
];

/// What a calibrated estimate's name adds to its judged metric's.
const PPI_SUFFIX: &str = "_ppi";

/// The name of a metric in [`NAMED`].
fn named(metric: Metric) -> Option<&'static str> {
    NAMED
        .iter()
        .find(|(_, named)| *named == metric)
        .map(|(name, _)| *name)
}

/// The metric of `name` in [`NAMED`].
fn by_name(name: &str) -> Option<Metric> {
    NAMED
        .iter()
        .find(|(named, _)| *named == name)
        .map(|(_, metric)| *metric)
}

/// The calibrated estimates' names, in [`NAMED`] order.
fn ppi_names() -> impl Iterator<Item = String> {
    NAMED
        .iter()
        .filter(|(_, metric)| matches!(metric, Metric::Judged(_)))
        .map(|(name, _)| format!("{name}{PPI_SUFFIX}"))
}

/// The metric names `FromStr` accepts, for error messages.
pub fn valid_names() -> String {
    let mut names = vec![retrieval::VALID_NAMES.to_string()];
    for (name, metric) in NAMED {
        names.push(name.to_string());
        if metric == Metric::Judged(JudgedMetric::AnswerRelevance) {
            names.push("context_precision@K".to_string());
        }
    }
    format!(
        "{}; in rules also {}",
        names.join(", "),
        ppi_names().collect::<Vec<_>>().join(", ")
    )
}

/// A metric name ragate does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", unknown_metric_message(name))]
pub struct UnknownMetric {
    /// The name as given.
    pub name: String,
}

/// Every metric name without its `@K`.
fn base_names() -> Vec<String> {
    RETRIEVAL_BASE_NAMES
        .iter()
        .map(ToString::to_string)
        .chain(std::iter::once("context_precision".to_string()))
        .chain(NAMED.iter().map(|(name, _)| name.to_string()))
        .chain(ppi_names())
        .collect()
}

/// `unknown metric `x` (did you mean `y`?): expected one of ...`, or for another tool's name of a
/// measure ragate does not compute (`Judged@10`, `bpref`), the closest metric and why it differs.
fn unknown_metric_message(name: &str) -> String {
    match aliases::not_computed_reason(name) {
        Some(reason) => format!("unknown metric `{name}`: {reason}"),
        None => format!(
            "unknown metric `{name}`{}: expected one of {}",
            suggestion(name),
            valid_names()
        ),
    }
}

/// `name` split at its cut-off: `recal@5` into (`recal`, `@5`), `ndcg_cutt.10` into
/// (`ndcg_cutt`, `.10`) (trec_eval's separators are taken before digits only).
fn split_cut(name: &str) -> (&str, &str) {
    if let Some(at) = name.find('@') {
        return name.split_at(at);
    }
    match name.rfind(['_', '.']) {
        Some(at) if name.len() > at + 1 && name[at + 1..].bytes().all(|b| b.is_ascii_digit()) => {
            name.split_at(at)
        }
        _ => (name, ""),
    }
}

/// ` (did you mean `recall@5`?)` for `recal@5`: the closest name, ragate's or an alias written
/// with the same separator (`ndcg_cutt_10`: `ndcg_cut_10`), with the cut-off given. A name that
/// differs only in case from one (`rr`, `p@5`) gets that one; aliases of one or two letters are
/// proposed only so.
fn suggestion(name: &str) -> String {
    let (base, cut) = split_cut(name);
    let separator = cut.chars().next();
    let own = base_names();
    let mut candidates: Vec<&str> = match separator {
        Some('_' | '.') => Vec::new(),
        _ => own.iter().map(String::as_str).collect(),
    };
    candidates.extend(
        aliases::suggestable()
            .filter(|alias| match separator {
                None => alias.cut != aliases::Cut::Required,
                Some(separator) => {
                    alias.cut != aliases::Cut::None && alias.tool.separates_with(separator)
                }
            })
            .map(|alias| alias.name),
    );
    let same_but_case = candidates
        .iter()
        .find(|candidate| candidate.eq_ignore_ascii_case(base))
        .copied();
    let long_enough = candidates.iter().copied().filter(|c| c.len() > 2);
    match same_but_case.or_else(|| crate::suggest::closest(base, long_enough)) {
        // The name is known, its cut-off is not (`recall@0`): say so, not "did you mean" itself.
        Some(closest) if format!("{closest}{cut}") == name => {
            format!(" (`{cut}` is no cut-off: expected a whole number of at least 1)")
        }
        Some(closest) => format!(" (did you mean `{closest}{cut}`?)"),
        None => String::new(),
    }
}

impl FromStr for Metric {
    type Err = UnknownMetric;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Ok(metric) = text.parse::<RetrievalMetric>() {
            return Ok(Metric::Retrieval(metric));
        }
        if let Some(metric) = by_name(text) {
            return Ok(metric);
        }
        if let Some(Metric::Judged(judged)) = text.strip_suffix(PPI_SUFFIX).and_then(by_name) {
            return Ok(Metric::Ppi(judged));
        }
        if let Some(alias) = aliases::resolve(text) {
            return alias.map(Metric::Retrieval).ok_or_else(|| UnknownMetric {
                name: text.to_string(),
            });
        }
        text.strip_prefix("context_precision@")
            .and_then(|k| k.parse::<usize>().ok())
            .filter(|&k| k > 0)
            .map(Metric::ContextPrecision)
            .ok_or_else(|| UnknownMetric {
                name: text.to_string(),
            })
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Metric::Retrieval(metric) => metric.fmt(f),
            Metric::ContextPrecision(k) => write!(f, "context_precision@{k}"),
            Metric::Ppi(judged) => write!(f, "{}{PPI_SUFFIX}", Metric::Judged(*judged)),
            Metric::Judged(_) | Metric::Answer(_) | Metric::Operational(_) => {
                f.write_str(named(*self).expect("every metric of these families is in NAMED"))
            }
        }
    }
}

impl JudgedMetric {
    /// The per-query metric (the one a `*_ppi` estimate calibrates).
    pub fn base(self) -> Metric {
        Metric::Judged(self)
    }
}

impl From<RetrievalMetric> for Metric {
    fn from(metric: RetrievalMetric) -> Self {
        Metric::Retrieval(metric)
    }
}

impl Metric {
    /// Whether higher values are better (quality) or worse (length, latency, tokens, cost).
    pub fn direction(self) -> Direction {
        match self {
            Metric::Answer(AnswerMetric::Length | AnswerMetric::Empty) | Metric::Operational(_) => {
                Direction::LowerIsBetter
            }
            Metric::Retrieval(retrieval) => retrieval.direction(),
            _ => Direction::HigherIsBetter,
        }
    }

    /// How deep into the ranking the metric reads, when it has a cut-off.
    pub fn cutoff(self) -> Option<usize> {
        match self {
            Metric::Retrieval(metric) => metric.cutoff(),
            Metric::ContextPrecision(k) => Some(k),
            _ => None,
        }
    }

    /// The retrieval metric, if it is one.
    pub fn as_retrieval(self) -> Option<RetrievalMetric> {
        match self {
            Metric::Retrieval(metric) => Some(metric),
            _ => None,
        }
    }

    /// The metrics computed from the answer and the contexts, None for the others.
    pub fn answer_level(self) -> Option<AnswerLevel> {
        match self {
            Metric::Judged(judged) => Some(AnswerLevel::Judged(judged)),
            Metric::ContextPrecision(k) => Some(AnswerLevel::ContextPrecision(k)),
            Metric::Answer(answer) => Some(AnswerLevel::Answer(answer)),
            Metric::Retrieval(_) | Metric::Operational(_) | Metric::Ppi(_) => None,
        }
    }

    /// Whether the metric reads the answer (and so a run line must carry one).
    pub fn needs_answer(self) -> bool {
        matches!(self, Metric::Judged(_) | Metric::Answer(_) | Metric::Ppi(_))
    }

    /// The values a per-query value of the metric can take: [0, 1] for quality scores, >= 0 for
    /// counts and costs (answer length, latency, tokens, cost). None for the tier-level PPI
    /// estimates, which can leave [0, 1].
    pub fn value_range(self) -> Option<std::ops::RangeInclusive<f64>> {
        match self {
            Metric::Ppi(_) => None,
            Metric::Answer(AnswerMetric::Length) | Metric::Operational(_) => Some(0.0..=f64::MAX),
            _ => Some(0.0..=1.0),
        }
    }

    /// The largest change a per-query value can make (the width of [`Self::value_range`]), None
    /// for unbounded metrics.
    pub fn range_width(self) -> Option<f64> {
        self.value_range()
            .map(|range| range.end() - range.start())
            .filter(|width| *width < f64::MAX)
    }

    /// Whether the metric measures the pipeline's cost (latency, tokens, money) rather than its
    /// quality: read from the run line, varying from run to run.
    pub fn is_operational(self) -> bool {
        matches!(self, Metric::Operational(_))
    }
}

/// What an empty answer scores on judged metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmptyAnswer {
    /// Score 0: an empty answer supports nothing and addresses nothing.
    #[default]
    Zero,
    /// Leave the query out of the metric (and count it).
    Exclude,
}

/// A metric with the options it is computed with.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSpec {
    /// The metric.
    pub metric: Metric,
    /// The judge of judged metrics (a name of the config's `judges`).
    pub judge: String,
    /// How many retrieved docs' texts make the contexts when a run line has no `contexts`.
    pub contexts_k: usize,
    /// What an empty answer scores.
    pub empty_answer: EmptyAnswer,
    /// context_precision: relevance from the judge instead of the qrels.
    pub judged: bool,
    /// faithfulness: how the answer is split into claims.
    pub claims: ClaimSplitter,
}

impl MetricSpec {
    /// Whether a judge decides the metric's values.
    pub fn is_judged(&self) -> bool {
        match self.metric {
            Metric::Judged(_) => true,
            Metric::ContextPrecision(_) => self.judged,
            _ => false,
        }
    }

    /// The metric with default options: the `default` judge, 5 contexts, empty answers score 0.
    pub fn new(metric: Metric) -> Self {
        MetricSpec {
            metric,
            judge: "default".to_string(),
            contexts_k: 5,
            empty_answer: EmptyAnswer::Zero,
            judged: false,
            claims: ClaimSplitter::Sentences,
        }
    }
}

#[cfg(test)]
mod tests;
