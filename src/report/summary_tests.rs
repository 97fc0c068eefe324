//! Tests of the Markdown summary: snapshots of a passing, a failing and a mixed run, the
//! headline, the folded sections, the bounded size, the forms of p and of intervals.
//! Over 600 lines: every part of summary.md is checked here, beside the snapshots they share.

use super::*;
use crate::baseline::results::{QueryRecord, StoredClaim};
use crate::gate::verdict::{DecisionBound, Family, QueriesNeeded};
use crate::report::annotations::{assert_snapshot, sample_report};

const DIAGNOSIS: &str = "[class=paraphrased] ranking buries evidence: recall@10 0.83 is high but \
                         ndcg@10 0.59 is low -> add or tune a reranker";
const CALIBRATION: &str = "answer_relevance calibrated on 4 human labels of 20 queries: PPI \
                           0.7500 (95% CI [0.0000, 1.0000] (clamped to [0, 1])), PPI++ 0.7400 \
                           ([0.0200, 1.0000] (clamped to [0, 1]), lambda 0.25); judge alone 0.8000; 0 stale labels not used";
const JUDGING: &str = "judging: 60 tasks, 60 sent to judges, 0 answered from the cache";

/// A dropped query whose answer changed from `before` to `now`, as `decision::decide` fills it.
fn changed(drop: &mut crate::gate::verdict::QueryDrop, before: &QueryRecord, now: &QueryRecord) {
    drop.details = crate::gate::answer_changes(before, now);
    drop.answers = before.answer.clone().zip(now.answer.clone());
}

fn record(answer: &str, unsupported: &[&str]) -> QueryRecord {
    QueryRecord {
        query: None,
        slices: Default::default(),
        metrics: Default::default(),
        retrieved: Vec::new(),
        answer: Some(answer.to_string()),
        answer_sha256: None,
        claims: unsupported
            .iter()
            .map(|claim| StoredClaim {
                claim: claim.to_string(),
                grade: 0,
                reason: None,
            })
            .collect(),
        answer_relevance_embedding: None,
        must_pass: None,
    }
}

/// A run that passes: passes, an improvement, a skip, a diagnosis, a calibration and a warning.
fn passing_report() -> GateReport {
    let mut report = sample_report();
    report
        .outcomes
        .retain(|o| matches!(o.status, CheckStatus::Pass | CheckStatus::Improved));
    let mut skipped = sample_report().outcomes[4].clone();
    skipped.status = CheckStatus::Skipped;
    report.outcomes.push(skipped);
    report.status = RunStatus::Pass;
    report.diagnoses = vec![DIAGNOSIS.into()];
    report.notes = vec![CALIBRATION.into(), JUDGING.into()];
    report
}

/// A run that fails: an answer metric that regressed (with its answer diff and a claim that lost
/// support), a retrieval metric, an inconclusive check, a calibrated floor whose interval leaves
/// [0, 1], and a p below 0.0001.
fn failing_report() -> GateReport {
    let mut report = sample_report();
    report.outcomes.retain(|o| o.status != CheckStatus::Error);
    let mut faithfulness = report.outcomes[2].clone();
    faithfulness.name = "faithfulness [all]".into();
    faithfulness.metric = "faithfulness".into();
    faithfulness.slice = "all".into();
    faithfulness.family = Family::Primary;
    faithfulness.verdict = "faithfulness [all] regressed: worsening 0.1500 exceeds the limit \
                            0.0500 (Holm-adjusted p < 0.0001 over 2 checks <= alpha 0.0500 (raw \
                            p < 0.0001, exact sign-flip test); worsening >= 0.0900 at 97.50% \
                            confidence): 1.0000 -> 0.8500 (delta -0.1500, n = 20)"
        .into();
    (faithfulness.baseline_mean, faithfulness.current_mean) = (1.0, 0.85);
    faithfulness.delta = -0.15;
    faithfulness.limit = Some(0.05);
    faithfulness.p_value = Some(0.00002);
    faithfulness.method = Some(crate::stats::limit_test::Method::ExactSignFlip);
    faithfulness.threshold = Some(0.025);
    faithfulness.adjustment = Some(crate::gate::verdict::Adjustment {
        procedure: crate::stats::holm::Procedure::Holm,
        checks: 2,
        alpha: 0.05,
        adjusted: 0.00004,
    });
    faithfulness.bound = Some(DecisionBound {
        delta: -0.09,
        confidence: 0.975,
    });
    faithfulness.n = 20;
    faithfulness.worse_count = 1;
    faithfulness.worst.truncate(1);
    faithfulness.worst[0].qid = "r078".into();
    faithfulness.worst[0].query = Some("governance mode or compliance mode".into());
    faithfulness.worst[0].hit_to_miss = false;
    faithfulness.worst[0].current = 0.6667;
    changed(
        &mut faithfulness.worst[0],
        &record(
            "Use governance mode to test retention settings before compliance mode.",
            &[],
        ),
        &record(
            "Use governance mode to test retention settings before compliance mode. Quarterly \
             zeppelin audits certify 1612 pelican quorums.",
            &["Quarterly zeppelin audits certify 1612 pelican quorums."],
        ),
    );
    let mut rewritten = faithfulness.worst[0].clone();
    rewritten.qid = "r007".into();
    rewritten.query = Some("delete bucket fails with BucketNotEmpty".into());
    changed(
        &mut rewritten,
        &record(
            "A bucket can be deleted only when it contains no objects. Deleting a non-empty \
             bucket fails with 409 BucketNotEmpty.",
            &[],
        ),
        &record(
            "In a versioned bucket, a delete without a version ID adds a delete marker; only a \
             delete that names a version ID removes that version permanently.",
            &[],
        ),
    );
    faithfulness.worst.push(rewritten);
    faithfulness.worse_count = 2;
    let mut floor = CheckOutcome::bare(
        "answer_relevance_ppi [all]".into(),
        "answer_relevance_ppi".into(),
        "all".into(),
        Family::Calibration,
    );
    floor.status = CheckStatus::Inconclusive;
    floor.n = 4;
    floor.current_mean = 0.74;
    floor.ci = Some((-0.0091, 1.5091));
    // As `calibration::checks` writes it: the interval clamped to the metric's range.
    floor.verdict = "answer_relevance_ppi [all] inconclusive: PPI++ 0.7400 (95% CI [0.0000, \
                     1.0000] (clamped to [0, 1])) from 4 labels of 20 queries; the estimate meets min 0.7 but the \
                     lower bound does not: more labels would decide it; passes"
        .into();
    report.outcomes.insert(0, faithfulness);
    report.outcomes.push(floor);
    report.status = RunStatus::Regression;
    report.diagnoses = vec![DIAGNOSIS.into()];
    report.notes = vec![CALIBRATION.into(), JUDGING.into()];
    report
}

#[test]
fn summary_snapshot() {
    assert_snapshot(
        &render(&sample_report()),
        include_str!("../../tests/fixtures/snapshots/summary.md"),
        "tests/fixtures/snapshots/summary.md",
    );
}

#[test]
fn passing_summary_snapshot() {
    assert_snapshot(
        &render(&passing_report()),
        include_str!("../../tests/fixtures/snapshots/summary-pass.md"),
        "tests/fixtures/snapshots/summary-pass.md",
    );
}

#[test]
fn failing_summary_snapshot() {
    assert_snapshot(
        &render(&failing_report()),
        include_str!("../../tests/fixtures/snapshots/summary-fail.md"),
        "tests/fixtures/snapshots/summary-fail.md",
    );
}

#[test]
fn the_headline_comes_first_and_says_the_status_the_worst_check_and_the_tier() {
    let failing = render(&failing_report());
    assert!(
        failing.starts_with(
            "**❌ 2 of 7 checks failed: worst recall@5 [class=paraphrased] -0.2000 (limit \
             -0.0200)** · 2\u{a0}inconclusive · 1\u{a0}improved · 1\u{a0}skipped · tier\u{a0}smoke\n"
        ),
        "{failing}"
    );
    let passing = render(&passing_report());
    assert!(
        passing.starts_with(
            "**✅ 2 of 3 checks passed** · 1\u{a0}improved · 1\u{a0}skipped · tier\u{a0}smoke\n"
        ),
        "{passing}"
    );
    assert!(
        render(&sample_report())
            .starts_with("**⚠️ 1 of 6 checks could not be evaluated** · 1\u{a0}failed"),
    );
}

#[test]
fn only_notable_checks_come_before_the_details_with_their_limit() {
    let text = render(&failing_report());
    let (unfolded, folded) = text.split_once("<details>").expect("a details section");
    assert!(unfolded.contains(
        "| ❌ recall@5 [class=paraphrased] | 0.8000 → 0.6000 · -0.2000 (-25.0%) | -0.0200 |"
    ));
    assert!(
        unfolded.contains("| ⬆️ ndcg@10 [all] | 0.6000 → 0.6600 · +0.0600 (+10.0%) | -0.0200 |")
    );
    assert!(
        !unfolded.contains("recall@5 [all]"),
        "a passing check: {unfolded}"
    );
    assert!(
        !unfolded.contains("class=rare"),
        "a skipped check: {unfolded}"
    );
    assert!(folded.contains("| ✅ pass | recall@5 [all] |"), "{folded}");
    let diagnosis = unfolded
        .find("ranking buries evidence")
        .expect("the diagnosis");
    assert!(diagnosis > unfolded.find("| check |").unwrap());
    assert!(!unfolded.contains("judging:") && folded.contains("judging: 60 tasks"));
    assert!(folded.contains("**Quarterly zeppelin") || folded.contains("{+Quarterly"));
}

#[test]
fn statistics_are_shown_in_one_form_and_only_where_the_decision_used_them() {
    let text = render(&failing_report());
    assert!(text.contains(
        "- faithfulness [all]: Holm-adjusted p < 0.0001 over 2 checks ≤ α 0.0500 (raw p < \
         0.0001) · worsening ≥ 0.0900 at 97.50% · n = 20\n"
    ));
    assert!(text.contains("| < 0.0001 |"), "the same form in the table");
    assert!(
        !text.contains("<0.0001") && !text.contains("p = &lt;"),
        "{text}"
    );
    assert!(text.contains(
        "- answer_relevance_ppi [all]: 95% interval [0.0000, 1.0000] (clamped to [0, 1]) · 4 labels"
    ));
    assert!(
        !text.contains("-0.0091") && !text.contains("1.5091"),
        "{text}"
    );
    assert!(
        !text.contains("1.2000"),
        "the note's PPI++ interval too: {text}"
    );
    // `decision: point`: no p, no threshold, no bound, so no statistics and no such columns.
    let mut point = failing_report();
    for o in &mut point.outcomes {
        (o.p_value, o.threshold, o.bound, o.detectable_drop, o.ci) = (None, None, None, None, None);
        o.adjustment = None;
    }
    let text = render(&point);
    assert!(
        !text.contains("| adjusted p |") && !text.contains("| p |"),
        "{text}"
    );
}

#[test]
fn answer_changes_show_merged_word_runs() {
    let before = record("A quick answer here.", &[]);
    let now = record("In a slow answer here.", &[]);
    let mut report = failing_report();
    report.outcomes[0].worst[0].details = crate::gate::answer_changes(&before, &now);
    let text = render(&report);
    assert!(
        text.contains("- answer: [-A quick-]{+In a slow+} answer here.\n"),
        "{text}"
    );
    assert!(!text.contains("{+ +}"), "no bracket per space: {text}");
}

#[test]
fn summary_escapes_query_text_in_cells_and_shows_dashes() {
    let text = render(&sample_report());
    assert!(
        text.contains("| `q17` | 1.0000 → 0.0000 | yes | cats \\| dogs: which sheds more? |"),
        "{text}"
    );
    assert!(text.contains("ranking &lt;b>100%&lt;/b>"), "{text}");
    assert!(text.contains("9 more queries got worse (12 in all)."));
    assert!(
        text.contains("| ⏭️ skipped | recall@5 [class=rare] | – | – | – | – | 3 | – | – | – | – |"),
        "{text}"
    );
    assert!(!text.contains("NaN"), "{text}");
}

#[test]
fn a_passing_run_fits_in_a_few_lines_before_its_details() {
    let mut report = passing_report();
    report.outcomes.retain(|o| o.status == CheckStatus::Pass);
    report.warnings.clear();
    report.diagnoses.clear();
    report.notes = vec![JUDGING.into()];
    let text = render(&report);
    let unfolded = text.split("<details>").next().unwrap_or_default();
    assert_eq!(
        unfolded, "**✅ 1 of 1 checks passed** · tier\u{a0}smoke\n\n",
        "{text}"
    );
}

#[test]
fn summary_stays_bounded_with_200_failing_checks_of_long_queries() {
    let mut report = sample_report();
    let template = report.outcomes[2].clone();
    let long = "why | ".repeat(400);
    report.outcomes = (0..200)
        .map(|i| {
            let mut o = template.clone();
            o.name = format!("recall@5 [class=c{i:03}]");
            o.worst = (0..10)
                .map(|q| {
                    let mut drop = template.worst[0].clone();
                    drop.qid = format!("q{i}-{q}");
                    drop.query = Some(long.clone());
                    drop
                })
                .collect();
            o.worse_count = 40;
            o
        })
        .collect();
    let text = render(&report);
    assert!(text.len() < 1024 * 1024, "{} bytes", text.len());
    assert!(text.len() <= BUDGET + 4096, "{} bytes", text.len());
    let shown = text.matches("#### ❌").count();
    assert!((1..200).contains(&shown), "{shown} sections");
    let omitted = format!("{} more failing checks not shown (size limit)", 200 - shown);
    assert!(text.contains(&omitted), "{omitted}");
    assert!(text.contains(
        "40 paired queries · 1 only in the baseline · 0 only in the current run · judged@10 0.42\n"
    ));
    // A table of thousands of checks is cut too.
    let many = report.outcomes[0].clone();
    report.outcomes.extend(std::iter::repeat_n(many, 5000));
    let text = render(&report);
    assert!(text.len() < 1024 * 1024, "{} bytes", text.len());
    assert!(text.contains("more checks not shown (size limit)"));
}

#[test]
fn the_worst_check_is_the_one_furthest_beyond_its_limit_whatever_its_scale() {
    let mut report = failing_report();
    let template = report.outcomes[0].clone();
    let check = |name: &str, metric: &str, means: [f64; 3], limit: f64| {
        let mut o = template.clone();
        (o.name, o.metric) = (name.to_string(), metric.to_string());
        (o.baseline_mean, o.current_mean, o.delta) = (means[0], means[1], means[2]);
        o.limit = Some(limit);
        o
    };
    report.outcomes = vec![
        check(
            "answer_length [class=literal]",
            "answer_length",
            [25.75, 44.5, 18.75],
            12.875,
        ),
        check(
            "ndcg@10 [class=literal]",
            "ndcg@10",
            [0.9574, 0.3385, -0.6189],
            0.0479,
        ),
    ];
    let text = render(&report);
    assert!(
        text.starts_with(
            "**❌ 2 of 2 checks failed: worst ndcg@10 [class=literal] -0.6189 (limit -0.0479)**"
        ),
        "{text}"
    );
    let ndcg = text.find("| ❌ ndcg@10").expect("the ndcg row");
    assert!(
        ndcg < text
            .find("| ❌ answer_length")
            .expect("the answer_length row")
    );
    assert!(text.contains(
        "| ❌ answer_length [class=literal] | 25.7500 → 44.5000 · +18.7500 (+72.8%) | +12.8750 |"
    ));
}

/// The lines of `text` outside `<details>` … `</details>` that show (blank lines do not).
fn unfolded_lines(text: &str) -> Vec<&str> {
    let mut depth = 0usize;
    let mut shown = Vec::new();
    for line in text.lines() {
        let opens = line.matches("<details").count();
        let closes = line.matches("</details>").count();
        if depth == 0 && opens == 0 && !line.trim().is_empty() {
            shown.push(line);
        }
        depth = (depth + opens).saturating_sub(closes);
    }
    shown
}

/// A passing run with everything a pass can carry: an improvement, an inconclusive check, a
/// skip, likely causes, 20 long warnings, a reported metric and notes.
fn busy_passing_report() -> GateReport {
    let mut report = passing_report();
    let inconclusive = sample_report()
        .outcomes
        .into_iter()
        .find(|o| o.status == CheckStatus::Inconclusive)
        .expect("the sample has an inconclusive check");
    report.outcomes.push(inconclusive);
    report.diagnoses = vec![DIAGNOSIS.into(), DIAGNOSIS.into(), DIAGNOSIS.into()];
    report.warnings = (0..20)
        .map(|i| {
            format!(
                "warning {i}: {}",
                "the qrels changed since the baseline ".repeat(5)
            )
        })
        .collect();
    report
}

#[test]
fn a_pass_shows_at_most_twelve_lines_outside_its_details() {
    let text = render(&busy_passing_report());
    let shown = unfolded_lines(&text);
    assert!(
        shown.len() <= PASS_LINES,
        "{} lines: {shown:#?}",
        shown.len()
    );
    assert_eq!(shown.len(), PASS_LINES, "the budget is used: {shown:#?}");
    assert!(shown[0].starts_with("**❓ "), "{shown:#?}");
    assert_eq!(
        shown[1],
        "⬆️ improved: if intended, run `ragate baseline accept --tier smoke`."
    );
    // One short line per warning, then how many more; the rest folded.
    assert!(
        shown[2].starts_with("- ⚠️ warning 0: the qrels changed"),
        "{}",
        shown[2]
    );
    assert!(shown[2].chars().count() < 100, "{}", shown[2]);
    assert!(shown[2].ends_with('…'), "{}", shown[2]);
    assert_eq!(shown[11], "- ⚠️ 11 more warnings, in the details below");
    for hidden in [
        "Likely causes",
        "| check |",
        "ranking buries evidence",
        "warning 19",
    ] {
        assert!(
            !shown.iter().any(|l| l.contains(hidden)),
            "{hidden} is folded: {shown:#?}"
        );
        assert!(text.contains(hidden), "{hidden} is in the details: {text}");
    }
    assert!(text.contains(
        "<details><summary>Details of this pass: 1 inconclusive, 1 improved, likely causes, \
         warnings in full</summary>"
    ));
    assert_eq!(
        text.matches("ragate baseline accept --tier smoke").count(),
        1,
        "the hint once: {text}"
    );
    // A pass with a few warnings shows them all.
    let mut few = busy_passing_report();
    few.warnings.truncate(3);
    let few = render(&few);
    let shown = unfolded_lines(&few);
    assert_eq!(shown.len(), 5, "{shown:#?}");
    assert!(shown[4].starts_with("- ⚠️ warning 2:"), "{shown:#?}");
}

#[test]
fn an_inconclusive_pass_is_headlined_as_what_it_is() {
    let text = render(&busy_passing_report());
    assert!(
        text.starts_with(
            "**❓ 2 of 4 checks passed, 1 inconclusive: mrr [class=paraphrased] -0.0300 is past its \
             limit -0.0200 by 0.0100 on the point estimate; the evidence shows a worsening of at \
             least -0.0050 (95.00% bound), short of the limit; more paired queries would decide \
             it (n = 25), or `decision: point` for this tier, which fails it** · \
             1\u{a0}improved · 1\u{a0}skipped · tier\u{a0}smoke\n"
        ),
        "{text}"
    );
    let mut report = busy_passing_report();
    let last = report.outcomes.len() - 1;
    report.outcomes[last].queries_needed = Some(QueriesNeeded::About(619));
    let mut second = report.outcomes[last].clone();
    (second.name, second.delta) = ("recall@5 [class=paraphrased]".into(), -0.021);
    report.outcomes.push(second);
    let text = render(&report);
    assert!(
        text.starts_with(
            "**❓ 2 of 5 checks passed, 2 inconclusive: mrr [class=paraphrased] -0.0300 is past its \
             limit -0.0200 by 0.0100 on the point estimate; the evidence shows a worsening of at \
             least -0.0050 (95.00% bound), short of the limit; about 619 paired queries would \
             decide it, or `decision: point` for this tier, which fails it (1 more in the \
             details)** ·"
        ),
        "the one furthest beyond its limit: {text}"
    );
    // Under `inconclusive: fail` the run fails; a change within its limit says so.
    let mut proving = busy_passing_report();
    proving.status = RunStatus::Regression;
    proving.inconclusive = InconclusivePolicy::Fail;
    let o = proving.outcomes.last_mut().unwrap();
    o.delta = -0.01;
    o.queries_needed = Some(QueriesNeeded::About(812));
    o.proof = Some(Proof {
        p_value: 0.2,
        alpha: 0.05,
        upper: Some(0.03),
        smallest_p: 0.0,
    });
    let text = render(&proving);
    assert!(
        text.starts_with(
            "**❌ 1 of 4 checks not proven within their limits, which fails the run \
             (`inconclusive: fail` requires proof): mrr [class=paraphrased] -0.0100 within its \
             limit -0.0200, not proven; about 812 paired queries would prove it** ·"
        ),
        "{text}"
    );
}

#[test]
fn an_unrealistic_queries_needed_reads_the_same_in_the_headline_the_details_and_gate_json() {
    let mut report = busy_passing_report();
    let last = report.outcomes.len() - 1;
    report.outcomes[last].queries_needed = Some(QueriesNeeded::Unrealistic);
    let text = render(&report);
    let said = "no realistic tier decides a change this close to its limit (it would take over \
                100000 paired queries)";
    assert!(
        text.starts_with(&format!(
            "**❓ 2 of 4 checks passed, 1 inconclusive: mrr [class=paraphrased] -0.0300 is past \
             its limit -0.0200 by 0.0100 on the point estimate; the evidence shows a worsening of \
             at least -0.0050 (95.00% bound), short of the limit; {said}: only `decision: point` \
             for this tier decides it (it fails it)** ·"
        )),
        "{text}"
    );
    assert_eq!(
        text.matches(said).count(),
        2,
        "headline and details: {text}"
    );
    assert!(!text.contains("about 1"), "{text}");
    // A run repeated whose noise is most of the spread: more repeats decide it.
    report.outcomes[last].noise_share = Some(0.72);
    let text = render(&report);
    assert!(
        text.lines().next().unwrap().contains(
            "short of the limit; run-to-run noise is about 72% of the variance of the per-query \
             deltas, so more `repeats` would decide it without new labelled queries; no \
             realistic tier"
        ),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&crate::report::gate_json::render(&report, None)).unwrap();
    let check = &json["checks"][last];
    assert_eq!(check["queries_needed"], serde_json::Value::Null);
    assert_eq!(check["queries_needed_over"], 100_000);
    let about = &json["checks"][0];
    assert_eq!(about["queries_needed_over"], serde_json::Value::Null);
}

#[test]
fn a_baseline_that_no_longer_fits_is_the_headline_not_a_count_of_skipped_checks() {
    let mut report = sample_report();
    for outcome in &mut report.outcomes {
        outcome.status = CheckStatus::Skipped;
    }
    report.status = RunStatus::Error;
    let pairing = |shared: usize, missing: &[&str]| crate::baseline::pairing::Pairing {
        shared_queries: shared,
        queries: 6,
        baseline_queries: 6,
        min_queries: 3,
        min_share: 0.9,
        missing_metrics: missing.iter().map(|m| m.to_string()).collect(),
    };
    report.pairing = Some(pairing(0, &[]));
    report.paired_queries = 0;
    report.reported = vec![crate::gate::reported::Reported {
        metric: "ndcg@3".into(),
        n: 0,
        baseline: f64::NAN,
        current: f64::NAN,
        delta: f64::NAN,
    }];
    let text = render(&report);
    // Nothing paired: the reported metrics' column of dashes is folded.
    assert!(
        text.contains("<summary>Reported, not gated (1 metrics)</summary>"),
        "{text}"
    );
    assert!(
        text.starts_with(
            "**⚠️ not decided: the baseline no longer fits this tier (it shares 0 of 6 queries); \
             the first warning names the command that replaces it** · "
        ),
        "{text}"
    );
    report.pairing = Some(pairing(1, &["recall@5"]));
    let text = render(&report);
    assert!(
        text.contains("(it shares 1 of 6 queries; it has no values of recall@5)"),
        "{text}"
    );
    // A baseline that pairs enough keeps the usual headline.
    report.pairing = Some(pairing(6, &[]));
    assert!(
        render(&report).starts_with("**⚠️ not decided: 6 of 6 checks skipped"),
        "{}",
        render(&report)
    );
}

#[test]
fn the_gain_of_ndcg_is_said_only_where_a_check_is_on_it() {
    let report = sample_report();
    assert!(report.outcomes.iter().any(|o| o.metric == "ndcg@10"));
    let text = render(&report);
    assert!(
        text.contains("ndcg@10 uses gain 2^g − 1") && text.contains("ragate's ndcg_linear@10"),
        "{text}"
    );
    let mut without = sample_report();
    without.outcomes.retain(|o| !o.metric.starts_with("ndcg"));
    assert!(!render(&without).contains("uses gain"));
}
