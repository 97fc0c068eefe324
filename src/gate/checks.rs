//! Turns rules into checks: one per (metric, slice), with per-slice rules overriding tier-wide ones.

use std::collections::BTreeSet;
use std::fmt;

use crate::config::{Rule, SliceValue};
use crate::metrics::metric::Metric;

/// The queries a check looks at.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Slice {
    /// Every query of the tier.
    All,
    /// The queries whose slice field has this value.
    Value(SliceValue),
}

impl fmt::Display for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Slice::All => f.write_str("all"),
            Slice::Value(value) => value.fmt(f),
        }
    }
}

impl Slice {
    /// Whether a query with these slice values belongs to the slice.
    pub fn contains(&self, slices: &std::collections::BTreeMap<String, String>) -> bool {
        match self {
            Slice::All => true,
            Slice::Value(v) => slices.get(&v.field) == Some(&v.value),
        }
    }
}

/// Above this many values of one slice field, the gate warns: each value gets a check per rule,
/// most with too few queries to be decided (documented in docs/config.md, `slices:`).
pub const MANY_SLICE_VALUES: usize = 1_000;

/// A warning for each slice field with more than [`MANY_SLICE_VALUES`] values in `values`.
pub fn many_values_warnings(values: &BTreeSet<SliceValue>) -> Vec<String> {
    let mut per_field: std::collections::BTreeMap<&str, usize> = Default::default();
    for value in values {
        *per_field.entry(value.field.as_str()).or_default() += 1;
    }
    per_field
        .into_iter()
        .filter(|&(_, count)| count > MANY_SLICE_VALUES)
        .map(|(field, count)| {
            format!(
                "slice field `{field}` has {count} values (more than {MANY_SLICE_VALUES}): each is \
                 checked under every rule, and values with fewer than min_queries queries are \
                 skipped; slice by a coarser field, or drop `{field}` from `slices:`"
            )
        })
        .collect()
}

/// One rule applied to one slice.
#[derive(Debug, Clone)]
pub struct Check<'a> {
    /// The rule checked.
    pub rule: &'a Rule,
    /// The queries it is checked on.
    pub slice: Slice,
}

impl Check<'_> {
    /// `recall@5 [class=paraphrased]`: the check's name in reports and its random stream.
    pub fn name(&self) -> String {
        format!("{} [{}]", self.rule.metric, self.slice)
    }
}

/// Every check of `rules`: a rule naming a slice gives one check; a rule naming none gives `all`
/// and every slice value in `values`, except where another rule names that slice for the same
/// metric. Ordered by metric (as listed in `metrics`), then `all`, then slice values.
pub fn expand<'a>(
    rules: &'a [Rule],
    values: &BTreeSet<SliceValue>,
    metrics: &[Metric],
) -> Vec<Check<'a>> {
    let mut checks = Vec::new();
    // JudgedMetric estimates are checked on their own (`gate::calibration`).
    for rule in rules.iter().filter(|r| !matches!(r.metric, Metric::Ppi(_))) {
        match &rule.slice {
            Some(value) => checks.push(Check {
                rule,
                slice: Slice::Value(value.clone()),
            }),
            None => {
                checks.push(Check {
                    rule,
                    slice: Slice::All,
                });
                for value in values {
                    let overridden = rules
                        .iter()
                        .any(|r| r.metric == rule.metric && r.slice.as_ref() == Some(value));
                    if !overridden {
                        checks.push(Check {
                            rule,
                            slice: Slice::Value(value.clone()),
                        });
                    }
                }
            }
        }
    }
    let position = |m: &Metric| metrics.iter().position(|x| x == m).unwrap_or(usize::MAX);
    checks.sort_by(|a, b| {
        (position(&a.rule.metric), &a.slice).cmp(&(position(&b.rule.metric), &b.slice))
    });
    checks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Limits;

    fn rule(metric: &str, slice: Option<(&str, &str)>) -> Rule {
        Rule {
            metric: metric.parse().unwrap(),
            slice: slice.map(|(f, v)| SliceValue {
                field: f.into(),
                value: v.into(),
            }),
            limits: Limits {
                max_drop: Some(0.1),
                ..Limits::default()
            },
        }
    }

    #[test]
    fn a_field_with_more_values_than_the_documented_number_is_warned_about() {
        let values = |field: &'static str, n: usize| {
            (0..n).map(move |i| SliceValue {
                field: field.into(),
                value: format!("v{i}"),
            })
        };
        let few: BTreeSet<SliceValue> = values("doc", MANY_SLICE_VALUES).collect();
        assert!(many_values_warnings(&few).is_empty());
        let many: BTreeSet<SliceValue> = values("doc", MANY_SLICE_VALUES + 1)
            .chain(values("class", 4))
            .collect();
        let warnings = many_values_warnings(&many);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("slice field `doc` has 1001 values (more than 1000)"),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn slice_rules_override_tier_wide_rules_and_order_is_stable() {
        let rules = [
            rule("mrr", None),
            rule("recall@5", None),
            rule("recall@5", Some(("class", "paraphrased"))),
        ];
        let values: BTreeSet<SliceValue> = [("class", "literal"), ("class", "paraphrased")]
            .iter()
            .map(|&(f, v)| SliceValue {
                field: f.into(),
                value: v.into(),
            })
            .collect();
        let metrics: Vec<Metric> = ["recall@5", "mrr"]
            .iter()
            .map(|m| m.parse().unwrap())
            .collect();
        let checks = expand(&rules, &values, &metrics);
        let names: Vec<String> = checks.iter().map(Check::name).collect();
        assert_eq!(
            names,
            [
                "recall@5 [all]",
                "recall@5 [class=literal]",
                "recall@5 [class=paraphrased]",
                "mrr [all]",
                "mrr [class=literal]",
                "mrr [class=paraphrased]",
            ]
        );
        assert_eq!(
            checks[2].rule.slice.as_ref().unwrap().value,
            "paraphrased",
            "the slice rule, not the general one"
        );
        assert!(checks[1].rule.slice.is_none());
    }
}
