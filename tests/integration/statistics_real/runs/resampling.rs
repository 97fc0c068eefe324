//! Two resampling checks of the analytic test, as references for issue 23's rare large gains (not
//! used by the gate; docs/statistics.md, "Real A/A runs"): a studentized bootstrap (bootstrap-t)
//! and a Monte Carlo sign-flip test, each from a fixed seed (the same values always give the same
//! p-value), each as `max(gate p, resampling p)`. Both see only the sample: where a sample missed
//! the population's rare large values, so do its resamples.
//!
//! **Bootstrap-t** (Efron & Tibshirani 1993, ch. 12; Hall 1992, section 3.5): the n values are
//! resampled with replacement [`RESAMPLES`] times, `t* = (mean* - mean) / (sd* / sqrt(n))`, and
//! the p-value of `H0: E[w] <= L` is the share of `t*` at or above the observed
//! `t = (mean - L) / (sd / sqrt(n))`. The `t*` do not depend on L, so the bound at a level is one
//! of them.
//!
//! **Sign flips**: flipping the signs of a subset F of the `w_i - L` changes their sum by
//! `-2 sum_F (w_i - L)`, so a sign vector is at least as extreme as the data exactly when the
//! flipped queries' mean worsening is at most L: the p-value for every limit is a count in the
//! [`FLIPS`] drawn vectors' flipped means, sorted once.
//!
//! Draws: SplitMix64 (Steele, Lea & Flood 2014) from a constant seed; the bootstrap takes two
//! 32-bit indices per output, `index = (x * n) >> 32` (bias below `n / 2^32`), the sign flips one
//! bit per query. The Monte Carlo standard error of a p-value p is `sqrt(p (1 - p) / 4000)`:
//! 0.0016 at 0.01, 0.0008 at 0.0025.
//!
//! These references are not product code and have no tests of their own here (a test of a helper
//! only the ignored study uses would check nothing that ships); the exact sign-flip test the
//! product has is tested against brute force in crates/stats/src/randomization.rs.

/// One SplitMix64 step.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Number of bootstrap resamples.
const RESAMPLES: usize = 4_000;

/// The seed of the resampling stream (any constant would do; this one is pinned).
const BOOTSTRAP_SEED: u64 = 0x7261_6761_7465_2d74;

/// The observed mean and standard error with the resampled statistics, sorted from largest.
pub(super) struct BootstrapT {
    mean: f64,
    standard_error: f64,
    /// The `t*`, largest first.
    descending: Vec<f64>,
}

impl BootstrapT {
    /// Resamples `values` (at least two, not all equal). `None` for fewer than two values or a
    /// sample without spread (nothing to studentize).
    pub(super) fn new(values: &[f64]) -> Option<Self> {
        let n = values.len();
        if n < 2 || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = ragate::stats::mean(values);
        let centred: Vec<f64> = values.iter().map(|v| v - mean).collect();
        let sd = ragate::stats::sample_sd(values);
        let scale = centred.iter().fold(0.0f64, |m, c| m.max(c.abs()));
        // Finite values give a finite sd.
        if sd <= 1e-12 * (1.0 + mean.abs()) {
            return None;
        }
        let root_n = (n as f64).sqrt();
        // Spreads below this are rounding: such a resample repeats one value.
        let flat = 1e-12 * scale;
        let mut draws = Draws::new(n);
        let mut statistics: Vec<f64> = (0..RESAMPLES)
            .map(|_| {
                let (mut sum, mut squares) = (0.0, 0.0);
                for _ in 0..n {
                    let c = centred[draws.next()];
                    sum += c;
                    squares += c * c;
                }
                let shift = sum / n as f64;
                let variance = ((squares - sum * shift) / (n - 1) as f64).max(0.0);
                let spread = variance.sqrt();
                if spread > flat {
                    shift / (spread / root_n)
                } else if shift > flat {
                    f64::INFINITY
                } else if shift < -flat {
                    f64::NEG_INFINITY
                } else {
                    0.0
                }
            })
            .collect();
        statistics.sort_by(|a, b| b.total_cmp(a));
        Some(BootstrapT {
            mean,
            standard_error: sd / root_n,
            descending: statistics,
        })
    }

    /// The observed statistic for `limit`.
    fn observed(&self, limit: f64) -> f64 {
        (self.mean - limit) / self.standard_error
    }

    /// The share of resamples whose `t*` is at least the observed `t` for `limit`: non-decreasing
    /// in the limit.
    pub(super) fn p_value(&self, limit: f64) -> f64 {
        let observed = self.observed(limit);
        let at_or_above = self.descending.partition_point(|t| *t >= observed);
        at_or_above as f64 / self.descending.len() as f64
    }

    /// The supremum of the limits with `p_value(limit) <= level`: the p-value is at most the
    /// level exactly when at most `m = floor(level B)` of the `t*` reach the observed t, that is
    /// when t exceeds the (m + 1)-th largest `t*`, for every limit below
    /// `mean - se * t*_(m + 1)` (and at none above it). `None` when that `t*` is infinite.
    pub(super) fn lower_bound(&self, level: f64) -> Option<f64> {
        let allowed = (level * self.descending.len() as f64 * (1.0 + 1e-12)).floor() as usize;
        let critical = *self.descending.get(allowed)?;
        critical
            .is_finite()
            .then_some(self.mean - self.standard_error * critical)
    }
}

/// Uniform indices below n from the pinned SplitMix64 stream, two per 64-bit output.
struct Draws {
    state: u64,
    spare: Option<u32>,
    n: u64,
}

impl Draws {
    fn new(n: usize) -> Self {
        Draws {
            state: BOOTSTRAP_SEED,
            spare: None,
            n: n as u64,
        }
    }

    fn next(&mut self) -> usize {
        let bits = match self.spare.take() {
            Some(bits) => bits,
            None => {
                let x = splitmix64(&mut self.state);
                self.spare = Some(x as u32);
                (x >> 32) as u32
            }
        };
        ((u64::from(bits) * self.n) >> 32) as usize
    }
}

/// Number of sign vectors drawn.
const FLIPS: usize = 4_000;

/// The seed of the sign stream (any constant would do; this one is pinned).
const SIGN_SEED: u64 = 0x7369_676e_2d66_6c69;

/// The flipped subsets' mean worsening of every drawn sign vector, ascending.
pub(super) struct SignFlip {
    ascending: Vec<f64>,
    /// Two means this close count as equal (rounding of the sums).
    tolerance: f64,
}

impl SignFlip {
    /// Draws the sign vectors for `worsening`; `None` for empty or non-finite input.
    pub(super) fn new(worsening: &[f64]) -> Option<Self> {
        let n = worsening.len();
        if n == 0 || worsening.iter().any(|w| !w.is_finite()) {
            return None;
        }
        let mut state = SIGN_SEED;
        let mut means: Vec<f64> = (0..FLIPS)
            .map(|_| {
                let (mut sum, mut flipped) = (0.0, 0usize);
                for block in worsening.chunks(64) {
                    let bits = splitmix64(&mut state);
                    for (i, w) in block.iter().enumerate() {
                        if bits >> i & 1 == 1 {
                            sum += w;
                            flipped += 1;
                        }
                    }
                }
                // No query flipped: the data itself, as extreme as the data for every limit.
                if flipped == 0 {
                    f64::NEG_INFINITY
                } else {
                    sum / flipped as f64
                }
            })
            .collect();
        means.sort_by(f64::total_cmp);
        let magnitude = worsening.iter().fold(0.0f64, |m, w| m.max(w.abs()));
        Some(SignFlip {
            ascending: means,
            tolerance: 4.0 * n as f64 * f64::EPSILON * magnitude.max(1e-300),
        })
    }

    /// The share of drawn sign vectors at least as extreme as the data for `limit`
    /// (non-decreasing in the limit).
    pub(super) fn p_value(&self, limit: f64) -> f64 {
        let reached = limit + self.tolerance;
        let count = self.ascending.partition_point(|c| *c <= reached);
        count as f64 / self.ascending.len() as f64
    }

    /// The supremum of the limits whose p-value is at most `level`: at most `m = floor(level B)`
    /// means may be at or below the limit, so every limit below the (m + 1)-th smallest mean
    /// (less the tolerance) qualifies. `None` when that mean is not finite.
    pub(super) fn lower_bound(&self, level: f64) -> Option<f64> {
        let allowed = (level * self.ascending.len() as f64 * (1.0 + 1e-12)).floor() as usize;
        let critical = *self.ascending.get(allowed)?;
        critical.is_finite().then_some(critical - self.tolerance)
    }
}
