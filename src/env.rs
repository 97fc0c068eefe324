//! The environment variables that change what ragate writes or refuses, each read in one place
//! with the same checks everywhere: `SOURCE_DATE_EPOCH` (reproducible times) and `CI`.

use std::ffi::OsString;

use crate::error::{Error, Result};

/// The raw value of `SOURCE_DATE_EPOCH`: None when it is unset, an error when it is set but not
/// UTF-8 (it is never taken for "unset"); `report::junit::source_date_epoch_seconds` reads it.
pub fn source_date_epoch() -> Result<Option<String>> {
    utf8("SOURCE_DATE_EPOCH", std::env::var_os("SOURCE_DATE_EPOCH"))
}

/// The first second of the year 10000 UTC: RFC 3339 (and so every time ragate writes) has four
/// digits for the year.
pub(crate) const YEAR_10000: u64 = 253_402_300_800;

fn source_date_epoch_error(text: &str) -> Error {
    Error::Usage(format!(
        "SOURCE_DATE_EPOCH is `{}`: expected whole seconds since 1970-01-01 UTC, before the year \
         10000 (reproducible-builds.org); set it to an integer such as `$(git log -1 --format=%ct)`, or unset it",
        crate::error::shorten(text)
    ))
}

/// The seconds of a `SOURCE_DATE_EPOCH` value, read the same way by every command that writes a
/// time (gate, merge, `baseline accept`, `history add`): a whole number of seconds from
/// 1970-01-01 UTC up to the end of the year 9999; anything else is an error naming the value.
pub fn source_date_epoch_seconds(text: &str) -> Result<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|&seconds| seconds < YEAR_10000)
        .ok_or_else(|| source_date_epoch_error(text))
}

fn utf8(name: &str, value: Option<OsString>) -> Result<Option<String>> {
    value
        .map(|value| {
            value.into_string().map_err(|value| {
                Error::Usage(format!(
                    "{name} is `{}`, not UTF-8 text: set it to an integer such as \
                     `$(git log -1 --format=%ct)`, or unset it",
                    crate::error::shorten(&value.to_string_lossy())
                ))
            })
        })
        .transpose()
}

/// Whether ragate runs in CI: `CI` is set to anything but an empty value, `0` or `false` (in any
/// case). GitHub Actions and GitLab set `CI=true`; other services `CI=1` or `CI=True`.
pub fn is_ci() -> bool {
    ci(std::env::var_os("CI"))
}

fn ci(value: Option<OsString>) -> bool {
    value.is_some_and(|value| {
        let value = value.to_string_lossy();
        let value = value.trim();
        !(value.is_empty() || value == "0" || value.eq_ignore_ascii_case("false"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_is_any_value_but_empty_zero_or_false() {
        for yes in ["true", "True", "1", "yes", "woodpecker"] {
            assert!(ci(Some(yes.into())), "{yes}");
        }
        for no in ["", " ", "0", "false", "FALSE", "False"] {
            assert!(!ci(Some(no.into())), "{no:?}");
        }
        assert!(!ci(None));
    }

    #[cfg(unix)]
    #[test]
    fn a_value_that_is_not_utf8_is_an_error_not_unset() {
        use std::os::unix::ffi::OsStringExt;
        assert_eq!(utf8("X", None).unwrap(), None);
        assert_eq!(
            utf8("X", Some("1700000000".into())).unwrap().as_deref(),
            Some("1700000000")
        );
        let message = utf8(
            "SOURCE_DATE_EPOCH",
            Some(OsString::from_vec(vec![b'1', 0xff])),
        )
        .unwrap_err()
        .to_string();
        assert!(
            message.contains("SOURCE_DATE_EPOCH is `1\u{fffd}`, not UTF-8"),
            "{message}"
        );
    }
}
