//! The tier's baseline, loaded and validated once per run and passed on (preflight -> finish ->
//! history): the one place that decides whether a baseline can be used. A missing file is not an
//! error here (the tier's first run measures and is accepted); an unreadable or malformed file, or
//! one of another tier, is.

use std::path::Path;

use crate::baseline::results::Results;
use crate::baseline::store;
use crate::config::Tier;
use crate::error::{Error, Result};

/// A tier's baseline as read from its file.
#[derive(Debug, Clone)]
pub(crate) struct Baseline {
    /// The baseline's results.
    pub results: Results,
    /// sha256 of the file's bytes (what the history records a run was compared with).
    pub sha256: String,
}

/// The tier's baseline, None when its file does not exist; an error when the file cannot be
/// used (unreadable, malformed, of another tier), ending with `next_step`.
pub(crate) fn load(tier: &Tier, next_step: &str) -> Result<Option<Baseline>> {
    let path = &tier.baseline;
    let (results, sha256) = match store::read_with_sha256(path, next_step) {
        Ok(read) => read,
        Err(e) if e.is_missing() => return Ok(None),
        Err(e) => return Err(e),
    };
    check_baseline_tier(&results, &tier.name, path)?;
    Ok(Some(Baseline { results, sha256 }))
}

/// The error that says the tier has no baseline file, with the command that makes one.
pub(crate) fn missing(tier: &Tier, next_step: &str) -> Error {
    store::missing(&tier.baseline, next_step)
}

/// An error when `baseline` holds results of another tier than the one gated.
fn check_baseline_tier(baseline: &Results, tier: &str, path: &Path) -> Result<()> {
    if baseline.tier == tier {
        return Ok(());
    }
    Err(Error::input(
        path,
        format!(
            "a baseline of tier `{}`, but tier `{tier}` is gated: expected the baseline of \
             `{tier}` (check the tier's `baseline:` path in the config)",
            baseline.tier
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::results::RunStatus;

    #[test]
    fn a_baseline_of_another_tier_is_an_error() {
        let mut baseline = Results {
            format: String::new(),
            tier: "regression".into(),
            status: RunStatus::Pass,
            provenance: Default::default(),
            metrics: vec![],
            summary: Default::default(),
            noise: None,
            baseline_mismatch: None,
            queries: Default::default(),
        };
        let error = check_baseline_tier(&baseline, "smoke", Path::new("b.json")).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("a baseline of tier `regression`, but tier `smoke` is gated"),
            "{error}"
        );
        baseline.tier = "smoke".into();
        assert!(check_baseline_tier(&baseline, "smoke", Path::new("b.json")).is_ok());
    }
}
