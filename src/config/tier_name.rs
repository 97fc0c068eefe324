//! A tier's name, checked wherever one is given (the config's `tiers:`, `--tier`).

use crate::error::shorten;

/// A tier's name is a folder and file name of its outputs (`.ragate/out/<tier>`, history
/// records): it must be one safe path component, so that no name (in the config or after
/// `--tier`) writes outside the output folder.
pub fn check(name: &str) -> Result<(), String> {
    let safe = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if safe && !name.is_empty() && name != "." && name != ".." {
        return Ok(());
    }
    Err(format!(
        "tier name `{}`: expected letters, digits, `-`, `_` and `.` only (one path component, \
         not `.` or `..`): the name is a folder of the outputs",
        shorten(&name.escape_debug().to_string())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tier_name_is_one_safe_path_component() {
        for good in ["smoke", "nightly-2", "a_b.c"] {
            assert_eq!(check(good), Ok(()), "{good}");
        }
        for bad in ["", ".", "..", "a/b", "a\\b", "tier one", "x\u{1b}"] {
            let message = check(bad).unwrap_err();
            assert!(message.contains("one path component"), "{bad:?}: {message}");
        }
    }
}
