//! A check's paired values summarised for its verdict: means, delta, mean worsening and its spread,
//! and how many queries would decide it.

use crate::format::no_negative_zero;
use crate::gate::verdict::BEYOND_TOLERANCE;
use crate::gate::verdict::paired::Paired;
use crate::stats::{self, normal};

/// Means and spread of a check's paired values.
pub(super) struct Summary {
    pub(super) n: usize,
    pub(super) baseline_mean: f64,
    pub(super) current_mean: f64,
    pub(super) delta: f64,
    pub(super) worsening: f64,
    pub(super) sd: f64,
}

impl Summary {
    pub(super) fn of(paired: &Paired) -> Summary {
        let baseline_mean = stats::mean(&paired.baseline);
        let current_mean = stats::mean(&paired.current);
        Summary {
            n: paired.qids.len(),
            baseline_mean,
            current_mean,
            delta: current_mean - baseline_mean,
            worsening: stats::mean(&paired.worsening),
            sd: stats::sample_sd(&paired.worsening),
        }
    }

    pub(super) fn text(&self) -> String {
        format!(
            "{:.4} -> {:.4} (delta {:+.4}, n = {})",
            self.baseline_mean,
            self.current_mean,
            no_negative_zero(self.delta),
            self.n
        )
    }

    /// Whether the mean worsening is beyond `limit` by more than [`BEYOND_TOLERANCE`] of the
    /// metric's range (`range`, `None` for unbounded metrics).
    pub(super) fn beyond(&self, limit: f64, range: Option<f64>) -> bool {
        let scale = range.unwrap_or_else(|| {
            1f64.max(self.baseline_mean.abs())
                .max(self.current_mean.abs())
        });
        self.worsening > limit + BEYOND_TOLERANCE * scale
    }

    /// About how many paired queries the test needs to decide an effect this far beyond the limit,
    /// with this spread, at `level` with `power` (normal approximation:
    /// n = ((z(1 - level) + z(power)) sd / (W - L))^2), at least one more than now.
    pub(super) fn queries_needed(&self, limit: f64, level: f64, power: f64) -> Option<usize> {
        let excess = self.worsening - limit;
        if excess <= 0.0 || self.sd <= 0.0 {
            return None;
        }
        let z = normal::quantile(1.0 - level) + normal::quantile(power);
        let needed = (z * self.sd / excess).powi(2).ceil();
        (needed.is_finite() && needed < 1e12).then_some((needed as usize).max(self.n + 1))
    }
}
