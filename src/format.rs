//! Pure text forms of numbers and lines, the same in every report and in the gate's own
//! messages: "–" for a number that does not exist (never "NaN"), no `-0.0000`, p-values that can
//! be told from the thresholds they are compared with, intervals clamped to the values a metric
//! can take, levels without trailing zeros, text cut to one line. Nothing here reads a check or a
//! result.

use std::ops::RangeInclusive;

/// What a report shows for a number that does not exist (skipped and erroneous checks).
pub(crate) const MISSING: &str = "–";

/// A mean or a limit with four decimals, or "–".
pub(crate) fn value(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        MISSING.to_string()
    }
}

/// A delta with its sign, or "–" (a value that rounds to zero prints `+0.0000`, never `-0.0000`).
pub(crate) fn signed(v: f64) -> String {
    if v.is_finite() {
        format!("{:+.4}", no_negative_zero(v))
    } else {
        MISSING.to_string()
    }
}

/// [`value`] of a number that may not exist.
pub(crate) fn optional(v: Option<f64>) -> String {
    v.map_or_else(|| MISSING.to_string(), value)
}

/// A p-value: "<0.0001" rather than a row of zeros.
pub(crate) fn p_value(p: Option<f64>) -> String {
    match p {
        Some(p) if p.is_finite() && p < 0.0001 => "<0.0001".to_string(),
        other => optional(other),
    }
}

/// A two-sided interval, `[-0.0200, +0.0100]`, or "–".
pub(crate) fn interval(ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((low, high)) if low.is_finite() && high.is_finite() => {
            format!("[{}, {}]", signed(low), signed(high))
        }
        _ => MISSING.to_string(),
    }
}

/// Text on one line (line breaks become spaces), cut to `max_chars` characters with "…".
///
/// Every cut of text from outside goes through here, so the text is redacted first
/// ([`crate::secrets::redact`]): a secret cut in two would leave a prefix no later redaction
/// could recognise.
pub(crate) fn one_line(text: &str, max_chars: usize) -> String {
    let text = crate::secrets::redact(text);
    let mut out = String::with_capacity(text.len().min(max_chars * 4));
    for (i, c) in text.chars().enumerate() {
        if i == max_chars {
            out.push('…');
            break;
        }
        out.push(if matches!(c, '\n' | '\r') { ' ' } else { c });
    }
    out
}

/// `value`, or 0 when it would print as `-0.0000` (a worsening of -1e-17 is none).
pub(crate) fn no_negative_zero(value: f64) -> f64 {
    if value.abs() < 5e-5 { 0.0 } else { value }
}

/// A p-value in running text, the one form every report uses: `p < 0.0001` or `p = 0.0123`.
pub(crate) fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "p < 0.0001".to_string()
    } else {
        format!("p = {p:.4}")
    }
}

/// A p-value and the threshold it is compared with, as `p = ...` and the threshold: in the
/// [`p_text`] form and four decimals when those tell them apart (the threshold at least 1e-4),
/// else both by [`compared`].
pub(crate) fn p_against(p: f64, threshold: f64) -> (String, String) {
    let fixed = (p_text(p), format!("{threshold:.4}"));
    if threshold >= 1e-4 && (p < 1e-4 || format!("p = {threshold:.4}") != fixed.0) {
        return fixed;
    }
    let (p, threshold) = compared(p, threshold);
    (format!("p = {p}"), threshold)
}

/// Two probabilities compared in a message, printed so that they differ: four decimals when those
/// differ and neither is below 1e-4, else scientific notation with the fewest significant digits
/// (2 to 6) that tell them apart (`1.8e-4` and `1.7e-4`); 0 prints `0`.
pub(crate) fn compared(a: f64, b: f64) -> (String, String) {
    let fixed = (format!("{a:.4}"), format!("{b:.4}"));
    if fixed.0 != fixed.1 && a.min(b) >= 1e-4 {
        return fixed;
    }
    let scientific = |x: f64, digits: usize| {
        if x == 0.0 {
            "0".to_string()
        } else {
            format!("{x:.digits$e}")
        }
    };
    let mut shown = (scientific(a, 5), scientific(b, 5));
    for digits in (1..5).rev() {
        let fewer = (scientific(a, digits), scientific(b, digits));
        if fewer.0 == fewer.1 {
            break;
        }
        shown = fewer;
    }
    shown
}

/// An interval with four decimals, clamped to `range` (the values the metric can take) when it
/// leaves it, saying so: `[0.0000, 1.0000] (clamped to [0, 1])`. A mean of values in [0, 1]
/// cannot leave [0, 1]; PPI's normal interval can with few labels. "–" when not finite.
pub(crate) fn interval_text(
    (low, high): (f64, f64),
    range: Option<&RangeInclusive<f64>>,
) -> String {
    if !(low.is_finite() && high.is_finite()) {
        return "–".to_string();
    }
    let Some(range) = range.filter(|r| r.end().is_finite() && *r.end() < f64::MAX) else {
        return format!("[{low:.4}, {high:.4}]");
    };
    let (start, end) = (*range.start(), *range.end());
    let (clamped_low, clamped_high) = (low.clamp(start, end), high.clamp(start, end));
    let text = format!("[{clamped_low:.4}, {clamped_high:.4}]");
    if (clamped_low, clamped_high) == (low, high) {
        text
    } else {
        format!("{text} (clamped to [{start}, {end}])")
    }
}

/// A level without trailing zeros: 0.05, 0.0167, 0.125.
pub(crate) fn level_text(x: f64) -> String {
    let text = format!("{x:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// A share as a percentage without trailing zeros: 0.05 -> 5, 0.125 -> 12.5.
pub(crate) fn percent_text(x: f64) -> String {
    level_text(100.0 * x)
}

/// The first 12 characters of a hash (whole characters, whatever the input holds).
pub(crate) fn short_hash(hash: &str) -> &str {
    hash.char_indices()
        .nth(12)
        .map_or(hash, |(end, _)| &hash[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_compared_in_a_message_print_apart() {
        assert_eq!(
            p_against(0.00018, 0.05 / 300.0),
            ("p = 1.8e-4".to_string(), "1.7e-4".to_string())
        );
        assert_eq!(
            p_against(0.2, 0.0125),
            ("p = 0.2000".to_string(), "0.0125".to_string())
        );
        assert_eq!(
            p_against(1e-6, 0.0125),
            ("p < 0.0001".to_string(), "0.0125".to_string())
        );
        assert_eq!(
            p_against(1e-6, 5e-5),
            ("p = 1.0e-6".to_string(), "5.0e-5".to_string())
        );
        assert_eq!(
            p_against(0.0, 5e-5),
            ("p = 0".to_string(), "5.0e-5".to_string())
        );
        assert_eq!(
            compared(0.0625, 0.025),
            ("0.0625".to_string(), "0.0250".to_string())
        );
        assert_eq!(
            compared(0.5f64.powi(12), 0.00024),
            ("2.44e-4".to_string(), "2.40e-4".to_string())
        );
    }

    #[test]
    fn percentages_and_levels_are_short() {
        // The drift checks' shared budget over 6 metrics: 1% / 6, not 0.16666666666666669%.
        assert_eq!(percent_text(0.01 / 6.0), "0.1667");
        assert_eq!(percent_text(0.01), "1");
        assert_eq!(percent_text(0.025), "2.5");
        assert_eq!(level_text(0.05 / 3.0), "0.0167");
    }

    #[test]
    fn a_hash_is_cut_to_12_whole_characters() {
        assert_eq!(short_hash("0123456789abcdef"), "0123456789ab");
        assert_eq!(short_hash("abc"), "abc");
        assert_eq!(short_hash("ééééééééééééé"), "éééééééééééé");
    }

    #[test]
    fn formatting_helpers_never_print_nan() {
        assert_eq!(value(f64::NAN), "–");
        assert_eq!(signed(f64::NAN), "–");
        assert_eq!(signed(0.0123), "+0.0123");
        assert_eq!(signed(-1e-17), "+0.0000");
        assert_eq!(interval(Some((f64::NAN, 1.0))), "–");
        assert_eq!(interval(Some((-0.02, 0.01))), "[-0.0200, +0.0100]");
        assert_eq!(p_value(Some(0.00001)), "<0.0001");
        assert_eq!(p_value(None), "–");
        assert_eq!(one_line("a\r\nb", 10), "a  b");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
