//! How verdicts print numbers: no `-0.0000`, and p-values that can be told from the thresholds
//! they are compared with.

/// `value`, or 0 when it would print as `-0.0000` (a worsening of -1e-17 is none).
pub fn no_negative_zero(value: f64) -> f64 {
    if value.abs() < 5e-5 { 0.0 } else { value }
}

/// A p-value in running text, the one form every report uses: `p < 0.0001` or `p = 0.0123`.
pub fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "p < 0.0001".to_string()
    } else {
        format!("p = {p:.4}")
    }
}

/// A p-value and the threshold it is compared with, as `p = ...` and the threshold: in the
/// [`p_text`] form and four decimals when those tell them apart (the threshold at least 1e-4),
/// else both by [`compared`].
pub fn p_against(p: f64, threshold: f64) -> (String, String) {
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
pub fn compared(a: f64, b: f64) -> (String, String) {
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
