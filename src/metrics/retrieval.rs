//! Retrieval metrics per query, with trec_eval's conventions where trec_eval has the metric.
//!
//! Conventions (see also docs/metrics.md "Metric conventions"):
//! - "relevant" is binary (gold); graded metrics use the grade as gain, negative grades as 0.
//! - `precision@k` = relevant in top k / k, also when fewer than k docs were retrieved (trec_eval `P_k`).
//! - `recall@k` = relevant in top k / relevant judged (trec_eval `recall_k`).
//! - `hit_rate@k` = 1 when any relevant doc is in the top k.
//! - `mrr` = 1 / rank of the first relevant doc (trec_eval `recip_rank`); `mrr@k` is 0 beyond rank k.
//! - `ndcg@k` = DCG@k / IDCG@k with gain 2^g - 1 and discount log2(rank + 1); the ideal ranking
//!   sorts all judged docs of the query by grade. `ndcg_linear@k` uses gain g (trec_eval `ndcg_cut_k`).
//!   Without `@k` the whole ranking counts (trec_eval `ndcg` for the linear form).
//! - `map` = sum of precision at each relevant rank / relevant judged (trec_eval `map`); `map@k`
//!   counts ranks up to k only (trec_eval `map_cut_k`).
//! - `r_precision` = relevant in top R / R, R = relevant judged (trec_eval `Rprec`).
//! - `bpref`, `rbp@p`, `rbp_residual@p`, `judged@k`: the metrics that tell unjudged documents
//!   from judged non-relevant ones ([`incomplete`]).

use std::fmt;
use std::str::FromStr;

use crate::input::qrels::{Grade, QueryQrels, Ranked};

mod incomplete;

pub use incomplete::Persistence;

/// A retrieval metric with its cut-off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetrievalMetric {
    /// `precision@k`: relevant docs in the top k / k (k even when fewer are retrieved).
    Precision(usize),
    /// `recall@k`: relevant docs in the top k / all relevant docs of the query.
    Recall(usize),
    /// `hit_rate@k`: 1 when a relevant doc is in the top k, else 0.
    HitRate(usize),
    /// `mrr` (`mrr@k`): 1 / rank of the first relevant doc (within the top k), 0 if none.
    Mrr(Option<usize>),
    /// `ndcg` (`ndcg@k`): exponential gain (2^grade - 1) / log2(rank + 1), ideal from all judged
    /// docs.
    Ndcg(Option<usize>),
    /// `ndcg_linear` (`ndcg_linear@k`): linear gain, trec_eval's `ndcg_cut`.
    NdcgLinear(Option<usize>),
    /// `map` (`map@k`): average precision (at the relevant ranks within the top k) over all
    /// relevant docs.
    Map(Option<usize>),
    /// `r_precision`: precision at R, the number of relevant docs.
    RPrecision,
    /// `bpref`: trec_eval's binary preference, unjudged docs skipped.
    Bpref,
    /// `rbp@p`: rank-biased precision with persistence p (binary gain).
    Rbp(Persistence),
    /// `rbp_residual@p`: how much `rbp@p` could grow were the unjudged docs relevant (lower is
    /// better).
    RbpResidual(Persistence),
    /// `judged@k`: the share of the top k retrieved docs that the qrels judge (grade 0 or more).
    Judged(usize),
}

/// Whether a larger value of a metric is better (retrieval quality) or worse (latency, cost).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Larger is better.
    HigherIsBetter,
    /// Smaller is better.
    LowerIsBetter,
}

/// The metric names `FromStr` accepts, for error messages.
pub const VALID_NAMES: &str = "precision@K, recall@K, hit_rate@K, mrr, mrr@K, ndcg, ndcg@K, \
ndcg_linear, ndcg_linear@K, map, map@K, r_precision, bpref, rbp@P, rbp_residual@P, judged@K \
(K a positive integer; P a persistence below 1 such as 0.8)";

/// The metrics `ragate eval` reports when none are named.
pub const DEFAULT_METRICS: [RetrievalMetric; 5] = [
    RetrievalMetric::Precision(5),
    RetrievalMetric::Recall(5),
    RetrievalMetric::Recall(10),
    RetrievalMetric::Mrr(None),
    RetrievalMetric::Ndcg(Some(10)),
];

/// A retrieval metric name ragate does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown metric `{name}`: expected one of {VALID_NAMES}")]
pub struct UnknownMetric {
    /// The name as given.
    pub name: String,
}

impl FromStr for RetrievalMetric {
    type Err = UnknownMetric;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let unknown = || UnknownMetric {
            name: text.to_string(),
        };
        if let Some((base, p)) = text.split_once('@')
            && let Some(persistence) = Persistence::parse(p)
        {
            return match base {
                "rbp" => Ok(RetrievalMetric::Rbp(persistence)),
                "rbp_residual" => Ok(RetrievalMetric::RbpResidual(persistence)),
                _ => Err(unknown()),
            };
        }
        let (base, cut) = match text.split_once('@') {
            Some((base, k)) => {
                let k: usize = k.parse().ok().filter(|&k| k > 0).ok_or_else(unknown)?;
                (base, Some(k))
            }
            None => (text, None),
        };
        let metric = match (base, cut) {
            ("precision", Some(k)) => RetrievalMetric::Precision(k),
            ("recall", Some(k)) => RetrievalMetric::Recall(k),
            ("hit_rate", Some(k)) => RetrievalMetric::HitRate(k),
            ("mrr", cut) => RetrievalMetric::Mrr(cut),
            ("ndcg", cut) => RetrievalMetric::Ndcg(cut),
            ("ndcg_linear", cut) => RetrievalMetric::NdcgLinear(cut),
            ("map", cut) => RetrievalMetric::Map(cut),
            ("r_precision", None) => RetrievalMetric::RPrecision,
            ("bpref", None) => RetrievalMetric::Bpref,
            ("judged", Some(k)) => RetrievalMetric::Judged(k),
            _ => return Err(unknown()),
        };
        Ok(metric)
    }
}

impl fmt::Display for RetrievalMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (base, cut) = match *self {
            RetrievalMetric::Precision(k) => ("precision", Some(k)),
            RetrievalMetric::Recall(k) => ("recall", Some(k)),
            RetrievalMetric::HitRate(k) => ("hit_rate", Some(k)),
            RetrievalMetric::Mrr(cut) => ("mrr", cut),
            RetrievalMetric::Ndcg(cut) => ("ndcg", cut),
            RetrievalMetric::NdcgLinear(cut) => ("ndcg_linear", cut),
            RetrievalMetric::Map(cut) => ("map", cut),
            RetrievalMetric::RPrecision => ("r_precision", None),
            RetrievalMetric::Bpref => ("bpref", None),
            RetrievalMetric::Judged(k) => ("judged", Some(k)),
            RetrievalMetric::Rbp(p) => return write!(f, "rbp@{p}"),
            RetrievalMetric::RbpResidual(p) => return write!(f, "rbp_residual@{p}"),
        };
        match cut {
            Some(k) => write!(f, "{base}@{k}"),
            None => f.write_str(base),
        }
    }
}

/// What the qrels say about one query, prepared once for all its metrics.
#[derive(Debug, Clone)]
pub struct QueryTruth {
    /// How many judged docs count as relevant.
    pub num_relevant: usize,
    /// How many docs are judged non-relevant (a grade of 0 or more, not relevant): bpref's N.
    pub num_non_relevant: usize,
    /// Positive gains of all judged docs, highest first.
    pub ideal_gains: Vec<Grade>,
}

impl QueryTruth {
    /// The truth of `query`.
    pub fn new(query: &QueryQrels) -> Self {
        QueryTruth {
            num_relevant: query.num_relevant(),
            num_non_relevant: query
                .judgments
                .iter()
                .filter(|(_, judgment)| !judgment.relevant && judgment.grade >= 0)
                .count(),
            ideal_gains: query.ideal_gains(),
        }
    }
}

/// How deep into a ranking a set of metrics looks, so that only that prefix is judged.
#[derive(Debug, Clone, Copy)]
pub struct Depth {
    cut: usize,
    needs_first_relevant: bool,
    needs_r: bool,
    needs_all: bool,
}

impl Depth {
    /// The depth `metrics` need together.
    pub fn of(metrics: &[RetrievalMetric]) -> Self {
        let mut depth = Depth {
            cut: 0,
            needs_first_relevant: false,
            needs_r: false,
            needs_all: false,
        };
        for metric in metrics {
            match *metric {
                RetrievalMetric::Precision(k)
                | RetrievalMetric::Recall(k)
                | RetrievalMetric::HitRate(k)
                | RetrievalMetric::Mrr(Some(k))
                | RetrievalMetric::Ndcg(Some(k))
                | RetrievalMetric::NdcgLinear(Some(k))
                | RetrievalMetric::Map(Some(k))
                | RetrievalMetric::Judged(k) => depth.cut = depth.cut.max(k),
                RetrievalMetric::Mrr(None) => depth.needs_first_relevant = true,
                RetrievalMetric::RPrecision => depth.needs_r = true,
                RetrievalMetric::Ndcg(None)
                | RetrievalMetric::NdcgLinear(None)
                | RetrievalMetric::Map(None)
                | RetrievalMetric::Bpref
                | RetrievalMetric::Rbp(_)
                | RetrievalMetric::RbpResidual(_) => depth.needs_all = true,
            }
        }
        depth
    }

    /// Whether the metrics read all or most of a ranking of `len` entries (full-depth metrics, or
    /// a cut-off of at least half of it): then ranking every entry costs less than ordering the
    /// top ranks lazily.
    pub fn reads_most_of(&self, len: usize) -> bool {
        self.needs_all || self.cut.saturating_mul(2) >= len
    }

    /// Whether a judged prefix of `judged` ranks is enough for every metric.
    pub fn is_satisfied(&self, judged: usize, found_relevant: bool, truth: &QueryTruth) -> bool {
        !self.needs_all
            && judged >= self.cut
            && (!self.needs_r || judged >= truth.num_relevant)
            && (!self.needs_first_relevant || found_relevant)
    }
}

fn discount(rank: usize) -> f64 {
    1.0 / ((rank + 1) as f64).log2()
}

fn relevant_in_top(ranking: &[Ranked], k: usize) -> usize {
    ranking.iter().take(k).filter(|r| r.relevant()).count()
}

fn first_relevant_rank(ranking: &[Ranked], cut: Option<usize>) -> Option<usize> {
    let limit = cut.unwrap_or(usize::MAX);
    ranking
        .iter()
        .take(limit)
        .position(|r| r.relevant())
        .map(|i| i + 1)
}

/// Zero gains are skipped, not multiplied: adding 0.0 leaves the sum as it is, and most ranks of
/// a long ranking are unjudged.
fn dcg(gains: impl Iterator<Item = Grade>, exponential: bool) -> f64 {
    gains
        .enumerate()
        .filter(|&(_, g)| g != 0)
        .map(|(i, g)| {
            let gain = if exponential {
                2f64.powi(g) - 1.0
            } else {
                f64::from(g)
            };
            gain * discount(i + 1)
        })
        // Not `sum()`: an empty f64 sum is -0.0, which would store `-0.0` for a query that
        // found nothing.
        .fold(0.0, |total, gain| total + gain)
}

fn ndcg(ranking: &[Ranked], truth: &QueryTruth, cut: Option<usize>, exponential: bool) -> f64 {
    let limit = cut.unwrap_or(usize::MAX);
    let ideal = dcg(truth.ideal_gains.iter().copied().take(limit), exponential);
    if ideal <= 0.0 {
        return 0.0;
    }
    dcg(ranking.iter().take(limit).map(|r| r.gain()), exponential) / ideal
}

fn average_precision(ranking: &[Ranked], truth: &QueryTruth, cut: Option<usize>) -> f64 {
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (i, ranked) in ranking.iter().take(cut.unwrap_or(usize::MAX)).enumerate() {
        if ranked.relevant() {
            hits += 1;
            sum += hits as f64 / (i + 1) as f64;
        }
    }
    sum / truth.num_relevant as f64
}

impl RetrievalMetric {
    /// The rank cut-off, if the metric has one (`r_precision`'s depends on the query).
    pub fn cutoff(self) -> Option<usize> {
        match self {
            RetrievalMetric::Precision(k)
            | RetrievalMetric::Recall(k)
            | RetrievalMetric::HitRate(k)
            | RetrievalMetric::Judged(k) => Some(k),
            RetrievalMetric::Mrr(cut)
            | RetrievalMetric::Ndcg(cut)
            | RetrievalMetric::NdcgLinear(cut)
            | RetrievalMetric::Map(cut) => cut,
            RetrievalMetric::RPrecision
            | RetrievalMetric::Bpref
            | RetrievalMetric::Rbp(_)
            | RetrievalMetric::RbpResidual(_) => None,
        }
    }

    /// Higher is better, but for RBP's residual (the room left by unjudged docs).
    pub fn direction(self) -> Direction {
        match self {
            RetrievalMetric::RbpResidual(_) => Direction::LowerIsBetter,
            _ => Direction::HigherIsBetter,
        }
    }

    /// The metric's value for one query. `ranking` holds the judgments of the retrieved docs in
    /// rank order ([`Ranked::Unjudged`] for a doc the qrels do not judge), at least as deep as
    /// `Depth` asks. A query without a relevant doc (kept by `no_relevant: zero`) scores 0 on the
    /// metrics of relevance, as trec_eval scores it; judged@k and RBP's residual read the
    /// judgments alone and keep their values.
    pub fn value(self, ranking: &[Ranked], truth: &QueryTruth) -> f64 {
        let num_relevant = truth.num_relevant as f64;
        match self {
            RetrievalMetric::Judged(k) => incomplete::judged(ranking, k),
            RetrievalMetric::RbpResidual(p) => incomplete::rbp_residual(ranking, p),
            _ if truth.num_relevant == 0 => 0.0,
            RetrievalMetric::Precision(k) => relevant_in_top(ranking, k) as f64 / k as f64,
            RetrievalMetric::Recall(k) => relevant_in_top(ranking, k) as f64 / num_relevant,
            RetrievalMetric::HitRate(k) => f64::from(u8::from(relevant_in_top(ranking, k) > 0)),
            RetrievalMetric::Mrr(cut) => {
                first_relevant_rank(ranking, cut).map_or(0.0, |r| 1.0 / r as f64)
            }
            RetrievalMetric::Ndcg(cut) => ndcg(ranking, truth, cut, true),
            RetrievalMetric::NdcgLinear(cut) => ndcg(ranking, truth, cut, false),
            RetrievalMetric::Map(cut) => average_precision(ranking, truth, cut),
            RetrievalMetric::RPrecision => {
                relevant_in_top(ranking, truth.num_relevant) as f64 / num_relevant
            }
            RetrievalMetric::Bpref => incomplete::bpref(ranking, truth),
            RetrievalMetric::Rbp(p) => incomplete::rbp(ranking, p),
        }
    }
}

#[cfg(test)]
mod tests;
