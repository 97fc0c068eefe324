//! A check's paired per-query values (baseline and current, in qid order, within its slice) and
//! the queries that got worse. The queries both sides have, and each slice value's members among
//! them, are indexed once per run ([`PairIndex`], a [`SliceIndex`]), so that pairing every check costs the size of
//! its slice, not of the tier: a slice field with thousands of values stays near-linear.

use crate::baseline::results::{QueryRecord, Results};
use crate::gate::checks::Check;
use crate::gate::slice_index::SliceIndex;
use crate::gate::verdict::{QueryDrop, WORST_QUERIES};
use crate::metrics::retrieval::Direction;

/// Paired values of one check.
pub(super) struct Paired {
    pub(super) qids: Vec<String>,
    pub(super) baseline: Vec<f64>,
    pub(super) current: Vec<f64>,
    /// Per query, positive when the current value is worse (direction-aware).
    pub(super) worsening: Vec<f64>,
}

/// A query both sides have: its qid, its baseline record and its current record.
type Both<'a> = (&'a String, &'a QueryRecord, &'a QueryRecord);

/// The queries of a run that the baseline has too, in qid order, indexed by the current run's
/// slice values (as a check's slice is defined).
pub(super) type PairIndex<'a> = SliceIndex<'a, Both<'a>>;

/// The [`PairIndex`] of a run and its baseline.
pub(super) fn pair_index<'a>(baseline: &'a Results, current: &'a Results) -> PairIndex<'a> {
    let both: Vec<Both<'a>> = current
        .queries
        .iter()
        .filter_map(|(qid, now)| baseline.queries.get(qid).map(|before| (qid, before, now)))
        .collect();
    SliceIndex::new(both, |&(_, _, now)| &now.slices)
}

/// The check's paired values, or why it cannot be evaluated (the baseline lacks the metric, a
/// value is not finite).
pub(super) fn pair(
    check: &Check<'_>,
    baseline: &Results,
    index: &PairIndex<'_>,
) -> Result<Paired, String> {
    let metric = check.rule.metric.to_string();
    if !baseline.metrics.contains(&metric) {
        return Err(format!(
            "{}: the baseline has no `{metric}` values: accept a baseline computed with this metric",
            check.name()
        ));
    }
    let sign = match check.rule.metric.direction() {
        Direction::HigherIsBetter => 1.0,
        Direction::LowerIsBetter => -1.0,
    };
    let mut paired = Paired {
        qids: Vec::new(),
        baseline: Vec::new(),
        current: Vec::new(),
        worsening: Vec::new(),
    };
    for &(qid, before, now) in index.members(&check.slice) {
        // A query without the value on either side is not paired: answer metrics leave out excluded
        // empty answers and queries without a reference.
        let (Some(&b), Some(&c)) = (before.metrics.get(&metric), now.metrics.get(&metric)) else {
            continue;
        };
        if !b.is_finite() || !c.is_finite() {
            return Err(format!(
                "{}: query `{}` has a non-finite value (baseline {b}, current {c}): expected finite numbers",
                check.name(),
                crate::error::shorten(qid)
            ));
        }
        paired.qids.push(qid.clone());
        paired.baseline.push(b);
        paired.current.push(c);
        paired.worsening.push(sign * (b - c));
    }
    Ok(paired)
}

/// The queries that got worse, worst first (ties by qid), at most [`WORST_QUERIES`], and how many
/// got worse in all.
pub(super) fn worst_queries(paired: &Paired, direction: Direction) -> (Vec<QueryDrop>, usize) {
    let mut order: Vec<usize> = (0..paired.qids.len())
        .filter(|&i| paired.worsening[i] > 0.0)
        .collect();
    let worse_count = order.len();
    order.sort_by(|&a, &b| {
        paired.worsening[b]
            .total_cmp(&paired.worsening[a])
            .then_with(|| paired.qids[a].cmp(&paired.qids[b]))
    });
    let worst = order
        .into_iter()
        .take(WORST_QUERIES)
        .map(|i| QueryDrop {
            qid: paired.qids[i].clone(),
            query: None,
            baseline: paired.baseline[i],
            current: paired.current[i],
            details: Vec::new(),
            answers: None,
            hit_to_miss: direction == Direction::HigherIsBetter
                && paired.baseline[i] > 0.0
                && paired.current[i] == 0.0,
        })
        .collect();
    (worst, worse_count)
}
