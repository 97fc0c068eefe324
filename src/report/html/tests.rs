//! Tests of the page's parts: the checks table folds passing slices only, numbers without a value
//! read as a dash, and `--out` recognises its own older reports.

use super::*;
use crate::config::InconclusivePolicy;

fn outcome(name: &str, family: Family, status: CheckStatus) -> CheckOutcome {
    let (metric, slice) = name.split_once(' ').unwrap();
    let mut o = CheckOutcome::bare(
        name.to_string(),
        metric.to_string(),
        slice.trim_matches(['[', ']']).to_string(),
        family,
    );
    o.status = status;
    o.verdict = format!("{name}: verdict");
    (o.baseline_mean, o.current_mean, o.delta, o.n) = (0.8, 0.7, -0.1, 40);
    o
}

fn report(outcomes: Vec<CheckOutcome>) -> GateReport {
    GateReport {
        outcomes,
        paired_queries: 40,
        ..GateReport::without_checks("nightly", RunStatus::Regression, InconclusivePolicy::Pass)
    }
}

#[test]
fn passing_slice_checks_are_folded_and_the_others_shown() {
    let html = checks_section(&report(vec![
        outcome("recall@5 [all]", Family::Primary, CheckStatus::Pass),
        outcome("recall@5 [class=a]", Family::Slices, CheckStatus::Fail),
        outcome("recall@5 [class=b]", Family::Slices, CheckStatus::Pass),
        outcome("recall@5 [class=c]", Family::Slices, CheckStatus::Improved),
    ]))
    .into_string();
    let folded = &html[html.find("<details>").expect("a fold")..];
    assert!(folded.contains("2 passing slice checks"), "{html}");
    assert!(folded.contains("recall@5 [class=b]") && folded.contains("recall@5 [class=c]"));
    assert!(
        !folded.contains("recall@5 [class=a]"),
        "the failing slice is not folded"
    );
    let shown = &html[..html.find("<details>").unwrap()];
    assert!(shown.contains("recall@5 [all]") && shown.contains("recall@5 [class=a]"));
    assert!(shown.contains(r#"<tr class="status-fail">"#), "{shown}");

    let whole_tier_only = checks_section(&report(vec![outcome(
        "mrr [all]",
        Family::Primary,
        CheckStatus::Pass,
    )]))
    .into_string();
    assert!(!whole_tier_only.contains("<details>"), "{whole_tier_only}");
}

#[test]
fn missing_numbers_read_as_a_dash() {
    assert_eq!(number(f64::NAN), "–");
    assert_eq!(signed(f64::INFINITY), "–");
    assert_eq!(number(0.12345), "0.1235");
    assert_eq!(signed(0.5), "+0.5000");
    assert_eq!(number(-1e-17), "0.0000", "no negative zero");
    assert_eq!(signed(-0.0), "+0.0000");
    assert_eq!(signed(-0.00006), "-0.0001");
    assert_eq!(
        clamped((-0.2, 1.3), Some(&(0.0..=1.0))),
        (0.0, 1.0),
        "clamped to the metric's range"
    );
    assert_eq!(clamped((-0.2, 1.3), None), (-0.2, 1.3));
}

#[test]
fn only_a_page_of_this_module_counts_as_an_older_report() {
    let page = html! {
        (DOCTYPE)
        html { head { meta name="generator" content=(GENERATOR); } }
    }
    .into_string();
    assert!(is_report(&page), "{page}");
    assert!(!is_report("<!DOCTYPE html><html><head><title>mine</title>"));
    assert!(!is_report(
        r#"notes <!DOCTYPE html><meta name="generator" content="ragate report">"#
    ));
}
