//! The summary's first line: the run's status, the check that decided it (the worst failure, the
//! inconclusive check furthest beyond its limit, a baseline that no longer fits) and the tier.

use super::*;

/// `worst ndcg@10 [class=literal] -0.6188 (limit -0.0479)`; for a broken floor
/// `worst recall@5 [all] 0.6667 (min 0.9, 60 queries)`; for a broken must-pass query its verdict
/// (`must-pass q17 broke: recall@10 1.0000 -> 0.0000; lost its relevant document ...`).
fn worst_of(o: &CheckOutcome) -> String {
    if o.family == Family::MustPass {
        return verdict(o);
    }
    if let Some(floor) = broken_floor(o) {
        return format!(
            "worst {} {} ({}, {} queries)",
            inline(&o.name, TEXT_CHARS),
            value(floor.mean),
            floor_text(o, floor),
            floor.n
        );
    }
    let limit = match o.limit {
        Some(_) => format!(" (limit {})", signed_limit(o)),
        None => String::new(),
    };
    format!(
        "worst {} {}{limit}",
        inline(&o.name, TEXT_CHARS),
        signed(o.delta)
    )
}

/// The inconclusive checks, the furthest beyond (or least within) its limit first (ties by name).
fn inconclusive_by_excess(report: &GateReport) -> Vec<&CheckOutcome> {
    let mut checks: Vec<&CheckOutcome> = report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Inconclusive)
        .collect();
    checks.sort_by(|a, b| {
        excess(b)
            .total_cmp(&excess(a))
            .then_with(|| a.name.cmp(&b.name))
    });
    checks
}

/// What the headline says of the inconclusive checks (`count` of them): the one furthest beyond
/// its limit, how far past it the point estimate is, what the evidence bounds, and the cheapest
/// way to decide it ([`point_past_limit`]), and how many more there are.
fn undecided(report: &GateReport, count: usize) -> String {
    let Some(o) = inconclusive_by_excess(report).first().copied() else {
        return String::new();
    };
    let more = if count > 1 {
        format!(" ({} more in the details)", count - 1)
    } else {
        String::new()
    };
    format!("{}{more}", undecided_check(o))
}

/// One inconclusive check in a headline (see [`undecided`]).
fn undecided_check(o: &CheckOutcome) -> String {
    let name = inline(&o.name, TEXT_CHARS);
    if o.family == Family::Calibration || !o.delta.is_finite() || o.limit.is_none() {
        return format!(
            "{name} {} is not decided by its labels; more labels would decide it",
            value(o.current_mean)
        );
    }
    let limit = signed_limit(o);
    let delta = signed(o.delta);
    let worsening = if higher_is_better(&o.metric) {
        -o.delta
    } else {
        o.delta
    };
    let beyond = o.limit.is_some_and(|l| worsening > l);
    if o.proof.is_none() {
        return format!("{name} {}", point_past_limit(o));
    }
    let state = if beyond {
        format!("{delta} beyond its limit {limit}")
    } else {
        format!("{delta} within its limit {limit}, not proven")
    };
    let needed = match o.queries_needed {
        Some(QueriesNeeded::About(n)) => format!("about {n} paired queries would prove it"),
        Some(QueriesNeeded::Unrealistic) => QueriesNeeded::unrealistic_text("prove"),
        None if beyond => "no number of queries proves a change beyond its limit".to_string(),
        None => format!(
            "more paired queries would be needed to prove it (n = {})",
            o.n
        ),
    };
    format!("{name} {state}; {needed}")
}

/// The one headline line (no-break spaces inside `tier smoke` and `2 improved`, so a narrow
/// comment wraps it between its parts).
pub(super) fn headline(report: &GateReport) -> String {
    let counts = Counts::of(report);
    let total = counts.total;
    let (text, shown) = match report.status {
        RunStatus::Pass if counts.inconclusive > 0 => (
            format!(
                "{} of {total} checks passed, {} inconclusive: {}",
                counts.passed,
                counts.inconclusive,
                undecided(report, counts.inconclusive)
            ),
            CheckStatus::Inconclusive,
        ),
        RunStatus::Pass => (
            format!("{} of {total} checks passed", counts.passed),
            CheckStatus::Pass,
        ),
        RunStatus::Regression if counts.failed > 0 => (
            format!(
                "{} of {total} checks failed: {}",
                counts.failed,
                failing_by_excess(report)
                    .first()
                    .map_or(String::new(), |o| worst_of(o))
            ),
            CheckStatus::Fail,
        ),
        RunStatus::Regression => (
            format!(
                "{} of {total} checks not proven within their limits, which fails the run \
                 (`inconclusive: fail` requires proof): {}",
                counts.inconclusive,
                undecided(report, counts.inconclusive)
            ),
            CheckStatus::Inconclusive,
        ),
        RunStatus::Error | RunStatus::NoBaseline if misfit(report).is_some() => (
            format!(
                "not decided: the baseline no longer fits this tier ({}); the first warning \
                 names the command that replaces it",
                misfit(report).unwrap_or_default()
            ),
            CheckStatus::Error,
        ),
        RunStatus::Error | RunStatus::NoBaseline if counts.errors > 0 => (
            format!("{} of {total} checks could not be evaluated", counts.errors),
            CheckStatus::Error,
        ),
        RunStatus::Error | RunStatus::NoBaseline => (
            format!(
                "not decided: {} of {total} checks skipped, none of the `all` checks decided",
                counts.skipped
            ),
            CheckStatus::Skipped,
        ),
    };
    let extras = counts.extras(shown);
    let mark = report.verdict().mark();
    let compared = report
        .compared()
        .map(|c| format!(" · {c}"))
        .unwrap_or_default();
    format!(
        "**{mark} {text}{compared}**{extras} · tier\u{a0}{}\n\n",
        inline(&report.tier, TEXT_CHARS)
    )
}

/// How a baseline that no longer fits the tier misses it (`it shares 0 of 6 queries`, `it has
/// no values of recall@5`), None when it fits or there is none.
fn misfit(report: &GateReport) -> Option<String> {
    let pairing = report.pairing.as_ref().filter(|p| p.broken())?;
    let mut parts = Vec::new();
    if pairing.too_few() {
        parts.push(format!(
            "it shares {} of {} queries",
            pairing.shared_queries, pairing.queries
        ));
    }
    if !pairing.missing_metrics.is_empty() {
        let names: Vec<String> = pairing
            .missing_metrics
            .iter()
            .map(|m| inline(m, TEXT_CHARS))
            .collect();
        parts.push(format!("it has no values of {}", names.join(", ")));
    }
    Some(parts.join("; "))
}
