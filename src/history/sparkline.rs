//! Sparklines of a metric over the last runs (`▁▂▃▄▅▆▇█`), and the summary's "Trends" section:
//! per gated metric (`all`, and the failing slices) the line, the value range and where the
//! current run sits.

/// The eight levels, lowest first.
const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// The mark of a value that is not a number (never expected: records hold finite values).
pub const GAP: char = ' ';
/// How many runs a sparkline shows at most.
pub const RUNS: usize = 20;

/// One character per value: the lowest value `▁`, the highest `█`, the others in between in
/// proportion; a flat series (or one value) is all `▄`; a value that is not finite is [`GAP`]
/// and does not stretch the range.
pub fn sparkline(values: &[f64]) -> String {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let (low, high) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    values
        .iter()
        .map(|&v| {
            if !v.is_finite() {
                GAP
            } else if high - low <= f64::EPSILON * high.abs().max(1.0) {
                LEVELS[3]
            } else {
                let share = (v - low) / (high - low);
                let level = (share * (LEVELS.len() - 1) as f64).round() as usize;
                LEVELS[level.min(LEVELS.len() - 1)]
            }
        })
        .collect()
}

/// One trend to show: a check's name and the values of its series, oldest first (the current
/// run last).
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    /// `recall@10 [all]`.
    pub name: String,
    /// The metric's mean per run.
    pub values: Vec<f64>,
    /// Whether a series break was left out before these runs (the older runs are not comparable).
    pub after_break: bool,
}

/// `3rd highest of 12`.
pub(crate) fn rank_text(values: &[f64]) -> String {
    let Some(&current) = values.last() else {
        return String::new();
    };
    let higher = values.iter().filter(|&&v| v > current).count();
    let rank = higher + 1;
    let suffix = match (rank % 10, rank % 100) {
        (1, r) if r != 11 => "st",
        (2, r) if r != 12 => "nd",
        (3, r) if r != 13 => "rd",
        _ => "th",
    };
    let place = if rank == 1 {
        "highest".to_string()
    } else {
        format!("{rank}{suffix} highest")
    };
    format!("{place} of {}", values.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes_take_the_lowest_and_highest_levels() {
        assert_eq!(sparkline(&[0.0, 1.0]), "▁█");
        assert_eq!(
            sparkline(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]),
            "▁▂▃▄▅▆▇█"
        );
        assert_eq!(sparkline(&[0.71, 0.70, 0.75]), "▂▁█");
    }

    #[test]
    fn a_flat_series_and_a_single_point_sit_in_the_middle() {
        assert_eq!(sparkline(&[0.5, 0.5, 0.5]), "▄▄▄");
        assert_eq!(sparkline(&[0.42]), "▄");
        assert_eq!(sparkline(&[]), "");
    }

    #[test]
    fn the_current_run_s_place_counts_ties_as_highest() {
        assert_eq!(rank_text(&[0.1, 0.2, 0.3]), "highest of 3");
        assert_eq!(rank_text(&[0.2; 12]), "highest of 12");
    }

    #[test]
    fn values_that_are_not_numbers_leave_a_gap_and_do_not_stretch_the_range() {
        let line = sparkline(&[0.0, f64::NAN, 1.0, f64::INFINITY]);
        assert_eq!(line, "▁ █ ");
        assert_eq!(sparkline(&[f64::NAN]), " ");
    }
}
