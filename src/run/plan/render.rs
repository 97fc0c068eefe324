//! `ragate plan` for people (a table with notes) and for machines (`--format json`, the
//! `ragate-plan/1` document).

use super::estimate::{Line, Total};
use super::{BudgetView, Plan, SourceKind};
use crate::report::columns;

/// A cost as printed: 0, 2 decimals from 1 on, 6 below (a run of cheap calls costs fractions
/// of a cent).
pub(super) fn money(cost: f64) -> String {
    if cost == 0.0 {
        "0".to_string()
    } else if cost >= 1.0 {
        format!("{cost:.2}")
    } else {
        format!("{cost:.6}")
    }
}

fn seconds(seconds: f64) -> String {
    format!("{seconds:.1} s")
}

fn known<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

const HEADER: [&str; 12] = [
    "judge",
    "kind",
    "support",
    "relevance",
    "claims",
    "embed",
    "tasks",
    "cached",
    "calls",
    "tokens in",
    "tokens out",
    "cost",
];

fn row(line: &Line) -> Vec<String> {
    vec![
        line.judge.clone(),
        line.kind.clone(),
        line.support.to_string(),
        line.relevance.to_string(),
        line.decompositions.to_string(),
        line.embeddings.to_string(),
        line.tasks.to_string(),
        known(line.cache_hits),
        line.calls.to_string(),
        known(line.input_tokens),
        known(line.output_tokens),
        known(line.cost.map(money)),
        known(line.seconds.map(seconds)),
    ]
}

/// The plan as a table: where the answers come from, one row per judge and a total, the wall
/// time, the budget, and notes on what is not known.
pub(crate) fn table(plan: &Plan) -> String {
    let mut out = format!(
        "ragate plan: tier `{}`: {} queries",
        plan.tier, plan.queries
    );
    if let Some(answers) = plan.answers {
        out.push_str(&format!(", {answers} answers to judge"));
    }
    match (&plan.source.path, plan.source.kind) {
        (Some(path), SourceKind::Baseline) => {
            out.push_str(&format!(" (estimated from the baseline {path})"));
        }
        (Some(path), _) => out.push_str(&format!(" (from {path})")),
        _ => {}
    }
    if plan.runs > 1 || plan.judge_repeats > 1 {
        out.push_str(&format!(
            "; {} runs, judges asked {} times",
            plan.runs, plan.judge_repeats
        ));
    }
    out.push('\n');
    if let Some(reason) = &plan.source.reason {
        out.push_str(&format!("unknown: {reason}\n"));
    }
    if let Some(total) = &plan.total {
        out.push_str(&judges_table(plan, total));
    }
    if let Some(budget) = &plan.budget {
        out.push_str(&budget_line(budget));
    }
    for note in &plan.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// One row per judge and the total, with the wall time.
fn judges_table(plan: &Plan, total: &Total) -> String {
    let mut rows: Vec<Vec<String>> = vec![
        HEADER
            .iter()
            .chain(["wall"].iter())
            .map(|h| h.to_string())
            .collect(),
    ];
    rows.extend(plan.judges.iter().map(row));
    let at_least = if total.at_least { ">=" } else { "" };
    rows.push(vec![
        "total".to_string(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        total.tasks.to_string(),
        known(total.cache_hits),
        format!("{at_least}{}", total.calls),
        total.input_tokens.to_string(),
        total.output_tokens.to_string(),
        known(total.cost.map(money)),
        known(total.seconds.map(seconds)),
    ]);
    columns::table(&rows, 2)
}

/// The budget's limits and whether the plan is within them.
fn budget_line(budget: &BudgetView) -> String {
    let mut limits = Vec::new();
    if let Some(max) = budget.max_calls {
        limits.push(format!("max_calls {max}"));
    }
    if let Some(max) = budget.max_cost {
        limits.push(format!("max_cost {max}"));
    }
    let verdict = match budget.within {
        Some(true) => "within",
        Some(false) => "OVER: the gate refuses this run before its first judge call",
        None => "not known",
    };
    format!(
        "budget ({}): {}: {verdict}\n",
        budget.key,
        limits.join(", ")
    )
}

/// The plan as one JSON document (`ragate-plan/1`).
pub(crate) fn json(plan: &Plan) -> String {
    let mut text = crate::json_text::pretty(plan);
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::plan::{FORMAT, Source};

    #[test]
    fn money_keeps_small_costs_readable() {
        assert_eq!(money(0.0), "0");
        assert_eq!(money(1.234), "1.23");
        assert_eq!(money(0.000_123_4), "0.000123");
    }

    #[test]
    fn a_plan_without_answers_says_why_and_prints_no_numbers() {
        let plan = Plan {
            format: FORMAT,
            tier: "smoke".to_string(),
            source: Source {
                kind: SourceKind::None,
                path: None,
                reason: Some("no baseline".to_string()),
            },
            queries: 3,
            answers: None,
            runs: 1,
            judge_repeats: 1,
            judges: Vec::new(),
            total: None,
            budget: None,
            notes: Vec::new(),
        };
        assert_eq!(
            table(&plan),
            "ragate plan: tier `smoke`: 3 queries\nunknown: no baseline\n"
        );
        let document: serde_json::Value = serde_json::from_str(&json(&plan)).unwrap();
        assert_eq!(document["format"], "ragate-plan/1");
        assert_eq!(document["total"], serde_json::Value::Null);
        assert_eq!(document["source"]["reason"], "no baseline");
    }

    #[test]
    fn columns_align_names_left_and_numbers_right() {
        let rows = vec![
            vec!["judge".to_string(), "kind".to_string(), "calls".to_string()],
            vec!["llm".to_string(), "openai".to_string(), "7".to_string()],
        ];
        assert_eq!(
            columns::table(&rows, 2),
            "judge  kind    calls\nllm    openai      7\n"
        );
    }
}
