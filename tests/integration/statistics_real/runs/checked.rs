//! What the gate would decide with a resampling check (`resampling`): the larger of the gate's
//! p-value and a bootstrap-t or Monte Carlo sign-flip p-value, Holm at alpha over the five checks.

use ragate::gate::verdict::CheckOutcome;

use super::resampling::{BootstrapT, SignFlip};
use super::{ALPHA, LEVELS, METRICS, share};

/// A resampling check of the gate's test.
#[derive(Clone, Copy)]
pub(super) enum Reference {
    BootstrapT,
    SignFlip,
}

impl Reference {
    pub(super) const ALL: [Reference; 2] = [Reference::BootstrapT, Reference::SignFlip];

    pub(super) fn name(self) -> &'static str {
        match self {
            Reference::BootstrapT => "bootstrap-t",
            Reference::SignFlip => "sign-flip",
        }
    }

    /// The resampling p-value of `H0: E[w] <= limit` (0 where it has nothing to say).
    fn p_value(self, worsening: &[f64], limit: f64) -> f64 {
        match self {
            Reference::BootstrapT => BootstrapT::new(worsening).map_or(0.0, |b| b.p_value(limit)),
            Reference::SignFlip => SignFlip::new(worsening).map_or(0.0, |f| f.p_value(limit)),
        }
    }

    /// The bound of the checked test at `level`: the smaller of the gate's (a worsening) and the
    /// resampling test's, None when either has none.
    pub(super) fn bound(self, worsening: &[f64], gate: Option<f64>, level: f64) -> Option<f64> {
        let own = match self {
            Reference::BootstrapT => BootstrapT::new(worsening).and_then(|b| b.lower_bound(level)),
            Reference::SignFlip => SignFlip::new(worsening).and_then(|f| f.lower_bound(level)),
        };
        Some(gate?.min(own?))
    }
}

/// The worsening values of every metric (baseline minus current).
pub(super) fn worsenings(baseline: &[Vec<f64>], current: &[Vec<f64>]) -> Vec<Vec<f64>> {
    (baseline.iter().zip(current))
        .map(|(b, c)| b.iter().zip(c).map(|(b, c)| b - c).collect())
        .collect()
}

/// Holm's step-down rejections at `alpha`.
fn holm(ps: &[f64], alpha: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..ps.len()).collect();
    order.sort_by(|a, b| ps[*a].total_cmp(&ps[*b]));
    let mut rejected = vec![false; ps.len()];
    for (step, &i) in order.iter().enumerate() {
        if ps[i] > alpha / (ps.len() - step) as f64 {
            break;
        }
        rejected[i] = true;
    }
    rejected
}

/// Per reference: per-check rejections at [`LEVELS`], runs failed and failing checks (Holm).
#[derive(Default)]
pub(super) struct Checked {
    level: [[usize; 2]; 2],
    failed: [usize; 2],
    failing: [[usize; METRICS.len()]; 2],
}

impl Checked {
    pub(super) fn add(
        &mut self,
        outcomes: &[CheckOutcome],
        baseline: &[Vec<f64>],
        current: &[Vec<f64>],
    ) {
        let worsening = worsenings(baseline, current);
        for (r, reference) in Reference::ALL.iter().enumerate() {
            let ps: Vec<f64> = (outcomes.iter().zip(&worsening))
                .map(|(o, w)| {
                    let p = o.p_value.unwrap_or(1.0);
                    p.max(reference.p_value(w, o.limit.unwrap()))
                })
                .collect();
            for p in &ps {
                for (l, level) in LEVELS.iter().enumerate() {
                    self.level[r][l] += usize::from(*p <= *level);
                }
            }
            let rejected = holm(&ps, ALPHA);
            for (m, r_m) in rejected.iter().enumerate() {
                self.failing[r][m] += usize::from(*r_m);
            }
            self.failed[r] += usize::from(rejected.contains(&true));
        }
    }

    pub(super) fn print(&self, label: &str, trials: usize) {
        let checks = trials * METRICS.len();
        for (r, reference) in Reference::ALL.iter().enumerate() {
            println!(
                "{label}: with a {} check: per check at 0.01 {:.2}x, at 0.0025 {:.2}x; runs \
                 failed {}; checks failing {}",
                reference.name(),
                self.level[r][0] as f64 / checks as f64 / LEVELS[0],
                self.level[r][1] as f64 / checks as f64 / LEVELS[1],
                share(self.failed[r], trials),
                share(self.failing[r].iter().sum(), checks),
            );
        }
    }
}
