//! The report's section on failing and inconclusive checks: the distribution of their per-query
//! deltas and the queries that got worse, with a word diff of each changed answer.

use maud::{Markup, PreEscaped, html};
use similar::{ChangeTag, TextDiff};

use super::{Page, charts, check_status, number, signed};
use crate::baseline::results::{QueryRecord, Results};
use crate::error::Result;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family, QueryDrop};
use crate::metrics::metric::Metric;
use crate::metrics::retrieval::Direction;

/// Whether a query with these slice values is in `slice` (`all` or `field=value`).
fn in_slice(slice: &str, query: &QueryRecord) -> bool {
    match slice.split_once('=') {
        None => slice == "all",
        Some((field, value)) => query.slices.get(field).map(String::as_str) == Some(value),
    }
}

/// `current - baseline` per query of the check's slice that has the metric in both runs.
pub(super) fn paired_deltas(
    outcome: &CheckOutcome,
    baseline: &Results,
    current: &Results,
) -> Vec<f64> {
    current
        .queries
        .iter()
        .filter(|(_, now)| in_slice(&outcome.slice, now))
        .filter_map(|(qid, now)| {
            let before = baseline.queries.get(qid)?.metrics.get(&outcome.metric)?;
            Some(now.metrics.get(&outcome.metric)? - before)
        })
        .collect()
}

/// The answer's word diff: removed words struck through, added words marked.
fn answer_diff(old: &str, new: &str) -> Markup {
    let diff = TextDiff::from_words(old, new);
    html! {
        div class="diff" {
            @for change in diff.iter_all_changes() {
                @match change.tag() {
                    ChangeTag::Equal => (change.value()),
                    ChangeTag::Delete => del { (change.value()) },
                    ChangeTag::Insert => ins { (change.value()) },
                }
            }
        }
    }
}

fn worst_table(worst: &[QueryDrop]) -> Markup {
    html! {
        div class="scroll" {
            table class="worst" {
                thead { tr {
                    th { "query" } th class="num" { "baseline" } th class="num" { "current" } th { "what changed" }
                } }
                tbody {
                    @for q in worst {
                        tr {
                            td {
                                code { (q.qid) }
                                @if let Some(text) = &q.query { div class="query" { (text) } }
                            }
                            td class="num" { (number(q.baseline)) }
                            td class="num" { (number(q.current)) @if q.hit_to_miss { " " span class="pill status-fail" { "hit → miss" } } }
                            td {
                                @if let Some((old, new)) = &q.answers { (answer_diff(old, new)) }
                                @for line in q.details.iter().filter(|l| !(q.answers.is_some() && l.starts_with("answer: "))) {
                                    div class="detail" { (line) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn block(outcome: &CheckOutcome, page: &Page<'_>) -> Result<Markup> {
    let deltas = paired_deltas(outcome, page.baseline, page.current);
    let worse = match outcome.metric.parse::<Metric>().map(Metric::direction) {
        Ok(Direction::LowerIsBetter) => 1.0,
        _ => -1.0,
    };
    let tolerated = outcome.limit.map(|limit| worse * limit);
    let chart = if deltas.is_empty() {
        None
    } else {
        Some(charts::deltas(
            &format!("per-query deltas of {}", outcome.name),
            &deltas,
            tolerated,
        )?)
    };
    Ok(html! {
        article class={ "check status-" (check_status(outcome)) } {
            h3 {
                code { (outcome.name) } " "
                span class={ "pill status-" (check_status(outcome)) } { (check_status(outcome)) }
            }
            p { (outcome.verdict) }
            @if let Some(svg) = chart {
                figure {
                    (PreEscaped(svg))
                    figcaption {
                        (deltas.len()) " paired queries, " (outcome.worse_count) " worse. Grey line: no change; green: the mean delta ("
                        (signed(outcome.delta)) ")"
                        @if let Some(t) = tolerated { "; red: the mean change the rule tolerates (" (signed(t)) ")" }
                        "."
                    }
                }
            }
            @if !outcome.worst.is_empty() {
                h4 { "Queries that got worse, worst first" }
                (worst_table(&outcome.worst))
            }
        }
    })
}

/// The section, or None when every check passed.
pub(super) fn section(page: &Page<'_>) -> Result<Option<Markup>> {
    let failing: Vec<&CheckOutcome> = page
        .report
        .outcomes
        .iter()
        .filter(|o| matches!(o.family, Family::Primary | Family::Slices))
        .filter(|o| matches!(o.status, CheckStatus::Fail | CheckStatus::Inconclusive))
        .collect();
    if failing.is_empty() {
        return Ok(None);
    }
    let blocks = failing
        .into_iter()
        .map(|o| block(o, page))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(html! {
        section id="failing" {
            h2 { "Failing and inconclusive checks" }
            @for b in blocks { (b) }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_diff_marks_words_and_escapes_them() {
        let html = answer_diff("The cat sat", "The <dog> sat").into_string();
        assert_eq!(
            html,
            r#"<div class="diff">The <del>cat</del><ins>&lt;dog&gt;</ins> sat</div>"#
        );
    }

    #[test]
    fn slices_are_all_or_one_field_value() {
        let mut query = QueryRecord::default();
        query.slices.insert("class".into(), "a=b".into());
        assert!(in_slice("all", &query));
        assert!(in_slice("class=a=b", &query));
        assert!(!in_slice("class=a", &query));
        assert!(!in_slice("other=a=b", &query));
    }
}
