//! Floors: `min` (higher-is-better metrics) and `max` (lower-is-better ones) bound the current
//! mean itself, so they need no baseline. A floor is decided on the point estimate (no test, in
//! no family) of the current mean over **every** current query of the check's slice that has a
//! value, paired with the baseline or not: new queries and new slice values count, and a check
//! with too few paired queries to test its change still gets its floor. Fewer than
//! `min_queries` current values leave the floor undecided.

use crate::baseline::results::{QueryRecord, Results};
use crate::gate::checks::Check;
use crate::gate::slice_index::SliceIndex;
use crate::gate::verdict::Floor;
use crate::metrics::retrieval::Direction;

/// The current run's queries, indexed by slice value once for all the checks' floors.
pub(crate) type CurrentIndex<'a> = SliceIndex<'a, &'a QueryRecord>;

/// The [`CurrentIndex`] of `current`.
pub(crate) fn index(current: &Results) -> CurrentIndex<'_> {
    SliceIndex::new(current.queries.values().collect(), |record| &record.slices)
}

/// The check's floor over the current run, when its rule has one in the metric's direction.
pub(crate) fn sample(check: &Check<'_>, current: &CurrentIndex<'_>) -> Option<Floor> {
    let limits = &check.rule.limits;
    let bound = match check.rule.metric.direction() {
        Direction::HigherIsBetter => limits.min,
        Direction::LowerIsBetter => limits.max,
    }?;
    let metric = check.rule.metric.to_string();
    let (mut n, mut sum) = (0usize, 0.0);
    for record in current.members(&check.slice) {
        if let Some(&value) = record.metrics.get(&metric) {
            n += 1;
            sum += value;
        }
    }
    Some(Floor {
        bound,
        mean: if n == 0 { f64::NAN } else { sum / n as f64 },
        n,
    })
}

impl Floor {
    /// Whether the mean is on the wrong side of the floor.
    pub(crate) fn broken(&self, direction: Direction) -> bool {
        match direction {
            Direction::HigherIsBetter => self.mean < self.bound,
            Direction::LowerIsBetter => self.mean > self.bound,
        }
    }

    /// `0.4000 is below min 0.9 (the current mean over 60 queries)`.
    pub(crate) fn describe(&self, direction: Direction) -> String {
        let (relation, key) = match (direction, self.broken(direction)) {
            (Direction::HigherIsBetter, true) => ("is below", "min"),
            (Direction::HigherIsBetter, false) => ("is at or above", "min"),
            (Direction::LowerIsBetter, true) => ("is above", "max"),
            (Direction::LowerIsBetter, false) => ("is at or below", "max"),
        };
        format!(
            "{:.4} {relation} {key} {} (the current mean over {} queries)",
            self.mean, self.bound, self.n
        )
    }
}
