//! The gate: compares a tier's current results with its baseline and decides every check.

pub mod calibration;
pub mod causes;
pub mod checks;
pub mod decision;
pub mod diagnosis;
pub mod drift;
pub(crate) mod empty_answers;
pub mod error_budget;
pub mod must_pass;
pub mod reported;
pub mod run_verdict;
pub(crate) mod slice_index;
pub mod verdict;
pub(crate) mod zero_limit;

use std::collections::BTreeSet;

use crate::baseline::pairing::Pairing;
use crate::baseline::results::{QueryRecord, Results, RunStatus};
use crate::config::InconclusivePolicy;
use crate::input::qrels::Qrels;
use crate::stats::correlation;
use verdict::CheckOutcome;

/// Everything the reports render about one gate run.
#[derive(Debug, Clone)]
pub struct GateReport {
    /// The tier gated.
    pub tier: String,
    /// One outcome per check, in report order.
    pub outcomes: Vec<CheckOutcome>,
    /// The metrics of `metrics:` that no rule gates: shown, never deciding the status.
    pub reported: Vec<reported::Reported>,
    /// The run's status, from the outcomes (`decision::run_status`).
    pub status: RunStatus,
    /// Whether inconclusive checks pass or fail the run.
    pub inconclusive: InconclusivePolicy,
    /// Queries compared (present in both results).
    pub paired_queries: usize,
    /// How the baseline pairs with the run's queries and the tier's rules (None: no baseline).
    pub pairing: Option<Pairing>,
    /// Queries in the baseline only (dropped from the tier or the qrels).
    pub baseline_only: Vec<String>,
    /// Queries in the current run only (new in the qrels).
    pub current_only: Vec<String>,
    /// judged@k of the current run: (k, share of the top-k retrieved docs the qrels judge).
    pub judged_at_k: Option<(usize, f64)>,
    /// The share of those top-k docs that model judgments (`judged_by`) judge; None when the
    /// qrels hold no model judgment.
    pub model_judged_at_k: Option<f64>,
    /// Likely causes per slice, from the failure-diagnosis matrix
    /// (`[slice] stage: evidence -> usual fix`).
    pub diagnoses: Vec<String>,
    /// Likely causes of the change against the baseline (`causes::likely_causes`), at most
    /// [`causes::MOST`]; none without a baseline.
    pub causes: Vec<causes::Cause>,
    /// Observations about the current run that are not verdicts (correlations, for instance).
    pub notes: Vec<String>,
    /// Things the user should know that did not decide the verdict.
    pub warnings: Vec<String>,
    /// The bound on the run's false verdicts (none for a run without checks).
    pub error_budget: Option<error_budget::ErrorBudget>,
}

impl GateReport {
    /// A report with no checks, notes or queries yet (a first run, or a start to add to).
    pub fn without_checks(tier: &str, status: RunStatus, inconclusive: InconclusivePolicy) -> Self {
        GateReport {
            tier: tier.to_string(),
            outcomes: Vec::new(),
            reported: Vec::new(),
            status,
            inconclusive,
            paired_queries: 0,
            pairing: None,
            baseline_only: Vec::new(),
            current_only: Vec::new(),
            judged_at_k: None,
            model_judged_at_k: None,
            diagnoses: Vec::new(),
            causes: Vec::new(),
            notes: Vec::new(),
            warnings: Vec::new(),
            error_budget: None,
        }
    }

    /// The process exit code of the run: 0 pass, 1 regression, 2 error ([`crate::exit_code`]).
    pub fn exit_code(&self) -> i32 {
        self.verdict().exit_code()
    }

    /// The run's verdict as every output states it ([`run_verdict::RunVerdict`]).
    pub fn verdict(&self) -> run_verdict::RunVerdict {
        run_verdict::RunVerdict::of(self)
    }

    /// `compared 25 of 40 queries`, when the baseline pairs with fewer than the tier's
    /// `min_share` of its queries ([`Pairing::compared`]): every output says it beside the
    /// verdict.
    pub fn compared(&self) -> Option<String> {
        self.pairing.as_ref().and_then(Pairing::compared)
    }
}

/// The share of the top-`k` retrieved docs (over all queries) that the qrels judge, or None when
/// nothing was retrieved. Unjudged docs count as irrelevant, so a low share makes recall and nDCG
/// look worse than they are.
pub fn judged_at_k(results: &Results, qrels: &Qrels, k: usize) -> Option<f64> {
    let (mut judged, mut retrieved) = (0usize, 0usize);
    for (qid, record) in &results.queries {
        let Some(position) = qrels.position(qid) else {
            continue;
        };
        let judgments = &qrels.queries()[position].judgments;
        for doc in record.retrieved.iter().take(k) {
            retrieved += 1;
            judged += usize::from(judgments.get(doc).is_some());
        }
    }
    (retrieved > 0).then(|| judged as f64 / retrieved as f64)
}

/// The share of the top-`k` retrieved docs of `results` that a model judged (the qrels'
/// `judged_by`), of the same docs as [`judged_at_k`]; None when the qrels hold no model
/// judgment, or nothing was retrieved.
pub fn model_judged_at_k(results: &Results, qrels: &Qrels, k: usize) -> Option<f64> {
    if qrels
        .queries()
        .iter()
        .all(|query| query.judged_by.is_empty())
    {
        return None;
    }
    let (mut model, mut retrieved) = (0usize, 0usize);
    for (qid, record) in &results.queries {
        let Some(position) = qrels.position(qid) else {
            continue;
        };
        let query = &qrels.queries()[position];
        for doc in record.retrieved.iter().take(k) {
            retrieved += 1;
            model += usize::from(query.judged_by.contains_key(doc));
        }
    }
    (retrieved > 0).then(|| model as f64 / retrieved as f64)
}

/// What changed in an answer: a word diff (`[-removed-]{+added+}`) and the claims that are not
/// supported now but were supported (or absent) before.
pub(crate) fn answer_changes(before: &QueryRecord, now: &QueryRecord) -> Vec<String> {
    let mut lines = Vec::new();
    if let (Some(old), Some(new)) = (&before.answer, &now.answer)
        && old != new
    {
        lines.push(format!("answer: {}", word_diff(old, new)));
    }
    let supported_before: BTreeSet<&str> = before
        .claims
        .iter()
        .filter(|c| c.grade == 2)
        .map(|c| c.claim.as_str())
        .collect();
    for claim in now.claims.iter().filter(|c| c.grade < 2) {
        let was = if supported_before.contains(claim.claim.as_str()) {
            "was supported"
        } else {
            "new"
        };
        let reason = claim
            .reason
            .as_ref()
            .map(|reason| format!(" ({reason})"))
            .unwrap_or_default();
        lines.push(format!(
            "unsupported claim ({was}, grade {}): {}{reason}",
            claim.grade, claim.claim
        ));
    }
    lines
}

/// Pearson and Spearman correlation of answer_length and faithfulness over the current run: a
/// strong link means longer answers are judged less (or more) faithful, which a length change
/// would then move.
pub(crate) fn length_faithfulness_correlation(current: &Results) -> Option<String> {
    let (lengths, faithfulness): (Vec<f64>, Vec<f64>) = current
        .queries
        .values()
        .filter_map(|q| {
            Some((
                *q.metrics.get("answer_length")?,
                *q.metrics.get("faithfulness")?,
            ))
        })
        .unzip();
    let r = correlation::pearson(&lengths, &faithfulness)?;
    let rho = correlation::spearman(&lengths, &faithfulness)?;
    Some(format!(
        "answer_length vs faithfulness over {} queries: Pearson r = {r:.3}, Spearman rho = {rho:.3}",
        lengths.len()
    ))
}

/// A word diff that marks each changed run once: `The [-cat sat-]{+dog lay+} on the mat`.
/// The spaces between changed words join their run, so a replaced phrase reads as one deletion
/// and one insertion rather than a mark per word and per space.
fn word_diff(old: &str, new: &str) -> String {
    let mut out = String::new();
    let (mut removed, mut added) = (String::new(), String::new());
    for (tag, text) in word_runs(&similar::TextDiff::from_words(old, new)) {
        match tag {
            similar::ChangeTag::Equal => {
                flush_run(&mut out, &mut removed, &mut added);
                out.push_str(&text);
            }
            similar::ChangeTag::Delete => removed = text,
            similar::ChangeTag::Insert => added = text,
        }
    }
    flush_run(&mut out, &mut removed, &mut added);
    out
}

/// The diff's changes with each changed run merged: the spaces between changed words join
/// their run, so a replaced phrase reads as one deletion and one insertion.
pub(crate) fn word_runs<'a>(
    diff: &similar::TextDiff<'a, 'a, str>,
) -> Vec<(similar::ChangeTag, String)> {
    let mut out: Vec<(similar::ChangeTag, String)> = Vec::new();
    let (mut removed, mut added, mut gap) = (String::new(), String::new(), String::new());
    let flush =
        |out: &mut Vec<(similar::ChangeTag, String)>, removed: &mut String, added: &mut String| {
            for (tag, side) in [
                (similar::ChangeTag::Delete, removed),
                (similar::ChangeTag::Insert, added),
            ] {
                if !side.is_empty() {
                    out.push((tag, std::mem::take(side)));
                }
            }
        };
    for change in diff.iter_all_changes() {
        let value = change.value();
        let pending = !(removed.is_empty() && added.is_empty());
        match change.tag() {
            similar::ChangeTag::Equal if pending && value.trim().is_empty() => gap.push_str(value),
            similar::ChangeTag::Equal => {
                flush(&mut out, &mut removed, &mut added);
                out.push((similar::ChangeTag::Equal, std::mem::take(&mut gap) + value));
            }
            tag => {
                for side in [&mut removed, &mut added] {
                    if !side.is_empty() {
                        side.push_str(&gap);
                    }
                }
                gap.clear();
                match tag {
                    similar::ChangeTag::Delete => removed.push_str(value),
                    _ => added.push_str(value),
                }
            }
        }
    }
    flush(&mut out, &mut removed, &mut added);
    if !gap.is_empty() {
        out.push((similar::ChangeTag::Equal, gap));
    }
    out
}

/// Writes a pending run as `[-removed-]{+added+}`, keeping leading and trailing spaces outside
/// the marks.
fn flush_run(out: &mut String, removed: &mut String, added: &mut String) {
    let sides = [(removed.as_str(), "[-", "-]"), (added.as_str(), "{+", "+}")];
    let outer = |pick: fn(&str) -> &str| {
        sides
            .iter()
            .map(|(side, _, _)| pick(side))
            .max_by_key(|space| space.len())
            .unwrap_or("")
            .to_string()
    };
    let leading = outer(|side| &side[..side.len() - side.trim_start().len()]);
    let trailing = outer(|side| &side[side.trim_end().len()..]);
    out.push_str(&leading);
    for (side, open, close) in sides {
        let kept = side.trim();
        if !kept.is_empty() {
            out.push_str(&format!("{open}{kept}{close}"));
        }
    }
    out.push_str(&trailing);
    removed.clear();
    added.clear();
}

#[cfg(test)]
mod tests {
    #[test]
    fn word_diff_marks_each_changed_run_once() {
        use super::word_diff;
        assert_eq!(
            word_diff("The cat sat on the mat", "The dog sat on the mat"),
            "The [-cat-]{+dog+} sat on the mat"
        );
        assert_eq!(
            word_diff("A quick answer here.", "In a slow answer here."),
            "[-A quick-]{+In a slow+} answer here."
        );
        assert_eq!(
            word_diff(
                "Stowbox keeps data.",
                "Stowbox keeps data in three regions."
            ),
            "Stowbox keeps [-data.-]{+data in three regions.+}"
        );
        assert_eq!(word_diff("same", "same"), "same");
        assert_eq!(
            word_diff("Kept for 11 days.", "Kept for 11 days. Printed in Lisbon."),
            "Kept for 11 days. {+Printed in Lisbon.+}"
        );
    }

    use super::*;
    use crate::baseline::results::{Provenance, QueryRecord, RunStatus};
    use crate::input::{native_qrels, text_file::TextFile};

    #[test]
    fn judged_at_k_counts_judged_docs_among_the_top_k() {
        let qrels = native_qrels::read(
            &TextFile::from_bytes(
                "q.jsonl",
                b"{\"qid\":\"q1\",\"query\":\"x\",\"graded_relevance\":{\"a\":1,\"b\":0}}".to_vec(),
            )
            .unwrap(),
        )
        .unwrap();
        let record = QueryRecord {
            query: None,
            slices: Default::default(),
            metrics: Default::default(),
            retrieved: ["a", "x", "b", "y", "b2"].map(String::from).to_vec(),
            answer: None,
            answer_sha256: None,
            claims: Vec::new(),
            answer_relevance_embedding: None,
            must_pass: None,
        };
        let results = Results {
            format: String::new(),
            tier: "t".into(),
            status: RunStatus::Pass,
            provenance: Provenance::default(),
            metrics: vec![],
            summary: Default::default(),
            noise: None,
            baseline_mismatch: None,
            queries: [("q1".to_string(), record)].into_iter().collect(),
        };
        assert_eq!(
            judged_at_k(&results, &qrels, 4),
            Some(0.5),
            "a and b of a, x, b, y"
        );
        assert_eq!(judged_at_k(&results, &qrels, 1), Some(1.0));
        assert_eq!(
            model_judged_at_k(&results, &qrels, 4),
            None,
            "no model judgment"
        );
        let model = native_qrels::read(
            &TextFile::from_bytes(
                "q.jsonl",
                b"{\"qid\":\"q1\",\"query\":\"x\",\"graded_relevance\":{\"a\":1,\"b\":0},\"judged_by\":{\"b\":{\"judge\":\"m\"}}}".to_vec(),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            model_judged_at_k(&results, &model, 4),
            Some(0.25),
            "b of a, x, b, y"
        );
        assert_eq!(model_judged_at_k(&results, &model, 1), Some(0.0));
    }
}
