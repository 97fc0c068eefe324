//! Exactly rounded parsing of run scores (fast-float2: Clinger's fast path for the plain
//! decimals retrievers print, Eisel-Lemire and big-number arithmetic behind it).

/// Parses a finite decimal number (also with an exponent or many digits); None for anything else,
/// including NaN and infinities.
pub(crate) fn parse_finite(text: &[u8]) -> Option<f64> {
    let value = fast_float2::parse::<f64, _>(text).ok()?;
    value.is_finite().then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn common_and_unusual_spellings() {
        for (text, want) in [
            ("23.92616", Some(23.92616)),
            ("-0.5", Some(-0.5)),
            ("+3", Some(3.0)),
            ("5.", Some(5.0)),
            (".25", Some(0.25)),
            ("1e3", Some(1000.0)),
            ("-1.5E-3", Some(-0.0015)),
            ("12345678901234567890.5", Some(12345678901234567890.5)),
            ("NaN", None),
            ("inf", None),
            ("-infinity", None),
            ("1e999", None),
            ("", None),
            (".", None),
            ("1.2.3", None),
            ("12a.5", None),
            ("1.-2", None),
            ("12345678.9012345", Some(12345678.9012345)),
            ("high", None),
        ] {
            assert_eq!(parse_finite(text.as_bytes()), want, "{text}");
        }
    }

    proptest! {
        #[test]
        fn digits_points_and_their_neighbour_bytes_parse_as_the_standard_parser(
            text in "[0-9./:]{0,17}"
        ) {
            // '/' and ':' are the bytes on either side of the digits.
            let want = text.parse::<f64>().ok().filter(|v| v.is_finite()).map(f64::to_bits);
            prop_assert_eq!(parse_finite(text.as_bytes()).map(f64::to_bits), want, "{}", text);
        }

        #[test]
        fn equals_the_standard_parser(int in 0u64..10_000_000_000, frac in 0u64..100_000_000, frac_len in 0usize..9, negative: bool) {
            let frac_text = format!("{frac:08}");
            let text = format!("{}{int}{}{}", if negative { "-" } else { "" }, if frac_len > 0 { "." } else { "" }, &frac_text[..frac_len]);
            let want: f64 = text.parse().unwrap();
            prop_assert_eq!(parse_finite(text.as_bytes()).map(f64::to_bits), Some(want.to_bits()), "{}", text);
        }

        #[test]
        fn printed_floats_round_trip(value in any::<f64>().prop_filter("finite", |v| v.is_finite())) {
            let text = value.to_string();
            prop_assert_eq!(parse_finite(text.as_bytes()).map(f64::to_bits), Some(value.to_bits()));
        }
    }
}
