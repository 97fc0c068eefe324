//! The report's section on failing and inconclusive checks: the distribution of their per-query
//! deltas and the queries that got worse, with a word diff of each changed answer.

use maud::{Markup, PreEscaped, html};
use similar::{ChangeTag, TextDiff};

use super::shown::Shown;
use super::{Page, charts, check_status, number, signed};
use crate::baseline::results::{QueryRecord, Results};
use crate::error::Result;
use crate::gate::verdict::{CheckOutcome, CheckStatus, Family};
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

/// Below this similarity (similar's ratio over words) an answer counts as rewritten, and the
/// two answers are shown whole rather than as a word diff.
const REWRITTEN_BELOW: f32 = 0.5;

/// The answer's word diff: removed words struck through, added words marked; a rewritten answer
/// as its two versions. Both answers are redacted whole before the diff cuts them into runs (a
/// secret split across runs would be found in none of them).
pub(super) fn answer_diff(old: &str, new: &str) -> Markup {
    let (old, new) = (crate::secrets::redact(old), crate::secrets::redact(new));
    let (old, new) = (old.as_ref(), new.as_ref());
    let diff = TextDiff::from_words(old, new);
    if diff.ratio() < REWRITTEN_BELOW {
        return html! {
            div class="diff" {
                div { span class="side" { "before: " } del { (Shown(old)) } }
                div { span class="side" { "now: " } ins { (Shown(new)) } }
            }
        };
    }
    html! {
        div class="diff" {
            @for (tag, text) in crate::gate::word_runs(&diff) {
                @match tag {
                    ChangeTag::Equal => (Shown(&text)),
                    ChangeTag::Delete => del { (Shown(&text)) },
                    ChangeTag::Insert => ins { (Shown(&text)) },
                }
            }
        }
    }
}

/// The depth whose ranking a metric looks at: its `@k`, else 10.
fn depth(metric: &str) -> usize {
    metric
        .rsplit_once('@')
        .and_then(|(_, k)| k.parse().ok())
        .unwrap_or(10)
}

/// The top of the ranking before and now: ids that left the top struck through (before), ids
/// that entered it marked (now).
fn ranking_change(before: &[String], now: &[String], k: usize) -> Markup {
    let (before, now) = (&before[..before.len().min(k)], &now[..now.len().min(k)]);
    html! {
        div class="ranking" {
            span class="side" { "top " (k) " before: " }
            @for id in before {
                @if now.contains(id) { code { (Shown(id)) } } @else { del { code { (Shown(id)) } } }
                " "
            }
        }
        div class="ranking" {
            span class="side" { "now: " }
            @for id in now {
                @if before.contains(id) { code { (Shown(id)) } } @else { ins { code { (Shown(id)) } } }
                " "
            }
        }
    }
}

fn worst_table(outcome: &CheckOutcome, page: &Page<'_>, baseline: &Results) -> Markup {
    let worst = &outcome.worst;
    let rankings = |qid: &str| {
        let before = &baseline.queries.get(qid)?.retrieved;
        let now = &page.current.queries.get(qid)?.retrieved;
        (before != now && !(before.is_empty() && now.is_empty())).then_some((before, now))
    };
    let answer_metric = worst
        .iter()
        .any(|q| q.answers.is_some() || !q.details.is_empty());
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
                                code { (Shown(&q.qid)) }
                                @if let Some(text) = &q.query { div class="query" { (Shown(text)) } }
                            }
                            td class="num" data-label="baseline" { (number(q.baseline)) }
                            td class="num" data-label="now" { (number(q.current)) @if q.hit_to_miss { " " span class="pill status-fail" { "hit → miss" } } }
                            td {
                                @if !answer_metric {
                                    @if let Some((before, now)) = rankings(&q.qid) {
                                        (ranking_change(before, now, depth(&outcome.metric)))
                                    }
                                }
                                @if let Some((old, new)) = &q.answers { (answer_diff(old, new)) }
                                @for line in q.details.iter().filter(|l| !(q.answers.is_some() && l.starts_with("answer: "))) {
                                    div class="detail" { (Shown(line)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn block(outcome: &CheckOutcome, page: &Page<'_>, baseline: &Results) -> Result<Markup> {
    let deltas = paired_deltas(outcome, baseline, page.current);
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
        details class={ "check status-" (check_status(outcome)) } open[outcome.family == Family::Primary] {
            summary {
                code { (Shown(&outcome.name)) } " "
                span class={ "pill status-" (check_status(outcome)) } { (check_status(outcome)) }
                " " span class="delta" { (number(outcome.baseline_mean)) " → " (number(outcome.current_mean)) }
            }
            p { (Shown(&outcome.verdict)) }
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
                (worst_table(outcome, page, baseline))
            }
        }
    })
}

/// The section, or None when every check passed.
pub(super) fn section(page: &Page<'_>) -> Result<Option<Markup>> {
    let Some(baseline) = page.baseline else {
        return Ok(None);
    };
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
        .map(|o| block(o, page, baseline))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(html! {
        section id="failing" {
            h2 { "Failing and inconclusive checks" }
            p { "The whole-tier checks are open; click a slice check to see its queries." }
            @for b in blocks { (b) }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_diff_marks_words_and_escapes_them() {
        let html = answer_diff("The cat sat on the mat", "The <dog> sat on the mat").into_string();
        assert_eq!(
            html,
            r#"<div class="diff">The <del>cat</del><ins>&lt;dog&gt;</ins> sat on the mat</div>"#
        );
        let phrase = answer_diff("a b the cat sat here", "a b one dog lay here").into_string();
        assert_eq!(
            phrase,
            r#"<div class="diff">a b <del>the cat sat</del><ins>one dog lay</ins> here</div>"#
        );
        let rewritten = answer_diff(
            "Paris, since 987.",
            "It <b>depends</b> on which era you mean",
        )
        .into_string();
        assert!(
            rewritten.contains(r#"<span class="side">before: </span><del>Paris, since 987.</del>"#)
                && rewritten
                    .contains("<ins>It &lt;b&gt;depends&lt;/b&gt; on which era you mean</ins>"),
            "{rewritten}"
        );
    }

    #[test]
    fn a_ranking_change_marks_ids_that_left_or_entered_the_top() {
        let ids = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        let html = ranking_change(&ids("a b c"), &ids("c a x"), 2).into_string();
        assert!(html.contains("<del><code>b</code></del>"), "{html}");
        assert!(html.contains("<ins><code>c</code></ins>"), "{html}");
        assert!(
            html.contains("<code>a</code>") && !html.contains("<ins><code>a"),
            "{html}"
        );
        assert!(!html.contains(">x<"), "x is below the depth: {html}");
        assert_eq!(depth("ndcg@10"), 10);
        assert_eq!(depth("recall@5"), 5);
        assert_eq!(depth("mrr"), 10);
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
