//! `gate.budget`: the gate plans the judging of its run's answers (exactly: the cache is looked
//! up by the keys the judges use) and refuses a run over `max_calls` or `max_cost` before the
//! first judge call, never mid-run.

use std::path::Path;

use crate::input::run::RunQuery;

use super::estimate::{self, Askings, Line, Lookup, Total};
use super::{judging, read_native};
use crate::config::locate;
use crate::config::{Budget, Config, Tier};
use crate::error::{Error, Result};
use crate::input::corpus;
use crate::input::qrels::Qrels;
use crate::judge::events::Events;
use crate::term;

/// Whether `total` fits `budget` (None: its cost is not known).
pub(super) fn within(budget: &Budget, total: &Total) -> Option<bool> {
    if budget.max_calls.is_some_and(|max| total.calls > max) {
        return Some(false);
    }
    match budget.max_cost {
        None => Some(true),
        Some(max) => total.cost.map(|cost| cost <= max),
    }
}

/// Before the first judge call of a gate run of `tier` on the run at `run` (its answers known):
/// an error naming the budget, the planned calls or cost and how to raise it when the run would
/// go over `tier.budget`; a note with the planned numbers when it fits.
pub(crate) fn check(config: &Config, tier: &Tier, qrels: &Qrels, run: &Path) -> Result<()> {
    let Some(budget) = &tier.budget else {
        return Ok(());
    };
    let Some(queries) = read_native(run)? else {
        return Ok(()); // a TREC run: nothing is judged
    };
    let lines = planned_lines(config, tier, qrels, (run, queries))?;
    let total = estimate::total(&lines);
    refuse_over(config, tier, budget, &lines, &total)?;
    term::note(format!(
        "budget ({}): this run plans {}{} judge calls{}",
        budget.key,
        if total.at_least { "at least " } else { "" },
        total.calls,
        total
            .cost
            .map(|cost| format!(", about {}", super::render::money(cost)))
            .unwrap_or_default()
    ));
    Ok(())
}

/// The plan's lines for the run at `run` (None: a TREC run, nothing is judged): which judges,
/// and whether the embeddings endpoint, the run will call, and how often (the cache looked up).
pub(crate) fn run_lines(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    run: &Path,
) -> Result<Option<Vec<Line>>> {
    let Some(queries) = read_native(run)? else {
        return Ok(None);
    };
    planned_lines(config, tier, qrels, (run, queries)).map(Some)
}

/// The plan's lines for the run's answers (`run`: its file and queries), with the cache looked
/// up read-only and every asking of `repeats:` and `judge_repeats:` counted.
fn planned_lines(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    run: (&Path, Vec<RunQuery>),
) -> Result<Vec<Line>> {
    let corpus = corpus::read_optional(config.corpus.as_deref())?;
    let cache = crate::run::config_judge::read_only_cache(config)?;
    let clients = config.judge_clients(&Events::ignored());
    let judging = judging(
        config,
        tier,
        qrels,
        run,
        &clients,
        corpus.as_ref(),
        cache.as_ref(),
    )?;
    let askings = Askings {
        runs: tier.repeats,
        judge_repeats: tier.judge_repeats,
    };
    let lookup = Lookup::Cache(cache.as_ref());
    estimate::lines((config, tier), &clients, &judging, lookup, askings)
}

/// An error naming the budget, the planned calls or cost and how to raise it when `total` goes
/// over `budget`.
fn refuse_over(
    config: &Config,
    tier: &Tier,
    budget: &Budget,
    lines: &[Line],
    total: &Total,
) -> Result<()> {
    let over = |field: &str, message: String| {
        let error = Error::config(&config.path, format!("{}.{field}", budget.key), message);
        locate::locate_in_file(error, &config.path)
    };
    let how = |field: &str| {
        format!(
            "nothing was asked; raise `{field}` in `{}`, or fill the judge cache first; \
             `ragate plan --tier {}` shows the plan",
            budget.key, tier.name
        )
    };
    if let Some(max) = budget.max_calls
        && total.calls > max
    {
        return Err(over(
            "max_calls",
            format!(
                "this run needs {} judge calls ({}), over the budget of {max}: {}",
                total.calls,
                breakdown(lines),
                how("max_calls")
            ),
        ));
    }
    if let Some(max) = budget.max_cost {
        let Some(cost) = total.cost else {
            return Err(over(
                "max_cost",
                format!(
                    "the cost of this run's calls to {} is not known: set their \
                     `price_per_1k_tokens: {{ input: ..., output: ... }}`",
                    unpriced(lines)
                ),
            ));
        };
        if cost > max {
            return Err(over(
                "max_cost",
                format!(
                    "this run's {} judge calls ({}) cost about {} (estimated from the prompts' \
                     sizes), over the budget of {max}: {}",
                    total.calls,
                    breakdown(lines),
                    super::render::money(cost),
                    how("max_cost")
                ),
            ));
        }
    }
    Ok(())
}

/// The judges that are called, with known tokens but no price, as `` `llm`, `other` ``.
fn unpriced(lines: &[Line]) -> String {
    let unpriced: Vec<String> = lines
        .iter()
        .filter(|l| l.calls > 0 && l.input_tokens.is_some() && l.cost.is_none())
        .map(|l| format!("`{}`", l.judge))
        .collect();
    unpriced.join(", ")
}

/// The calls per judge, `llm: 16 calls for 16 of 20 tasks`.
fn breakdown(lines: &[Line]) -> String {
    let parts: Vec<String> = lines
        .iter()
        .filter(|l| l.calls > 0)
        .map(|l| {
            let asked = l.tasks - l.cache_hits.unwrap_or(0);
            format!(
                "`{}`: {} calls for {asked} of {} tasks not in the cache",
                l.judge, l.calls, l.tasks
            )
        })
        .collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(calls: u64, cost: Option<f64>) -> Total {
        Total {
            tasks: 0,
            cache_hits: None,
            calls,
            at_least: false,
            input_tokens: 0,
            output_tokens: 0,
            cost,
            seconds: None,
        }
    }

    #[test]
    fn a_run_fits_when_its_calls_and_known_cost_do() {
        let budget = |max_calls, max_cost| Budget {
            max_calls,
            max_cost,
            key: "gate.budget".to_string(),
        };
        assert_eq!(
            within(&budget(Some(10), None), &total(10, None)),
            Some(true)
        );
        assert_eq!(
            within(&budget(Some(10), None), &total(11, None)),
            Some(false)
        );
        assert_eq!(
            within(&budget(None, Some(1.0)), &total(99, Some(1.0))),
            Some(true)
        );
        assert_eq!(
            within(&budget(None, Some(1.0)), &total(99, Some(1.01))),
            Some(false)
        );
        assert_eq!(
            within(&budget(None, Some(1.0)), &total(1, None)),
            None,
            "a cost not known"
        );
        assert_eq!(
            within(&budget(Some(0), Some(1.0)), &total(1, None)),
            Some(false)
        );
    }
}
