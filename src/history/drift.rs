//! Drift across runs: a one-sided CUSUM on the standardised per-run worsening against the
//! baseline, which accumulates evidence that no single run gives (five nights that each lose
//! 0.01 pass a `max_drop: 0.03` rule every night).
//!
//! For run i with mean worsening w_i (positive = worse, direction-aware) and its standard error
//! s_i, the statistic is `S_i = max(0, S_{i-1} + (w_i - k) / s_i)` with `S_0 = 0`; the drift
//! fires when `S_i > H` for some run of the series. The reference value k is half the shift worth
//! detecting: a third of the rule's tolerated worsening L (so k = L / 6); a rule without a limit
//! (a floor only) uses k = s_i (the shift of two standard errors). Standard errors are floored at
//! [`MIN_SE`] so that a run with identical per-query values (s = 0) is finite.
//!
//! docs/statistics.md ("Drift across runs") gives the false-alarm rate on 30 nights of no change,
//! measured by the simulation in this module's tests.

/// The alarm threshold H, in standard errors.
pub const THRESHOLD: f64 = 4.5;
/// The shift worth detecting, as a share of the tolerated worsening (k is half of it).
pub const SHIFT_SHARE_OF_LIMIT: f64 = 1.0 / 3.0;
/// The smallest standard error a run is given.
pub const MIN_SE: f64 = 1e-6;

/// One run's worsening against the baseline and its standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunDelta {
    /// Mean worsening (positive = worse than the baseline).
    pub worsening: f64,
    /// Its standard error.
    pub se: f64,
}

/// What the CUSUM says about a series of runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cusum {
    /// The statistic after the last run.
    pub last: f64,
    /// Its largest value over the series.
    pub peak: f64,
    /// The first run (0-based) at which it crossed the threshold, if it did.
    pub alarm_at: Option<usize>,
    /// The run (0-based) at which the current excursion started (S last left 0).
    pub since: usize,
}

impl Cusum {
    /// Whether the drift fires.
    pub fn fires(&self) -> bool {
        self.alarm_at.is_some()
    }
}

/// The reference value k of one run: `L / 6` with a limit, else one standard error.
pub fn reference(limit: Option<f64>, se: f64) -> f64 {
    match limit {
        Some(l) if l > 0.0 => l * SHIFT_SHARE_OF_LIMIT / 2.0,
        _ => se.max(MIN_SE),
    }
}

/// The one-sided CUSUM over `runs` (oldest first) with the rule's tolerated worsening `limit`.
pub fn cusum(runs: &[RunDelta], limit: Option<f64>) -> Cusum {
    let mut state = Cusum {
        last: 0.0,
        peak: 0.0,
        alarm_at: None,
        since: 0,
    };
    for (i, run) in runs.iter().enumerate() {
        let se = run.se.max(MIN_SE);
        let step = (run.worsening - reference(limit, se)) / se;
        if state.last == 0.0 {
            state.since = i;
        }
        state.last = (state.last + step).max(0.0);
        state.peak = state.peak.max(state.last);
        if state.alarm_at.is_none() && state.last > THRESHOLD {
            state.alarm_at = Some(i);
        }
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats;
    use rand::Rng;

    /// A realistic per-run noise of a nightly run's mean delta: 200 queries whose paired
    /// per-query differences have sd 0.07 (a pipeline whose answers and judges are mostly
    /// stable from night to night) give s = 0.07 / sqrt(200) = 0.005.
    const NOISE_SE: f64 = 0.005;
    const LIMIT: f64 = 0.03;

    fn constant(worsening: f64, runs: usize) -> Vec<RunDelta> {
        vec![
            RunDelta {
                worsening,
                se: NOISE_SE
            };
            runs
        ]
    }

    #[test]
    fn five_runs_that_each_lose_a_hundredth_fire_under_a_003_limit() {
        // Each run 0.01 below the baseline: every one passes max_drop 0.03.
        let drift = cusum(&constant(0.01, 5), Some(LIMIT));
        assert!(drift.fires(), "{drift:?}");
        assert_eq!(drift.alarm_at, Some(4), "fires on the fifth run: {drift:?}");
        // Four such runs are not yet enough; nor is one run at the limit's third.
        assert!(!cusum(&constant(0.01, 4), Some(LIMIT)).fires());
        // A loss of 0.01 a night that adds up (0.01, 0.02, ... 0.05) fires sooner.
        let cumulative: Vec<RunDelta> = (1..=5)
            .map(|i| RunDelta {
                worsening: 0.01 * i as f64,
                se: NOISE_SE,
            })
            .collect();
        assert_eq!(cusum(&cumulative, Some(LIMIT)).alarm_at, Some(2));
    }

    #[test]
    fn no_change_and_improvements_never_fire_and_a_recovery_resets() {
        assert!(!cusum(&constant(0.0, 30), Some(LIMIT)).fires());
        assert!(!cusum(&constant(-0.02, 30), Some(LIMIT)).fires());
        let mut runs = constant(0.01, 3);
        runs.extend(constant(-0.01, 3));
        runs.extend(constant(0.01, 3));
        let drift = cusum(&runs, Some(LIMIT));
        assert!(!drift.fires(), "{drift:?}");
        assert_eq!(drift.since, 6, "the excursion restarted after the recovery");
        // Identical values (s = 0) with no change: finite, silent.
        let exact = vec![
            RunDelta {
                worsening: 0.0,
                se: 0.0
            };
            10
        ];
        let drift = cusum(&exact, Some(LIMIT));
        assert!(drift.last.is_finite() && !drift.fires());
        // Without a limit, k is one standard error: a steady 3-SE worsening fires.
        assert!(cusum(&constant(3.0 * NOISE_SE, 3), None).fires());
        assert!(!cusum(&constant(0.0, 30), None).fires());
    }

    /// False alarms over `histories` simulated 30-night histories of no change: per night the
    /// mean delta is N(0, s²) with s = [`NOISE_SE`]; with `common_baseline`, every night is
    /// compared with the same noisy baseline (delta = e_i - e_0, e ~ N(0, s²/2) each, so the
    /// deltas are correlated 0.5, as when the baseline was itself one noisy night).
    fn false_alarm_rate(histories: usize, common_baseline: bool, limit: Option<f64>) -> f64 {
        let mut rng = stats::rng_for(14, "drift-false-alarms");
        let mut normal = move || {
            // Box-Muller from two uniforms, the first in (0, 1].
            let mut uniform = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let u1 = 1.0 - uniform();
            let u2 = uniform();
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let half = NOISE_SE / 2f64.sqrt();
        let mut alarms = 0;
        for _ in 0..histories {
            let baseline = if common_baseline {
                half * normal()
            } else {
                0.0
            };
            let runs: Vec<RunDelta> = (0..30)
                .map(|_| {
                    let noise = if common_baseline {
                        half * normal() - baseline
                    } else {
                        NOISE_SE * normal()
                    };
                    // Worsening is minus the delta of a higher-is-better metric.
                    RunDelta {
                        worsening: -noise,
                        se: NOISE_SE,
                    }
                })
                .collect();
            alarms += usize::from(cusum(&runs, limit).fires());
        }
        alarms as f64 / histories as f64
    }

    /// The measurement docs/statistics.md reports ("Drift across runs"); run it with
    /// `cargo test --lib history::drift::tests::false_alarm_rate_on_30_nights_of_noise -- --nocapture`.
    #[test]
    fn false_alarm_rate_on_30_nights_of_noise() {
        let histories = 2_000;
        let independent = false_alarm_rate(histories, false, Some(LIMIT));
        let common = false_alarm_rate(histories, true, Some(LIMIT));
        let no_limit = false_alarm_rate(histories, false, None);
        println!(
            "drift false alarms over {histories} histories of 30 nights, s = {NOISE_SE}, \
             limit {LIMIT}: independent {independent:.4}, common noisy baseline {common:.4}; \
             no limit (k = s): {no_limit:.4}"
        );
        assert!(independent <= 0.01, "{independent}");
        // A lucky baseline shifts every delta alike: measured 0.072 (docs/statistics.md).
        assert!(common <= 0.10, "{common}");
        assert!(no_limit <= 0.05, "{no_limit}");
    }
}
