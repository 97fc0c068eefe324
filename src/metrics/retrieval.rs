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

use std::fmt;
use std::str::FromStr;

use crate::input::qrels::{Grade, Judgment, QueryQrels};

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
ndcg_linear, ndcg_linear@K, map, map@K, r_precision (K a positive integer)";

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
    /// Positive gains of all judged docs, highest first.
    pub ideal_gains: Vec<Grade>,
}

impl QueryTruth {
    /// The truth of `query`.
    pub fn new(query: &QueryQrels) -> Self {
        QueryTruth {
            num_relevant: query.num_relevant(),
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
                | RetrievalMetric::Map(Some(k)) => depth.cut = depth.cut.max(k),
                RetrievalMetric::Mrr(None) => depth.needs_first_relevant = true,
                RetrievalMetric::RPrecision => depth.needs_r = true,
                RetrievalMetric::Ndcg(None)
                | RetrievalMetric::NdcgLinear(None)
                | RetrievalMetric::Map(None) => depth.needs_all = true,
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

fn relevant_in_top(ranking: &[Judgment], k: usize) -> usize {
    ranking.iter().take(k).filter(|j| j.relevant).count()
}

fn first_relevant_rank(ranking: &[Judgment], cut: Option<usize>) -> Option<usize> {
    let limit = cut.unwrap_or(usize::MAX);
    ranking
        .iter()
        .take(limit)
        .position(|j| j.relevant)
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

fn ndcg(ranking: &[Judgment], truth: &QueryTruth, cut: Option<usize>, exponential: bool) -> f64 {
    let limit = cut.unwrap_or(usize::MAX);
    let ideal = dcg(truth.ideal_gains.iter().copied().take(limit), exponential);
    if ideal <= 0.0 {
        return 0.0;
    }
    dcg(ranking.iter().take(limit).map(|j| j.gain()), exponential) / ideal
}

fn average_precision(ranking: &[Judgment], truth: &QueryTruth, cut: Option<usize>) -> f64 {
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (i, judgment) in ranking.iter().take(cut.unwrap_or(usize::MAX)).enumerate() {
        if judgment.relevant {
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
            | RetrievalMetric::HitRate(k) => Some(k),
            RetrievalMetric::Mrr(cut)
            | RetrievalMetric::Ndcg(cut)
            | RetrievalMetric::NdcgLinear(cut)
            | RetrievalMetric::Map(cut) => cut,
            RetrievalMetric::RPrecision => None,
        }
    }

    /// Every retrieval metric measures quality: higher is better.
    pub fn direction(self) -> Direction {
        Direction::HigherIsBetter
    }

    /// The metric's value for one query with at least one relevant doc. `ranking` holds the
    /// judgments of the retrieved docs in rank order ([`Judgment::UNJUDGED`] for a doc the qrels
    /// do not judge), at least as deep as `Depth` asks.
    pub fn value(self, ranking: &[Judgment], truth: &QueryTruth) -> f64 {
        assert!(
            truth.num_relevant > 0,
            "queries without relevant docs are excluded"
        );
        let num_relevant = truth.num_relevant as f64;
        match self {
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranking(grades: &[(Grade, bool)]) -> Vec<Judgment> {
        grades
            .iter()
            .map(|&(grade, relevant)| Judgment { grade, relevant })
            .collect()
    }

    fn truth(num_relevant: usize, ideal_gains: &[Grade]) -> QueryTruth {
        QueryTruth {
            num_relevant,
            ideal_gains: ideal_gains.to_vec(),
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for name in [
            "precision@5",
            "recall@10",
            "hit_rate@3",
            "mrr",
            "mrr@10",
            "ndcg",
            "ndcg@10",
            "ndcg_linear",
            "ndcg_linear@5",
            "map",
            "map@100",
            "r_precision",
        ] {
            assert_eq!(name.parse::<RetrievalMetric>().unwrap().to_string(), name);
        }
        for bad in [
            "precision",
            "recall@0",
            "recall@x",
            "r_precision@5",
            "ndgc@10",
            "",
        ] {
            let err = bad.parse::<RetrievalMetric>().unwrap_err().to_string();
            assert_eq!(
                err,
                format!("unknown metric `{bad}`: expected one of {VALID_NAMES}")
            );
        }
    }

    #[test]
    fn precision_divides_by_k_even_when_fewer_are_retrieved() {
        let r = ranking(&[(1, true), (0, false)]);
        assert_eq!(
            RetrievalMetric::Precision(5).value(&r, &truth(3, &[1, 1, 1])),
            0.2
        );
        assert_eq!(
            RetrievalMetric::Recall(5).value(&r, &truth(3, &[1, 1, 1])),
            1.0 / 3.0
        );
        assert_eq!(
            RetrievalMetric::RPrecision.value(&r, &truth(3, &[1, 1, 1])),
            1.0 / 3.0
        );
    }

    #[test]
    fn mrr_with_and_without_cut() {
        let r = ranking(&[(0, false), (0, false), (2, true)]);
        let t = truth(1, &[2]);
        assert_eq!(RetrievalMetric::Mrr(None).value(&r, &t), 1.0 / 3.0);
        assert_eq!(RetrievalMetric::Mrr(Some(2)).value(&r, &t), 0.0);
        assert_eq!(RetrievalMetric::HitRate(3).value(&r, &t), 1.0);
    }

    #[test]
    fn ndcg_exponential_and_linear_by_hand() {
        // grades in rank order 1, 3; ideal 3, 1
        let r = ranking(&[(1, true), (3, true)]);
        let t = truth(2, &[3, 1]);
        let d2 = 1.0 / 3f64.log2();
        let exp = (1.0 + 7.0 * d2) / (7.0 + 1.0 * d2);
        let lin = (1.0 + 3.0 * d2) / (3.0 + 1.0 * d2);
        assert!((RetrievalMetric::Ndcg(Some(10)).value(&r, &t) - exp).abs() < 1e-15);
        assert!((RetrievalMetric::NdcgLinear(None).value(&r, &t) - lin).abs() < 1e-15);
        // ideal is cut at k too: @1 compares grade 1 with the ideal grade 3
        assert!((RetrievalMetric::Ndcg(Some(1)).value(&r, &t) - 1.0 / 7.0).abs() < 1e-15);
    }

    #[test]
    fn ndcg_of_a_ranking_without_gains_is_positive_zero() {
        let r = ranking(&[(0, false), (0, false)]);
        let t = truth(1, &[1]);
        for metric in [
            RetrievalMetric::Ndcg(Some(10)),
            RetrievalMetric::NdcgLinear(None),
        ] {
            let value = metric.value(&r, &t);
            assert!(value == 0.0 && value.is_sign_positive(), "{value}");
        }
    }

    #[test]
    fn graded_but_not_gold_docs_give_gain_but_not_hits() {
        let r = ranking(&[(1, false), (3, true)]);
        let t = truth(1, &[3, 1]);
        assert_eq!(RetrievalMetric::Precision(1).value(&r, &t), 0.0);
        assert!(RetrievalMetric::Ndcg(Some(1)).value(&r, &t) > 0.0);
    }

    #[test]
    fn map_with_and_without_cut() {
        let r = ranking(&[(1, true), (0, false), (1, true)]);
        let t = truth(3, &[1, 1, 1]);
        assert!((RetrievalMetric::Map(None).value(&r, &t) - (1.0 + 2.0 / 3.0) / 3.0).abs() < 1e-15);
        assert!((RetrievalMetric::Map(Some(2)).value(&r, &t) - 1.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn depth_asks_for_what_the_metrics_read() {
        let t = truth(4, &[1, 1, 1, 1]);
        let cut = Depth::of(&[RetrievalMetric::Precision(5), RetrievalMetric::RPrecision]);
        assert!(!cut.is_satisfied(4, true, &t));
        assert!(cut.is_satisfied(5, false, &t));
        let mrr = Depth::of(&[RetrievalMetric::Mrr(None)]);
        assert!(!mrr.is_satisfied(100, false, &t));
        assert!(mrr.is_satisfied(3, true, &t));
        assert!(!Depth::of(&[RetrievalMetric::Map(None)]).is_satisfied(1000, true, &t));
    }

    /// A query's judgments (grade, relevant) and a ranking that lists some of them, plus unjudged docs.
    fn query_and_ranking() -> impl Strategy<Value = (Vec<(Grade, bool)>, Vec<Option<usize>>)> {
        proptest::collection::vec((-1i32..4, any::<bool>()), 1..20)
            .prop_map(|docs| {
                docs.into_iter()
                    .map(|(g, gold)| (g, gold && g >= 1))
                    .collect::<Vec<_>>()
            })
            .prop_filter("needs a relevant doc", |docs| docs.iter().any(|d| d.1))
            .prop_flat_map(|docs| {
                let n = docs.len();
                let ranking = proptest::sample::subsequence((0..n).collect::<Vec<_>>(), 0..=n)
                    .prop_shuffle()
                    .prop_flat_map(|picked| {
                        let len = picked.len();
                        (
                            Just(picked),
                            proptest::collection::vec(any::<bool>(), len + 5),
                        )
                    })
                    .prop_map(|(picked, noise)| {
                        // interleave unjudged docs (None) between judged ones
                        let mut out = Vec::new();
                        for (i, doc) in picked.into_iter().enumerate() {
                            if noise[i] {
                                out.push(None);
                            }
                            out.push(Some(doc));
                        }
                        out
                    });
                (Just(docs), ranking)
            })
    }

    fn build(docs: &[(Grade, bool)], ranked: &[Option<usize>]) -> (Vec<Judgment>, QueryTruth) {
        let judgments: Vec<Judgment> = docs
            .iter()
            .map(|&(grade, relevant)| Judgment { grade, relevant })
            .collect();
        let ranking = ranked
            .iter()
            .map(|d| d.map_or(Judgment::UNJUDGED, |i| judgments[i]))
            .collect();
        let mut ideal_gains: Vec<Grade> = judgments
            .iter()
            .map(|j| j.gain())
            .filter(|&g| g > 0)
            .collect();
        ideal_gains.sort_unstable_by(|a, b| b.cmp(a));
        let num_relevant = judgments.iter().filter(|j| j.relevant).count();
        (
            ranking,
            QueryTruth {
                num_relevant,
                ideal_gains,
            },
        )
    }

    const CUTS: [usize; 5] = [1, 3, 5, 10, 20];

    fn all_metrics() -> Vec<RetrievalMetric> {
        let mut metrics = vec![
            RetrievalMetric::Mrr(None),
            RetrievalMetric::Ndcg(None),
            RetrievalMetric::NdcgLinear(None),
            RetrievalMetric::Map(None),
            RetrievalMetric::RPrecision,
        ];
        for k in CUTS {
            metrics.extend([
                RetrievalMetric::Precision(k),
                RetrievalMetric::Recall(k),
                RetrievalMetric::HitRate(k),
                RetrievalMetric::Mrr(Some(k)),
                RetrievalMetric::Ndcg(Some(k)),
                RetrievalMetric::NdcgLinear(Some(k)),
                RetrievalMetric::Map(Some(k)),
            ]);
        }
        metrics
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_metric_lies_in_unit_interval((docs, ranked) in query_and_ranking()) {
            let (ranking, truth) = build(&docs, &ranked);
            for metric in all_metrics() {
                let v = metric.value(&ranking, &truth);
                prop_assert!((0.0..=1.0 + 1e-12).contains(&v), "{metric} = {v}");
            }
        }

        #[test]
        fn recall_and_hit_rate_never_fall_as_k_grows((docs, ranked) in query_and_ranking()) {
            let (ranking, truth) = build(&docs, &ranked);
            for pair in CUTS.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                prop_assert!(RetrievalMetric::Recall(a).value(&ranking, &truth) <= RetrievalMetric::Recall(b).value(&ranking, &truth));
                prop_assert!(RetrievalMetric::HitRate(a).value(&ranking, &truth) <= RetrievalMetric::HitRate(b).value(&ranking, &truth));
            }
        }

        #[test]
        fn the_ideal_ranking_scores_one((docs, _ranked) in query_and_ranking()) {
            let mut order: Vec<usize> = (0..docs.len()).collect();
            // gold docs first (binary metrics), within them and then by grade descending
            order.sort_by_key(|&i| (std::cmp::Reverse(docs[i].1), std::cmp::Reverse(docs[i].0.max(0))));
            let ranked: Vec<Option<usize>> = order.into_iter().map(Some).collect();
            let (ranking, truth) = build(&docs, &ranked);
            for metric in [RetrievalMetric::Mrr(None), RetrievalMetric::Map(None), RetrievalMetric::RPrecision] {
                prop_assert!((metric.value(&ranking, &truth) - 1.0).abs() < 1e-12, "{metric}");
            }
            // nDCG is 1 for the ranking sorted by grade alone
            let mut by_grade: Vec<usize> = (0..docs.len()).collect();
            by_grade.sort_by_key(|&i| std::cmp::Reverse(docs[i].0.max(0)));
            let ranked: Vec<Option<usize>> = by_grade.into_iter().map(Some).collect();
            let (ranking, truth) = build(&docs, &ranked);
            for metric in [RetrievalMetric::Ndcg(None), RetrievalMetric::Ndcg(Some(3)), RetrievalMetric::NdcgLinear(Some(5))] {
                prop_assert!((metric.value(&ranking, &truth) - 1.0).abs() < 1e-12, "{metric}");
            }
        }
    }
}
