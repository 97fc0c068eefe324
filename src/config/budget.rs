//! `gate.budget` (or a tier's `gate.budget`): what a gate run may spend on judges, checked
//! before the first judge call (`ragate plan` computes the same numbers).

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::settings::keys::Keys;

/// A budget as written: `{ max_calls: 500, max_cost: 2.5 }`.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping such as `{ max_usd: 5 }`")]
pub(crate) struct RawBudget {
    pub max_calls: Option<u64>,
    pub max_cost: Option<f64>,
}

/// The validated budget of a tier.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// Judge calls (HTTP requests, tasks sent to a `command` judge) a run may make at most.
    pub max_calls: Option<u64>,
    /// What a run's judge calls may cost at most, at the judges' `price_per_1k_tokens`.
    pub max_cost: Option<f64>,
    /// Where it is configured (`gate.budget` or `tiers.NAME.gate.budget`), for messages.
    pub key: String,
}

/// The budget at `key`, when one is configured: at least one limit, a cost finite and not
/// negative (0 calls or 0 cost: no paid judge call at all).
pub(crate) fn validate(
    keys: &Keys<'_>,
    key: &str,
    raw: Option<&RawBudget>,
) -> Result<Option<Budget>> {
    let Some(raw) = raw else { return Ok(None) };
    if raw.max_calls.is_none() && raw.max_cost.is_none() {
        return Err(keys.error(
            key,
            "empty: expected `max_calls`, `max_cost` or both, e.g. { max_calls: 500, max_cost: 2.5 }",
        ));
    }
    if let Some(cost) = raw.max_cost
        && !(cost.is_finite() && cost >= 0.0)
    {
        return Err(keys.error(
            format!("{key}.max_cost"),
            format!("{cost}: expected a cost of 0 or more (in the currency of the judges' prices)"),
        ));
    }
    Ok(Some(Budget {
        max_calls: raw.max_calls,
        max_cost: raw.max_cost,
        key: key.to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn check(raw: RawBudget) -> std::result::Result<Option<Budget>, String> {
        validate(&Keys::new(Path::new("c.yaml")), "gate.budget", Some(&raw))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_budget_needs_a_limit_and_a_sane_cost() {
        let empty = check(RawBudget::default()).unwrap_err();
        assert!(
            empty.contains("c.yaml") && empty.contains("gate.budget"),
            "{empty}"
        );
        assert!(empty.contains("max_calls"), "{empty}");
        for cost in [-0.5, f64::NAN, f64::INFINITY] {
            let error = check(RawBudget {
                max_calls: None,
                max_cost: Some(cost),
            })
            .unwrap_err();
            assert!(error.contains("gate.budget.max_cost"), "{error}");
        }
        let budget = check(RawBudget {
            max_calls: Some(0),
            max_cost: Some(1.5),
        })
        .unwrap()
        .unwrap();
        assert_eq!((budget.max_calls, budget.max_cost), (Some(0), Some(1.5)));
        assert_eq!(budget.key, "gate.budget");
    }

    #[test]
    fn no_budget_is_none() {
        let keys = Keys::new(Path::new("c.yaml"));
        assert_eq!(validate(&keys, "gate.budget", None).unwrap(), None);
    }
}
