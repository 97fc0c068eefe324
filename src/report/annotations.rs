//! GitHub Actions `::error` annotations for failing checks, most important first.
//!
//! GitHub shows at most 10 error annotations per step, so when more checks failed the first 9
//! are annotated and the 10th line says how many more there are: the count stays visible.
//! Values are escaped per GitHub's workflow-command rules.

use std::cmp::Ordering;

use crate::config::InconclusivePolicy;
use crate::gate::GateReport;
use crate::gate::verdict::{CheckOutcome, CheckStatus};
use crate::report::gate_table::higher_is_better;

/// GitHub displays at most this many error annotations per step.
pub(crate) const MAX_ANNOTATIONS: usize = 10;

/// How far a check moved in the bad direction (larger is worse; unknown counts as least).
fn worsening(outcome: &CheckOutcome) -> f64 {
    let worse = if higher_is_better(&outcome.metric) {
        -outcome.delta
    } else {
        outcome.delta
    };
    if worse.is_nan() {
        f64::NEG_INFINITY
    } else {
        worse
    }
}

/// Most important first: the largest worsening, ties by name.
/// The failing checks, most important first.
pub(crate) fn failing_by_severity(report: &GateReport) -> Vec<&CheckOutcome> {
    let mut failing: Vec<&CheckOutcome> = report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Fail)
        .collect();
    failing.sort_by(|a, b| by_severity(a, b));
    failing
}

fn by_severity(a: &CheckOutcome, b: &CheckOutcome) -> Ordering {
    worsening(b)
        .total_cmp(&worsening(a))
        .then_with(|| a.name.cmp(&b.name))
}

/// Escapes the message of a workflow command, the one encoder of annotations: the raw text
/// redacted first ([`crate::secrets::redact`]), then control and bidi characters shown escaped,
/// and the legacy command form `##[` written `#\#[`, as on the terminal.
pub(crate) fn escape_message(text: &str) -> String {
    let escaped = crate::secrets::redact(text)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
        .replace("##[", "#\\#[");
    crate::escape::visible(&escaped).into_owned()
}

/// Escapes a property value (such as `title`) of a workflow command.
pub(crate) fn escape_property(text: &str) -> String {
    escape_message(text).replace(':', "%3A").replace(',', "%2C")
}

/// The annotation of a run that could not be evaluated (exit 2).
pub(crate) fn setup_error(tier: &str, message: &str) -> String {
    format!(
        "::error title={}::{}",
        escape_property(&format!("ragate: tier {tier} not gated")),
        escape_message(message)
    )
}

/// The annotation lines: errors for failing checks (at most `MAX_ANNOTATIONS`), then warnings
/// for inconclusive checks (at most `MAX_ANNOTATIONS` more: GitHub counts the two kinds apart).
pub(crate) fn render(report: &GateReport) -> Vec<String> {
    let mut lines = failure_lines(report);
    lines.extend(inconclusive_lines(report));
    lines
}

fn inconclusive_lines(report: &GateReport) -> Vec<String> {
    let inconclusive: Vec<&CheckOutcome> = report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Inconclusive)
        .collect();
    let kind = match report.inconclusive {
        InconclusivePolicy::Pass => "warning",
        InconclusivePolicy::Fail => "error",
    };
    let shown = if inconclusive.len() > MAX_ANNOTATIONS {
        MAX_ANNOTATIONS - 1
    } else {
        inconclusive.len()
    };
    let mut lines: Vec<String> = inconclusive[..shown]
        .iter()
        .map(|o| {
            format!(
                "::{kind} title={}::{}",
                escape_property(&format!("ragate: {} inconclusive", o.name)),
                escape_message(&o.verdict)
            )
        })
        .collect();
    if inconclusive.len() > shown {
        lines.push(format!(
            "::{kind} title=ragate::{} more inconclusive checks, see the job summary",
            inconclusive.len() - shown
        ));
    }
    lines
}

fn failure_lines(report: &GateReport) -> Vec<String> {
    let failing = failing_by_severity(report);
    let shown = if failing.len() > MAX_ANNOTATIONS {
        MAX_ANNOTATIONS - 1
    } else {
        failing.len()
    };
    let mut lines: Vec<String> = failing[..shown]
        .iter()
        .map(|o| {
            format!(
                "::error title={}::{}",
                escape_property(&format!("ragate: {}", o.name)),
                escape_message(&o.verdict)
            )
        })
        .collect();
    if failing.len() > shown {
        lines.push(format!(
            "::error title=ragate::{} more failing checks, see the job summary",
            failing.len() - shown
        ));
    }
    lines
}

/// A gate report with one check of every status, for the report tests.
#[cfg(test)]
pub(crate) fn sample_report() -> GateReport {
    use crate::gate::verdict::QueryDrop;
    use crate::gate::verdict::{Adjustment, DecisionBound, Family};
    use crate::stats::holm::Procedure;
    use crate::stats::limit_test::Method;
    let outcome = |name: &str, status, verdict: &str, n, means: [f64; 3]| {
        let slice = name[name.find('[').unwrap_or(0) + 1..name.len() - 1].to_string();
        let family = if slice == "all" {
            Family::Primary
        } else {
            Family::Slices
        };
        let mut o = CheckOutcome::bare(
            name.to_string(),
            name.split(' ').next().unwrap_or_default().to_string(),
            slice,
            family,
        );
        o.status = status;
        o.verdict = verdict.to_string();
        o.n = n;
        (o.baseline_mean, o.current_mean, o.delta) = (means[0], means[1], means[2]);
        o
    };
    // `adjusted`: Holm's adjusted p over the check's family of two.
    let stats = |mut o: CheckOutcome, bound: f64, p, threshold: f64, detectable, adjusted| {
        o.limit = Some(0.02);
        o.bound = Some(DecisionBound {
            delta: bound,
            confidence: 1.0 - threshold,
        });
        o.p_value = Some(p);
        o.method = Some(Method::SkewCorrectedT);
        o.threshold = Some(threshold);
        o.adjustment = Some(Adjustment {
            procedure: Procedure::Holm,
            checks: 2,
            alpha: 0.05,
            adjusted,
        });
        o.detectable_drop = Some(detectable);
        o
    };
    let drop = |qid: &str, query: Option<&str>, baseline, current, hit_to_miss| QueryDrop {
        qid: qid.to_string(),
        query: query.map(str::to_string),
        baseline,
        current,
        hit_to_miss,
        details: Vec::new(),
        answers: None,
    };
    let pass = outcome(
        "recall@5 [all]",
        CheckStatus::Pass,
        "recall@5 [all] within the limit 0.0200: worsening 0.0050: 0.7000 -> 0.6950",
        40,
        [0.7, 0.695, -0.005],
    );
    let improved = outcome(
        "ndcg@10 [all]",
        CheckStatus::Improved,
        "ndcg@10 [all] improved: 0.6000 -> 0.6600; if intended, run `ragate baseline accept --tier smoke`",
        40,
        [0.6, 0.66, 0.06],
    );
    let mut fail = outcome(
        "recall@5 [class=paraphrased]",
        CheckStatus::Fail,
        "recall@5 [class=paraphrased] regressed: worsening 0.2000 exceeds the limit 0.0200 (Holm-adjusted p = 0.0020 over 2 checks <= alpha 0.0500 (raw p = 0.0010, skew-corrected t test); worsening >= 0.1000 at 97.50% confidence): 0.8000 -> 0.6000 (delta -0.2000, n = 25)",
        25,
        [0.8, 0.6, -0.2],
    );
    fail.worst = vec![
        drop(
            "q17",
            Some("cats | dogs: which\nsheds more?"),
            1.0,
            0.0,
            true,
        ),
        drop("q3", None, 0.5, 0.25, false),
        drop(
            "q8",
            Some("ranking <b>100%</b>, \"quoted\" & co"),
            1.0,
            0.5,
            false,
        ),
    ];
    fail.worse_count = 12;
    let skipped = outcome(
        "recall@5 [class=rare]",
        CheckStatus::Skipped,
        "recall@5 [class=rare]: skipped (underpowered): 3 paired queries, fewer than min_queries 5",
        3,
        [f64::NAN; 3],
    );
    let error = outcome(
        "mrr [all]",
        CheckStatus::Error,
        "mrr [all]: the baseline has no `mrr` values: accept a baseline computed with this metric",
        0,
        [f64::NAN; 3],
    );
    let inconclusive = outcome(
        "mrr [class=paraphrased]",
        CheckStatus::Inconclusive,
        "mrr [class=paraphrased] inconclusive: worsening 0.0300 is beyond the limit 0.0200 on the point estimate, but the evidence is not enough (Holm-adjusted p = 0.2100 over 2 checks > alpha 0.0500 (raw p = 0.2100, skew-corrected t test); worsening >= -0.0050 at 95.00% confidence); about 310 paired queries with this effect and spread would decide it with 80% power: 0.5000 -> 0.4700 (delta -0.0300, n = 25)",
        25,
        [0.5, 0.47, -0.03],
    );
    let outcomes = vec![
        stats(pass, 0.01, 0.31, 0.05, 0.061, 0.31),
        stats(improved, 0.09, 0.0004, 0.025, 0.055, 0.0008),
        stats(fail, -0.1, 0.001, 0.025, 0.12, 0.002),
        stats(inconclusive, 0.005, 0.21, 0.05, 0.08, 0.21),
        skipped,
        error,
    ];
    GateReport {
        tier: "smoke".to_string(),
        status: crate::gate::decision::run_status_of(&outcomes, InconclusivePolicy::Pass),
        inconclusive: InconclusivePolicy::Pass,
        outcomes,
        reported: vec![],
        paired_queries: 40,
        pairing: None,
        baseline_only: vec!["q99".to_string()],
        current_only: Vec::new(),
        judged_at_k: Some((10, 0.42)),
        model_judged_at_k: None,
        diagnoses: vec![],
        causes: Vec::new(),
        notes: vec![],
        warnings: vec!["the qrels changed since the baseline (sha256 aaa -> bbb)".to_string()],
        error_budget: None,
    }
}

/// Compares rendered output with a committed snapshot, in insta's discipline: on a difference
/// the rendered output is written beside the snapshot as `<snapshot>.new` and the test fails until
/// someone reviews it (`diff <snapshot> <snapshot>.new`) and accepts it (`mv <snapshot>.new
/// <snapshot>`); a matching run removes a stale `.new`. Nothing passes by rewriting a snapshot.
#[cfg(test)]
pub(crate) fn assert_snapshot(actual: &str, expected: &str, relative_path: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative_path);
    let pending = path.with_file_name(format!(
        "{}.new",
        path.file_name().unwrap().to_string_lossy()
    ));
    if actual == expected {
        let _ = std::fs::remove_file(&pending);
        return;
    }
    std::fs::write(&pending, actual).expect("writing the pending snapshot");
    panic!(
        "{relative_path} differs from the rendered output, written to {relative_path}.new: review \
         with `diff {relative_path} {relative_path}.new`, accept with `mv {relative_path}.new \
         {relative_path}`\n--- rendered ---\n{actual}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_only_for_failing_checks_with_escaped_title() {
        let mut report = sample_report();
        let lines = render(&report);
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].starts_with("::error title=ragate%3A recall@5 [class=paraphrased]::recall@5"),
            "{}",
            lines[0]
        );
        assert!(
            lines[0].contains(
                "(Holm-adjusted p = 0.0020 over 2 checks <= alpha 0.0500 (raw p = 0.0010, \
                 skew-corrected t test); worsening"
            ),
            "commas stay in the message"
        );
        // Inconclusive checks are warnings, or errors when they fail the run.
        assert!(
            lines[1]
                .starts_with("::warning title=ragate%3A mrr [class=paraphrased] inconclusive::"),
            "{}",
            lines[1]
        );
        report.inconclusive = InconclusivePolicy::Fail;
        assert!(
            render(&report)[1]
                .starts_with("::error title=ragate%3A mrr [class=paraphrased] inconclusive::")
        );
    }

    #[test]
    fn a_lower_is_better_metric_that_rose_ranks_as_worse() {
        let mut report = sample_report();
        let mut length = report.outcomes[2].clone();
        length.name = "answer_length [all]".into();
        length.metric = "answer_length".into();
        length.delta = 5.0;
        report.outcomes.push(length);
        let order: Vec<&str> = failing_by_severity(&report)
            .iter()
            .map(|o| o.name.as_str())
            .collect();
        assert_eq!(
            order,
            ["answer_length [all]", "recall@5 [class=paraphrased]"]
        );
    }

    #[test]
    fn a_setup_error_is_one_escaped_annotation() {
        assert_eq!(
            setup_error(
                "smoke",
                "no baseline: run `ragate baseline accept`\nthen commit"
            ),
            "::error title=ragate%3A tier smoke not gated::no baseline: run `ragate baseline accept`%0Athen commit"
        );
    }

    #[test]
    fn annotation_escaping_follows_workflow_command_rules() {
        assert_eq!(escape_message("100% a:b,c\r\nd"), "100%25 a:b,c%0D%0Ad");
        assert_eq!(
            escape_message("a\u{1b}]0;t\u{7} \u{202e}b\u{0}"),
            "a\\u{1b}]0;t\\u{7} \\u{202e}b\\u{0}"
        );
        assert_eq!(escape_message("x ##[error]y"), "x #\\#[error]y");
        assert_eq!(
            escape_property("100% a:b,c\r\nd"),
            "100%25 a%3Ab%2Cc%0D%0Ad"
        );
        let mut report = sample_report();
        report.outcomes[2].name = "recall@5 [topic=a,b]".to_string();
        report.outcomes[2].verdict = "dropped 50%\nsee: summary".to_string();
        let lines = render(&report);
        assert_eq!(
            lines[0],
            "::error title=ragate%3A recall@5 [topic=a%2Cb]::dropped 50%25%0Asee: summary"
        );
    }

    #[test]
    fn annotations_most_important_first_and_capped_at_ten() {
        let mut report = sample_report();
        let template = report.outcomes[2].clone();
        report.outcomes.clear();
        for i in 0..14 {
            let mut o = template.clone();
            o.name = format!("recall@5 [class=c{i:02}]");
            o.verdict = format!("c{i:02} regressed");
            o.delta = -0.01 * f64::from(i % 7);
            report.outcomes.push(o);
        }
        let lines = render(&report);
        assert_eq!(lines.len(), MAX_ANNOTATIONS);
        let order: Vec<&str> = lines[..9]
            .iter()
            .map(|l| l.rsplit("::").next().unwrap_or_default())
            .collect();
        assert_eq!(
            order,
            [
                "c06 regressed",
                "c13 regressed",
                "c05 regressed",
                "c12 regressed",
                "c04 regressed",
                "c11 regressed",
                "c03 regressed",
                "c10 regressed",
                "c02 regressed",
            ]
        );
        assert_eq!(
            lines[9],
            "::error title=ragate::5 more failing checks, see the job summary"
        );
        report.outcomes.truncate(10);
        let lines = render(&report);
        assert_eq!(lines.len(), 10);
        assert!(lines.iter().all(|l| !l.contains("more failing checks")));
    }
}
