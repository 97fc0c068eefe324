//! What deciding a check produces: its status, its family, the bound and the queries behind it
//! ([`CheckOutcome`]).

use crate::gate::verdict::Adjustment;
use crate::gate::verdict::proof::Proof;
use crate::history::record::RecordedCheck;
use crate::stats::limit_test::Method;

/// The most paired queries a "queries needed" figure names. Past it the estimate is no guidance
/// (a change 0.0004 past its limit "needs" a million queries): no tier an evaluation can afford
/// decides the check, and the outputs say that instead of the number. A fixed bound, not a
/// multiple of the tier's size: a 20-query smoke tier's undecided check may well be settled by
/// a 5,000-query nightly tier.
pub const REALISTIC_QUERIES: usize = 100_000;

/// About how many paired queries with the same effect and spread would decide (or prove) an
/// inconclusive check with 80% power: made once, by the gate, so that every output says the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueriesNeeded {
    /// About this many (at most [`REALISTIC_QUERIES`]).
    About(usize),
    /// More than [`REALISTIC_QUERIES`]: no realistic tier decides a change this close to its
    /// limit.
    Unrealistic,
}

impl QueriesNeeded {
    /// The estimate `queries`, capped at [`REALISTIC_QUERIES`].
    pub fn of(queries: usize) -> Self {
        if queries > REALISTIC_QUERIES {
            QueriesNeeded::Unrealistic
        } else {
            QueriesNeeded::About(queries)
        }
    }

    /// The count, when it is a realistic one.
    pub fn count(self) -> Option<usize> {
        match self {
            QueriesNeeded::About(queries) => Some(queries),
            QueriesNeeded::Unrealistic => None,
        }
    }

    /// What every output says of an estimate past the bound; `verb` is `decide` or `prove`.
    pub fn unrealistic_text(verb: &str) -> String {
        format!(
            "no realistic tier {verb}s a change this close to its limit (it would take over \
             {REALISTIC_QUERIES} paired queries)"
        )
    }
}

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    /// Within the limit (or no evidence of a worsening beyond it).
    Pass,
    /// Better than the baseline, with evidence.
    Improved,
    /// Beyond the limit on the point estimate, without the evidence to fail.
    Inconclusive,
    /// Evidence that the worsening exceeds the limit, or a floor is crossed: a regression.
    Fail,
    /// Too few queries to reach significance (underpowered): never shown as a pass.
    Skipped,
    /// Could not be evaluated: fails the run closed (exit code 2).
    Error,
    /// A finding shown without failing the run: a drift under `gate: { drift: warn }` (the
    /// default).
    Warn,
}

impl CheckStatus {
    /// The status word as records and reports store it (lower case; one of
    /// `history::record::STATUS_WORDS`).
    pub fn word(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Improved => "improved",
            CheckStatus::Inconclusive => "inconclusive",
            CheckStatus::Fail => "fail",
            CheckStatus::Skipped => "skipped",
            CheckStatus::Error => "error",
            CheckStatus::Warn => "warn",
        }
    }
}

/// Which family of tests a check belongs to (each family is corrected on its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The `all` checks.
    Primary,
    /// The per-slice checks (diagnostics).
    Slices,
    /// Floors on judge estimates calibrated by human labels (no multiplicity correction).
    Calibration,
    /// Sequential tests over the run history (`--history`): slow drift against the baseline.
    Drift,
    /// One must-pass query each, decided on its own without statistics (`gate::must_pass`).
    MustPass,
}

/// The one-sided bound a verdict used: the least worsening the data support, as a delta
/// (`current - baseline`), at `confidence` (1 - the check's corrected level).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecisionBound {
    /// The bound, as `current - baseline`.
    pub delta: f64,
    /// Its one-sided confidence level.
    pub confidence: f64,
}

/// A check's floor (`min`, or `max` for lower-is-better metrics) and the current mean it was
/// decided on: over every current query of the slice with a value, paired or not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Floor {
    /// The rule's `min` or `max`.
    pub bound: f64,
    /// The current mean over those queries (NaN when there are none).
    pub mean: f64,
    /// How many current queries of the slice have a value.
    pub n: usize,
}

/// A query that got worse, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryDrop {
    /// The query's id.
    pub qid: String,
    /// The query text, when the qrels have one.
    pub query: Option<String>,
    /// The query's value in the baseline.
    pub baseline: f64,
    /// The query's value now.
    pub current: f64,
    /// It had a positive value (a hit) and now has none.
    pub hit_to_miss: bool,
    /// For answer metrics: how the answer changed, and the claims that lost support.
    pub details: Vec<String>,
    /// For answer metrics: the answer before and now, when it changed.
    pub answers: Option<(String, String)>,
}

/// Everything a report shows about one check.
#[derive(Debug, Clone)]
pub struct CheckOutcome {
    /// The check's name, `metric` or `metric[slice]`.
    pub name: String,
    /// The metric's name.
    pub metric: String,
    /// The slice (`all` or `field=value`).
    pub slice: String,
    /// Which family the check is corrected in.
    pub family: Family,
    /// The verdict.
    pub status: CheckStatus,
    /// The one-line verdict.
    pub verdict: String,
    /// Queries compared (present in both runs and the slice).
    pub n: usize,
    /// The metric's mean over them in the baseline.
    pub baseline_mean: f64,
    /// Its mean over them now.
    pub current_mean: f64,
    /// `current_mean - baseline_mean`.
    pub delta: f64,
    /// The tolerated worsening (absolute, always >= 0), when the rule limits the change.
    pub limit: Option<f64>,
    /// The bound the decision used (metric checks tested against their limit).
    pub bound: Option<DecisionBound>,
    /// A two-sided 95% interval (calibrated estimates only).
    pub ci: Option<(f64, f64)>,
    /// The raw p-value of the one-sided test against the limit (not adjusted for multiplicity: the
    /// adjusted one is in `adjustment`).
    pub p_value: Option<f64>,
    /// How p was computed.
    pub method: Option<Method>,
    /// The level of the decision bound, which the raw p is equivalently compared with: the
    /// family's correction rejects the check exactly when `p_value <= threshold` (the check's own
    /// Holm level when rejected, the level where Holm stopped when not, BH's `R alpha / m`); for
    /// an underpowered check, alpha / m.
    pub threshold: Option<f64>,
    /// The check's adjusted p-value against its family's alpha (tested checks).
    pub adjustment: Option<Adjustment>,
    /// Under `inconclusive: fail`: the non-inferiority test that must prove the worsening below
    /// the limit.
    pub proof: Option<Proof>,
    /// The smallest mean worsening this check detects with 80% power (beyond its limit); `None`
    /// when it cannot fail at this size.
    pub detectable_drop: Option<f64>,
    /// For an inconclusive check: about how many paired queries with this effect and spread
    /// would decide it with 80% power (at the check's threshold), or that no realistic number
    /// would.
    pub queries_needed: Option<QueriesNeeded>,
    /// For an inconclusive check of a run repeated (`repeats`): the share of its metric's
    /// per-query delta variance that run-to-run noise explains (`baseline::noise_share`); more
    /// than half, and more repeats decide it sooner than more queries would.
    pub noise_share: Option<f64>,
    /// Queries that got worse, worst first (at most [`super::WORST_QUERIES`]).
    pub worst: Vec<QueryDrop>,
    /// How many paired queries got worse in all.
    pub worse_count: usize,
    /// The standard error of the mean paired worsening (sd / sqrt(n)), when there were pairs:
    /// the history records it, and the drift check standardises deltas by it.
    pub se: Option<f64>,
    /// The floor and the current mean it was decided on, when the rule has one.
    pub floor: Option<Floor>,
}

impl CheckOutcome {
    /// An outcome with no numbers (an error, a skip, or a calibrated floor's starting point).
    pub fn bare(name: String, metric: String, slice: String, family: Family) -> CheckOutcome {
        CheckOutcome {
            name,
            metric,
            slice,
            family,
            status: CheckStatus::Error,
            verdict: String::new(),
            n: 0,
            baseline_mean: f64::NAN,
            current_mean: f64::NAN,
            delta: f64::NAN,
            limit: None,
            bound: None,
            ci: None,
            p_value: None,
            method: None,
            threshold: None,
            adjustment: None,
            proof: None,
            detectable_drop: None,
            queries_needed: None,
            noise_share: None,
            worst: Vec::new(),
            worse_count: 0,
            se: None,
            floor: None,
        }
    }
}

impl CheckOutcome {
    /// The check as a history record keeps it (non-finite numbers left out).
    pub fn recorded(&self) -> RecordedCheck {
        let finite = |value: f64| value.is_finite().then_some(value);
        RecordedCheck {
            name: self.name.clone(),
            metric: self.metric.clone(),
            slice: self.slice.clone(),
            status: self.status.word().to_string(),
            n: self.n,
            delta: finite(self.delta),
            se: self.se.and_then(finite),
            limit: self.limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::record::STATUS_WORDS;

    #[test]
    fn queries_needed_past_the_bound_are_unrealistic() {
        assert_eq!(QueriesNeeded::of(619), QueriesNeeded::About(619));
        assert_eq!(
            QueriesNeeded::of(REALISTIC_QUERIES),
            QueriesNeeded::About(REALISTIC_QUERIES)
        );
        assert_eq!(
            QueriesNeeded::of(REALISTIC_QUERIES + 1),
            QueriesNeeded::Unrealistic
        );
        assert_eq!(QueriesNeeded::of(1_246_680).count(), None);
        assert_eq!(
            QueriesNeeded::unrealistic_text("decide"),
            "no realistic tier decides a change this close to its limit (it would take over \
             100000 paired queries)"
        );
    }

    #[test]
    fn every_check_status_has_a_word_that_a_record_accepts() {
        for status in [
            CheckStatus::Pass,
            CheckStatus::Improved,
            CheckStatus::Inconclusive,
            CheckStatus::Fail,
            CheckStatus::Skipped,
            CheckStatus::Error,
            CheckStatus::Warn,
        ] {
            assert!(STATUS_WORDS.contains(&status.word()), "{status:?}");
        }
    }
}
