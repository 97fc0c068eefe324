//! Tests of the page's parts: the checks table folds passing slices only, numbers without a value
//! read as a dash, `--out` recognises its own older reports, and every text from data is redacted
//! on its raw form before it is escaped.

use super::*;
use crate::baseline::results::RunStatus;
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

/// A secret unique to these tests (the registry is process-wide), with characters that HTML and
/// JSON escape; [`SECRET_JSON`] is its JSON-escaped form.
const SECRET: &str = "sk-html-unit_7f3a9b12cd-\"q\"<x>";
const SECRET_JSON: &str = "sk-html-unit_7f3a9b12cd-\\\"q\\\"<x>";
/// The secret's distinctive middle: no 6 characters of it may be left in a page.
const SECRET_MIDDLE: &str = "html-unit_7f3a9b12cd";

/// Fails when `html` shows the secret in any form, whole or in part.
fn assert_no_secret(html: &str) {
    assert!(html.contains(crate::secrets::REDACTED), "{html}");
    let maud = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    for form in [
        SECRET.to_string(),
        SECRET_JSON.to_string(),
        maud(SECRET).replace('"', "&quot;"),
        maud(SECRET).replace('"', "&#34;"),
        maud(SECRET_JSON).replace('"', "&quot;"),
        maud(SECRET_JSON).replace('"', "&#34;"),
    ] {
        assert!(!html.contains(&form), "`{form}` is in the page: {html}");
    }
    let middle: Vec<char> = SECRET_MIDDLE.chars().collect();
    for part in middle.windows(6) {
        let part: String = part.iter().collect();
        assert!(
            !html.contains(&part),
            "`{part}` of the secret is in the page: {html}"
        );
    }
}

/// A run whose every text from data holds the secret, raw or JSON-escaped.
fn secret_results(answer: &str, retrieved: &[&str]) -> Results {
    let query = |n: usize| crate::baseline::results::QueryRecord {
        query: Some(format!("what is {SECRET_JSON}?")),
        slices: [("topic".to_string(), SECRET.to_string())].into(),
        metrics: [
            ("recall@5".to_string(), 0.5 + 0.1 * n as f64),
            ("faithfulness".to_string(), 0.9 - 0.1 * n as f64),
            ("answer_length".to_string(), 10.0 * n as f64),
            (format!("judge_{SECRET}"), 0.5),
        ]
        .into(),
        retrieved: retrieved.iter().map(|id| id.to_string()).collect(),
        answer: Some(answer.to_string()),
        ..Default::default()
    };
    let summary = crate::baseline::results::SliceSummary { mean: 0.7, n: 3 };
    Results {
        format: crate::baseline::results::FORMAT.to_string(),
        tier: format!("nightly-{SECRET}"),
        status: RunStatus::Regression,
        provenance: crate::baseline::results::Provenance {
            ragate_version: format!("9.9.9-{SECRET_JSON}"),
            config_hash: SECRET.to_string(),
            git_commit: Some(SECRET.to_string()),
            judges: [(format!("judge-{SECRET}"), format!("model {SECRET_JSON}"))].into(),
            ..Default::default()
        },
        metrics: vec!["recall@5".to_string(), format!("judge_{SECRET}")],
        summary: [
            (
                "all".to_string(),
                [(format!("judge_{SECRET}"), summary)].into(),
            ),
            (
                format!("topic={SECRET}"),
                [("recall@5".to_string(), summary)].into(),
            ),
        ]
        .into(),
        noise: None,
        baseline_mismatch: None,
        queries: (1..=3)
            .map(|n| (format!("q{n}-{SECRET}"), query(n)))
            .collect(),
    }
}

fn secret_report() -> GateReport {
    let drop = |answers: Option<(String, String)>| crate::gate::verdict::QueryDrop {
        qid: format!("q1-{SECRET}"),
        query: Some(format!("what is {SECRET}?")),
        baseline: 0.9,
        current: 0.1,
        hit_to_miss: true,
        details: vec![format!("claim lost support: {SECRET_JSON}")],
        answers,
    };
    let mut answer = outcome(
        &format!("faithfulness [topic={SECRET}]"),
        Family::Primary,
        CheckStatus::Inconclusive,
    );
    answer.verdict = format!("{} inconclusive: {SECRET_JSON}", answer.name);
    answer.limit = Some(0.05);
    answer.worst = vec![drop(Some((
        format!("The key is {SECRET} here and now"),
        format!("The key is {SECRET_JSON} here and now"),
    )))];
    let mut ranking = outcome(
        &format!("recall@5 [topic={SECRET}]"),
        Family::Slices,
        CheckStatus::Fail,
    );
    ranking.worst = vec![drop(None)];
    ranking.worst[0].details.clear();
    let mut report = report(vec![answer, ranking]);
    report.tier = format!("nightly-{SECRET}");
    report.reported = vec![crate::gate::reported::Reported {
        metric: format!("judge_{SECRET_JSON}"),
        n: 3,
        baseline: 0.5,
        current: 0.5,
        delta: 0.0,
    }];
    report.warnings = vec![format!("warning about {SECRET}"), SECRET_JSON.to_string()];
    report.notes = vec![format!("note about {SECRET}")];
    report.diagnoses = vec![format!("[topic={SECRET}] retrieval: {SECRET_JSON}")];
    report.causes = vec![crate::gate::causes::Cause {
        slice: format!("topic={SECRET}"),
        kind: crate::gate::causes::CauseKind::RetrievalLostEvidence,
        moves: Vec::new(),
        queries: 2,
        paired: 3,
        evidence: "lost their top relevant document",
        top_slice: Some((format!("topic={SECRET_JSON}"), 2)),
    }];
    report
}

#[test]
fn every_text_from_data_is_redacted_on_its_raw_form_before_it_is_escaped() {
    crate::secrets::register(SECRET);
    let current = secret_results(
        &format!("The key is {SECRET_JSON} here and now"),
        &[&format!("doc-{SECRET}"), "d2"],
    );
    let baseline = secret_results(
        &format!("The key is {SECRET} here and now"),
        &["d1", &format!("doc-{SECRET_JSON}")],
    );
    let report = secret_report();
    let estimate = crate::stats::ppi::PpiEstimate {
        estimate: 0.6,
        ci: (0.5, 0.7),
        lambda: 1.0,
        n_labelled: 3,
        n_total: 3,
    };
    let calibrations = [Calibration {
        metric: format!("judge_{SECRET}"),
        ppi: estimate,
        ppi_plus_plus: estimate,
        judge_mean: 0.5,
        stale: 0,
        agreement: crate::stats::agreement::Agreement {
            confusion: [2, 0, 0, 1],
            observed: 1.0,
            kappa: Some(1.0),
        },
        binary_labels: None,
    }];
    let gated = ["recall@5".to_string(), "faithfulness".to_string()];
    let record = |time: String| {
        Record::of(
            &current,
            crate::history::record::RecordInputs {
                gated: &gated,
                time,
                baseline_sha256: None,
                checks: Vec::new(),
                with_queries: false,
            },
        )
    };
    let history = History {
        dir: PathBuf::from(format!("/history/{SECRET}")),
        records: vec![record(format!("2026-{SECRET}"))],
        after_break: false,
        now: record(String::new()),
    };
    let results_path = PathBuf::from(format!("/runs/{SECRET_JSON}/current.json"));
    let page = Page {
        results_path: &results_path,
        current: &current,
        baseline: Some(&baseline),
        no_baseline: None,
        report: &report,
        calibrations: &calibrations,
        history: Some(&history),
    };
    let html = render(&page).unwrap();
    // Every part with a text from data was drawn.
    for part in [
        "id=\"trends\"",
        "id=\"failing\"",
        "id=\"calibration\"",
        "id=\"length\"",
        "id=\"notes\"",
        "class=\"ranking\"",
        "class=\"diff\"",
        "class=\"detail\"",
        "aria-label=",
        "Likely causes of the change",
        "Signatures of the current levels",
    ] {
        assert!(html.contains(part), "no {part}: {html}");
    }
    assert_no_secret(&html);
    assert!(
        html.contains("<title>ragate · nightly-[redacted] · regression</title>"),
        "{html}"
    );

    let first_run = Page {
        baseline: None,
        no_baseline: Some(format!("no baseline for {SECRET}")),
        history: None,
        calibrations: &[],
        ..page
    };
    let html = render(&first_run).unwrap();
    assert!(html.contains("class=\"measured\""), "{html}");
    assert_no_secret(&html);
}

#[test]
fn an_answer_is_redacted_whole_before_its_diff_cuts_it() {
    // A secret with a space: the word diff would cut it in two runs, each unrecognisable.
    crate::secrets::register("sk-html-split 5e8d21c4b7");
    let html = queries::answer_diff(
        "one two three four five six sk-html-split 5e8d21c4b7 seven",
        "one two three four five six sk-html-split eight",
    )
    .into_string();
    assert!(!html.contains("5e8d21c4b7"), "{html}");
}

#[test]
fn control_and_bidi_characters_from_data_are_shown_escaped() {
    let html = checks_section(&report(vec![outcome(
        "recall@5 [class=a\u{202e}b\u{1b}[31m]",
        Family::Primary,
        CheckStatus::Fail,
    )]))
    .into_string();
    assert!(html.contains("a\\u{202e}b\\u{1b}[31m"), "{html}");
    assert!(
        !html.contains('\u{202e}') && !html.contains('\u{1b}'),
        "{html}"
    );
}
