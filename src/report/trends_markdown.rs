//! The summary's "Trends" section: the run history's series (`history::sparkline`) as a
//! Markdown table, check names inert.

use crate::history::sparkline::{Trend, rank_text, sparkline};
use crate::report::inert;

/// The summary's "Trends" section (Markdown), or nothing when there are no trends.
pub(crate) fn markdown(trends: &[Trend]) -> String {
    if trends.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "### Trends\n\nThe last runs of this series (`ragate history show` lists them), the current run last.\n\n\
         | check | runs | range | current |\n|---|---|---|---|\n",
    );
    for trend in trends {
        let finite: Vec<f64> = trend
            .values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let low = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let high = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let range = if finite.is_empty() {
            "–".to_string()
        } else {
            format!("{low:.4} – {high:.4}")
        };
        let current = trend
            .values
            .last()
            .filter(|v| v.is_finite())
            .map_or("–".to_string(), |v| {
                format!("{v:.4} ({})", rank_text(&finite))
            });
        let marker = if trend.after_break {
            " (since a break)"
        } else {
            ""
        };
        out.push_str(&format!(
            "| {}{marker} | `{}` | {range} | {current} |\n",
            inert::cell(&trend.name, 1000),
            sparkline(&trend.values)
        ));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_shows_range_and_the_current_runs_place() {
        let text = markdown(&[Trend {
            name: "recall@10 [all]".into(),
            values: vec![0.70, 0.72, 0.715],
            after_break: false,
        }]);
        assert!(
            text.contains(
                "| recall@10 [all] | `▁█▆` | 0.7000 – 0.7200 | 0.7150 (2nd highest of 3) |"
            ),
            "{text}"
        );
        assert_eq!(markdown(&[]), "");
    }
}
