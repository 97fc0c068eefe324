//! Validation of the `gate:` blocks: the top-level block merged with a tier's, the decision
//! settings, and every rule (metric, slice, limits; floors on calibrated estimates).

use crate::config::raw::{
    Correction, Decision, InconclusivePolicy, RawGate, RawRule, SliceCorrection,
};
use crate::config::{GateSettings, Keys, Limits, Rule, SliceValue};
use crate::error::Result;
use crate::metrics::metric::AnswerMetric;
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::Direction;
use crate::suggest;

/// The top-level gate block with the keys a tier's block names replacing it.
pub(crate) fn merge_gate(top: &RawGate, tier: Option<&RawGate>) -> RawGate {
    let Some(tier) = tier else { return top.clone() };
    RawGate {
        decision: tier.decision.or(top.decision),
        drift: tier.drift.or(top.drift),
        alpha: tier.alpha.or(top.alpha),
        alpha_scope: tier.alpha_scope.or(top.alpha_scope),
        correction: tier.correction.or(top.correction),
        slice_correction: tier.slice_correction.or(top.slice_correction),
        inconclusive: tier.inconclusive.or(top.inconclusive),
        min_queries: tier.min_queries.or(top.min_queries),
        min_share: tier.min_share.or(top.min_share),
        resamples: tier.resamples.or(top.resamples),
        seed: tier.seed.or(top.seed),
        rules: tier.rules.clone().or_else(|| top.rules.clone()),
        budget: tier.budget.or(top.budget),
    }
}

/// What a tier's rules may name: the metrics the tier computes and the fields it is sliced by, with
/// the keys of the lists they come from (`metrics`, `slices`, or the tier's own
/// `tiers.NAME.metrics`, `tiers.NAME.slices`), named in errors.
pub(crate) struct RuleLists<'a> {
    pub metrics: &'a [Metric],
    pub metrics_key: &'a str,
    pub slices: &'a [String],
    pub slices_key: &'a str,
}

impl RuleLists<'_> {
    /// `the metrics list`, or `the tier's own metrics list (tiers.NAME.metrics)`.
    fn describe(key: &str, list: &str) -> String {
        if key == list {
            format!("the {list} list")
        } else {
            format!("the tier's own {list} list `{key}`")
        }
    }

    /// What to do when the top-level rule at `rule_key` names what the tier's own list at
    /// `list_key` leaves out: the tier needs its own rules (empty when the rule is the tier's).
    fn own_rules_hint(rule_key: &str, list_key: &str) -> String {
        let tier_key = list_key.rsplit_once('.').map(|(tier_key, _)| tier_key);
        match tier_key {
            Some(tier_key) if !rule_key.starts_with("tiers.") => format!(
                ": the tier's own list replaces the top-level one for it, so give the tier rules \
                 of its own (`{tier_key}.gate.rules`)"
            ),
            _ => String::new(),
        }
    }
}

pub(crate) fn validate_gate(
    keys: &Keys<'_>,
    tier_key: &str,
    rules_key: &str,
    gate: &RawGate,
    lists: &RuleLists<'_>,
) -> Result<GateSettings> {
    let metrics = lists.metrics;
    let alpha = gate.alpha.unwrap_or(0.05);
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(keys.error(
            format!("{tier_key}.gate.alpha"),
            format!("{alpha} is outside (0, 1)"),
        ));
    }
    let min_queries = gate.min_queries.unwrap_or(5);
    if min_queries == 0 {
        return Err(keys.error(
            format!("{tier_key}.gate.min_queries"),
            "0: expected at least 1",
        ));
    }
    let min_share = gate.min_share.unwrap_or(DEFAULT_MIN_SHARE);
    if !(min_share > 0.0 && min_share <= 1.0) {
        return Err(keys.error(
            format!("{tier_key}.gate.min_share"),
            format!("{min_share}: expected a share in (0, 1], e.g. 0.9"),
        ));
    }
    let decision = gate.decision.unwrap_or(Decision::Significant);
    // The exact test on k queries cannot give p below 2^-k: below this size, a check that is
    // tested could never fail, even alone.
    let workable = smallest_workable_size(alpha);
    if decision == Decision::Significant && min_queries < workable {
        return Err(keys.error(
            format!("{tier_key}.gate.min_queries"),
            format!(
                "{min_queries} with alpha {alpha}: a check of {min_queries} queries can never reach \
                 p <= {alpha} (its smallest p is 2^-{min_queries} = {:.4}): expected at least \
                 {workable}, or `decision: point`",
                0.5f64.powi(min_queries as i32)
            ),
        ));
    }
    let notices: Vec<String> = gate
        .resamples
        .map(|_| {
            "`resamples` in a gate block no longer has any effect: p-values are exact (fewer \
             than 30 paired queries) or analytic, so no verdict depends on resampling; remove the \
             key"
            .to_string()
        })
        .into_iter()
        .collect();
    let raw_rules = gate.rules.as_deref().unwrap_or_default();
    if raw_rules.is_empty() {
        return Err(keys.error(
            rules_key,
            "no rules: expected at least one, e.g. { metric: recall@5, max_drop: 0.02 }",
        ));
    }
    let mut rules: Vec<Rule> = Vec::new();
    for (index, raw) in raw_rules.iter().enumerate() {
        let rule = validate_rule(keys, &format!("{rules_key}[{index}]"), raw, lists)?;
        if rules
            .iter()
            .any(|r| r.metric == rule.metric && r.slice == rule.slice)
        {
            let slice = rule
                .slice
                .as_ref()
                .map_or("all slices".to_string(), ToString::to_string);
            return Err(keys.error(
                format!("{rules_key}[{index}]"),
                format!(
                    "a second rule for {} on {slice}: expected one rule per metric and slice",
                    rule.metric
                ),
            ));
        }
        rules.push(rule);
    }
    if gate.inconclusive == Some(InconclusivePolicy::Fail)
        && let Some((index, key)) = rules
            .iter()
            .enumerate()
            .find_map(|(index, rule)| Some((index, rule.limits.zero_change_limit()?)))
    {
        return Err(keys.error(
            format!("{rules_key}[{index}].{key}"),
            format!(
                "0 with `inconclusive: fail`, which passes a check only when the data prove its \
                 change within the limit: no run that leaves {} unchanged can prove a change \
                 below 0, so the rule fails every such run: expected the smallest change that \
                 matters as the limit, or `inconclusive: pass`",
                rules[index].metric
            ),
        ));
    }
    if let Some(rule) = default_empty_answers_rule(metrics, &rules) {
        rules.push(rule);
    }
    Ok(GateSettings {
        decision,
        alpha,
        alpha_scope: gate.alpha_scope.unwrap_or_default(),
        correction: gate.correction.unwrap_or(Correction::Holm),
        slice_correction: gate.slice_correction.unwrap_or(SliceCorrection::Holm),
        inconclusive: gate.inconclusive.unwrap_or(InconclusivePolicy::Pass),
        min_queries,
        min_share,
        seed: gate.seed.unwrap_or(42),
        rules,
        notices,
    })
}

/// The share of a tier's queries the baseline should pair with (`gate.min_share`) before the
/// headline says that only part of the tier was compared.
pub const DEFAULT_MIN_SHARE: f64 = 0.9;

/// The tolerated rise of the share of empty answers under the default rule: 5 percentage points.
pub const DEFAULT_EMPTY_ANSWERS_MAX_INCREASE: f64 = 0.05;

/// The rule `{ metric: empty_answers, max_increase: 0.05 }` for a tier that computes
/// `empty_answers` (every config with an answer metric) and has no rule of its own for it on
/// `all`: empty answers are gated like any metric with a rule, so that `empty_answer: exclude`
/// (or a shorter `answer_length`) cannot hide a generator that stopped answering. A rule naming
/// `empty_answers` replaces it; one naming a slice overrides it on that slice.
pub(crate) fn default_empty_answers_rule(metrics: &[Metric], rules: &[Rule]) -> Option<Rule> {
    let computed = metrics.contains(&Metric::Answer(AnswerMetric::Empty));
    let own = rules
        .iter()
        .any(|r| r.metric == Metric::Answer(AnswerMetric::Empty) && r.slice.is_none());
    (computed && !own).then(|| Rule {
        metric: Metric::Answer(AnswerMetric::Empty),
        slice: None,
        limits: Limits {
            max_increase: Some(DEFAULT_EMPTY_ANSWERS_MAX_INCREASE),
            ..Limits::default()
        },
    })
}

/// The smallest k with 2^-k <= alpha: fewer paired queries can never be significant at alpha.
pub(crate) fn smallest_workable_size(alpha: f64) -> usize {
    (1..64).find(|&k| 0.5f64.powi(k) <= alpha).unwrap_or(64) as usize
}

fn validate_rule(keys: &Keys<'_>, key: &str, raw: &RawRule, lists: &RuleLists<'_>) -> Result<Rule> {
    let metrics = lists.metrics;
    let metrics_list = RuleLists::describe(lists.metrics_key, "metrics");
    let metric: Metric = raw
        .metric
        .parse()
        .map_err(|e| keys.error(format!("{key}.metric"), format!("{e}")))?;
    if let Metric::Ppi(calibrated) = metric {
        return validate_calibrated_rule(keys, key, raw, lists, calibrated.base()).map(|limits| {
            Rule {
                metric,
                slice: None,
                limits,
            }
        });
    }
    if !metrics.contains(&metric) {
        let names: Vec<String> = metrics.iter().map(ToString::to_string).collect();
        return Err(keys.error(
            format!("{key}.metric"),
            format!(
                "`{metric}` is not computed: expected one of {metrics_list} ({}){}",
                names.join(", "),
                RuleLists::own_rules_hint(key, lists.metrics_key)
            ),
        ));
    }
    let slice = match &raw.slice {
        None => None,
        Some(text) => Some(parse_slice(keys, key, text, lists)?),
    };
    Ok(Rule {
        metric,
        slice,
        limits: validate_limits(keys, key, raw, metric)?,
    })
}

/// A rule's `slice: field=value`, whose field must be one of the tier's slice fields.
fn parse_slice(
    keys: &Keys<'_>,
    key: &str,
    text: &str,
    lists: &RuleLists<'_>,
) -> Result<SliceValue> {
    let slices = lists.slices;
    let (field, value) = text
        .split_once('=')
        .filter(|(f, v)| !f.is_empty() && !v.is_empty())
        .ok_or_else(|| {
            keys.error(
                format!("{key}.slice"),
                format!("`{text}`: expected `field=value`, e.g. class=paraphrased"),
            )
        })?;
    if !slices.iter().any(|s| s == field) {
        return Err(keys.error(
            format!("{key}.slice"),
            suggest::did_you_mean(
                format!(
                    "`{field}` is not a slice field: expected one of {} ({}){}",
                    RuleLists::describe(lists.slices_key, "slices"),
                    slices.join(", "),
                    RuleLists::own_rules_hint(key, lists.slices_key)
                ),
                field,
                slices.iter().map(String::as_str),
            ),
        ));
    }
    Ok(SliceValue {
        field: field.to_string(),
        value: value.to_string(),
    })
}

/// The limits of a rule on `metric`: at least one, each in the metric's direction (`max_drop`
/// and friends for higher-is-better, `max_increase` and friends for lower-is-better), finite,
/// and non-negative except the absolute `min` and `max`.
fn validate_limits(keys: &Keys<'_>, key: &str, raw: &RawRule, metric: Metric) -> Result<Limits> {
    let limits = Limits {
        max_drop: raw.max_drop,
        max_drop_pct: raw.max_drop_pct,
        min: raw.min,
        max_increase: raw.max_increase,
        max_increase_pct: raw.max_increase_pct,
        max: raw.max,
    };
    let named = [
        ("max_drop", limits.max_drop),
        ("max_drop_pct", limits.max_drop_pct),
        ("min", limits.min),
        ("max_increase", limits.max_increase),
        ("max_increase_pct", limits.max_increase_pct),
        ("max", limits.max),
    ];
    let (allowed, direction_name): (&[&str], &str) = match metric.direction() {
        Direction::HigherIsBetter => (&["max_drop", "max_drop_pct", "min"], "higher-is-better"),
        Direction::LowerIsBetter => (
            &["max_increase", "max_increase_pct", "max"],
            "lower-is-better",
        ),
    };
    let mut any = false;
    for (name, value) in named {
        let Some(value) = value else { continue };
        if !allowed.contains(&name) {
            return Err(keys.error(
                format!("{key}.{name}"),
                format!(
                    "{metric} is {direction_name}: expected {}",
                    allowed.join(", ")
                ),
            ));
        }
        let non_negative = !matches!(name, "min" | "max");
        if !value.is_finite() || (non_negative && value < 0.0) {
            return Err(keys.error(
                format!("{key}.{name}"),
                format!(
                    "{value}: expected a finite{} number",
                    if non_negative { " non-negative" } else { "" }
                ),
            ));
        }
        if !non_negative {
            check_in_range(keys, &format!("{key}.{name}"), value, metric)?;
        }
        any = true;
    }
    if !any {
        return Err(keys.error(
            key,
            format!("no limit: expected at least one of {}", allowed.join(", ")),
        ));
    }
    Ok(limits)
}

/// An absolute limit (`min`, `max`) must lie in the values `metric` takes: a floor above them
/// could never pass, one below them never fail (`min: 1.5` on recall is a typo, not a rule).
fn check_in_range(keys: &Keys<'_>, key: &str, value: f64, metric: Metric) -> Result<()> {
    let Some(range) = metric.value_range() else {
        return Ok(());
    };
    if range.contains(&value) {
        return Ok(());
    }
    let shown = if *range.end() == f64::MAX {
        format!("[{}, ∞)", range.start())
    } else {
        format!("[{}, {}]", range.start(), range.end())
    };
    Err(keys.error(
        key,
        format!("{value} is outside the values of {metric}: expected a number in {shown}"),
    ))
}

/// A rule on a calibrated estimate: its base metric must be computed, and only `min` applies
/// (to the lower bound of the estimate's confidence interval), over all queries.
fn validate_calibrated_rule(
    keys: &Keys<'_>,
    key: &str,
    raw: &RawRule,
    lists: &RuleLists<'_>,
    base: Metric,
) -> Result<Limits> {
    if !lists.metrics.contains(&base) {
        return Err(keys.error(
            format!("{key}.metric"),
            format!(
                "`{}` needs `{base}` in {}",
                raw.metric,
                RuleLists::describe(lists.metrics_key, "metrics")
            ),
        ));
    }
    let others = [
        ("slice", raw.slice.is_some()),
        ("max_drop", raw.max_drop.is_some()),
        ("max_drop_pct", raw.max_drop_pct.is_some()),
        ("max_increase", raw.max_increase.is_some()),
        ("max_increase_pct", raw.max_increase_pct.is_some()),
        ("max", raw.max.is_some()),
    ];
    if let Some((name, _)) = others.iter().find(|(_, present)| *present) {
        return Err(keys.error(
            format!("{key}.{name}"),
            format!(
                "`{}` takes only `min` (a floor on its lower CI bound)",
                raw.metric
            ),
        ));
    }
    match raw.min {
        Some(min) if min.is_finite() => {
            check_in_range(keys, &format!("{key}.min"), min, base)?;
            Ok(Limits {
                min: Some(min),
                ..Limits::default()
            })
        }
        _ => Err(keys.error(
            key,
            format!(
                "`{}` needs `min`: a floor on the lower bound of its 95% CI",
                raw.metric
            ),
        )),
    }
}
