//! `ragate qrels apply PROPOSALS --tier T` writes reviewed proposals (`ragate holes --judge`)
//! into the tier's qrels file, in its own format ([`edit`]), each new judgment marked with the
//! judge that proposed it ([`crate::input::judged_by`]). The unified diff of the qrels is shown
//! first; only `--yes` writes. Existing judgments are kept unless `--overwrite`; in CI nothing
//! is applied unless `--force`, as `baseline accept` refuses.

mod edit;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use similar::TextDiff;

use crate::baseline::store;
use crate::config::{self, TierSource};
use crate::error::{Error, Result};
use crate::input::judged_by::{self, ModelJudgment};
use crate::input::proposals::{self, Proposal};
use crate::input::qrels::Qrels;
use crate::input::text_file::TextFile;
use crate::input::trec_qrels::Layout;
use crate::input::{self, QrelsFormat};
use edit::Accepted;

/// `--only qid:doc_id` pairs, split at the first `:`.
pub(crate) fn only_pairs(only: &[String]) -> Result<BTreeSet<(String, String)>> {
    only.iter()
        .map(|pair| match pair.split_once(':') {
            Some((qid, doc)) if !qid.is_empty() && !doc.is_empty() => {
                Ok((qid.to_string(), doc.to_string()))
            }
            _ => Err(Error::Usage(format!(
                "--only {pair}: expected qid:doc_id (comma-separated for several)"
            ))),
        })
        .collect()
}

/// The proposals `--only` and `--min-score` accept, in file order. A pair of `--only` that no
/// proposal has is an error (a typo would otherwise accept nothing, silently).
fn selected<'p>(
    proposals: &'p [Proposal],
    only: &BTreeSet<(String, String)>,
    min_score: Option<f64>,
    path: &Path,
) -> Result<Vec<&'p Proposal>> {
    let proposed: BTreeSet<(&str, &str)> = proposals
        .iter()
        .map(|p| (p.qid.as_str(), p.doc_id.as_str()))
        .collect();
    if let Some((qid, doc)) = only
        .iter()
        .find(|(qid, doc)| !proposed.contains(&(qid.as_str(), doc.as_str())))
    {
        return Err(Error::input(
            path,
            format!(
                "--only {}:{}: no such proposal in the file",
                crate::error::shorten(qid),
                crate::error::shorten(doc)
            ),
        ));
    }
    Ok(proposals
        .iter()
        .filter(|p| only.is_empty() || only.contains(&(p.qid.clone(), p.doc_id.clone())))
        .filter(|p| min_score.is_none_or(|min| p.score.is_some_and(|s| s >= min)))
        .collect())
}

/// The tier's qrels file (the file a sampled tier is drawn from); a BEIR folder is refused.
pub(crate) fn qrels_file(tier: &config::Tier) -> Result<PathBuf> {
    let path = match &tier.source {
        TierSource::Qrels(path) => path,
        TierSource::Sample { from, .. } => from,
    };
    if path.is_dir() {
        return Err(Error::input(
            path,
            "a BEIR folder: `ragate convert` it to native qrels JSONL first, then apply to that",
        ));
    }
    Ok(path.clone())
}

/// What the proposals do to the qrels.
struct Plan {
    accepted: Vec<Accepted>,
    /// Proposals whose document is judged already, kept (no `--overwrite`): (human, model).
    kept: (usize, usize),
    /// Judgments replaced (`--overwrite`): (human, model).
    replaced: (usize, usize),
}

/// Sorts the selected proposals into accepted and kept; a qid the qrels do not have is an error.
fn plan(
    selected: &[&Proposal],
    qrels: &Qrels,
    model_judged: &dyn Fn(&str, &str) -> bool,
    overwrite: bool,
    path: &Path,
) -> Result<Plan> {
    let mut plan = Plan {
        accepted: Vec::new(),
        kept: (0, 0),
        replaced: (0, 0),
    };
    for proposal in selected {
        let position = qrels.position(&proposal.qid).ok_or_else(|| {
            Error::input(
                path,
                format!(
                    "proposal for query `{}`, which the tier's qrels ({}) do not have",
                    crate::error::shorten(&proposal.qid),
                    qrels.path().display()
                ),
            )
        })?;
        let judged = qrels.queries()[position]
            .judgments
            .get(&proposal.doc_id)
            .is_some();
        if judged {
            let model = model_judged(&proposal.qid, &proposal.doc_id);
            let count = if overwrite {
                &mut plan.replaced
            } else {
                &mut plan.kept
            };
            if model {
                count.1 += 1;
            } else {
                count.0 += 1;
            }
            if !overwrite {
                continue;
            }
        }
        plan.accepted.push(Accepted {
            qid: proposal.qid.clone(),
            doc_id: proposal.doc_id.clone(),
            grade: proposal.grade,
            judge: proposal.judge.clone(),
        });
    }
    Ok(plan)
}

/// Ids that TREC (whitespace-separated) or TSV (tab-separated) lines can hold: an id with a
/// separator in it is an error naming it, before anything is written.
fn check_line_ids(accepted: &[Accepted], layout: Layout, path: &Path) -> Result<()> {
    let (separates, name): (fn(char) -> bool, &str) = match layout {
        Layout::Trec => (char::is_whitespace, "TREC"),
        Layout::Tsv => (|c| c == '\t', "TSV"),
    };
    let bad = accepted
        .iter()
        .flat_map(|judgment| [&judgment.qid, &judgment.doc_id])
        .find(|id| id.chars().any(separates));
    match bad {
        Some(id) => Err(Error::input(
            path,
            format!(
                "`{}` holds a field separator: {name} qrels cannot hold it; convert them to native \
                 JSONL (`ragate convert`) first",
                crate::error::shorten(id)
            ),
        )),
        None => Ok(()),
    }
}

/// A unified diff of a file's old and new text (3 lines of context).
pub(crate) fn unified(old: &str, new: &str, path: &Path) -> String {
    let name = path.display().to_string();
    TextDiff::from_lines(old, new)
        .unified_diff()
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

/// What of a proposals file to apply, as the command line selects it.
pub(crate) struct Selection<'a> {
    /// The proposals file.
    pub proposals: &'a Path,
    /// `--only qid:doc_id` pairs ([`only_pairs`]); empty for all.
    pub only: BTreeSet<(String, String)>,
    pub min_score: Option<f64>,
    pub overwrite: bool,
}

/// Model judgments recorded beside TREC and TSV qrels, by (qid, doc id).
type Sidecar = BTreeMap<(String, String), ModelJudgment>;

/// Writes the selected proposals into the tier's qrels file (and its provenance sidecar), only
/// when `write` (`--yes`), and returns the report for people: the selection, the diff and what
/// was written.
pub(crate) fn apply(tier: &config::Tier, selection: &Selection<'_>, write: bool) -> Result<String> {
    let path = qrels_file(tier)?;
    let proposals = proposals::read(&TextFile::read(selection.proposals)?)?;
    let selected = selected(
        &proposals,
        &selection.only,
        selection.min_score,
        selection.proposals,
    )?;
    let file = TextFile::read(&path)?;
    let format = input::detect_qrels_format(&file)?;
    let qrels = input::read_qrels_file(&file, Some(format))?;
    let old = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let sidecar_path = judged_by::sidecar_path(&path);
    let mut sidecar = match format {
        QrelsFormat::Native => BTreeMap::new(),
        _ => judged_by::read_sidecar(&sidecar_path)?,
    };
    let plan = checked_plan(&selected, &qrels, format, &sidecar, selection)?;
    let at = crate::baseline::store::accepted_utc()?;
    let new = edited(format, &old, &plan.accepted, &at, &path)?;
    let mut report = describe(&plan, selected.len(), proposals.len(), &path);
    if plan.accepted.is_empty() {
        report.push_str("nothing to apply\n");
        return Ok(report);
    }
    report.push_str(&unified(&old, &new, &path));
    let new_sidecar =
        (format != QrelsFormat::Native).then(|| with_accepted(&mut sidecar, &plan.accepted, &at));
    if new_sidecar.is_some() {
        report.push_str(&format!(
            "provenance (TREC and TSV qrels cannot carry it): {}\n",
            sidecar_path.display()
        ));
    }
    if !write {
        report.push_str(&format!(
            "nothing written: pass --yes to write {} judgment(s) into {}\n",
            plan.accepted.len(),
            path.display()
        ));
        return Ok(report);
    }
    store::write_atomic(&path, &new)?;
    if let Some(text) = new_sidecar {
        store::write_atomic(&sidecar_path, &text)?;
    }
    report.push_str(&format!(
        "wrote {} model judgment(s) into {}\n",
        plan.accepted.len(),
        path.display()
    ));
    Ok(report)
}

/// The plan of the selected proposals against the qrels, their ids checked against what the
/// qrels' line format can hold.
fn checked_plan(
    selected: &[&Proposal],
    qrels: &Qrels,
    format: QrelsFormat,
    sidecar: &Sidecar,
    selection: &Selection<'_>,
) -> Result<Plan> {
    let model_judged = |qid: &str, doc: &str| match format {
        QrelsFormat::Native => qrels
            .position(qid)
            .is_some_and(|p| qrels.queries()[p].judged_by.contains_key(doc)),
        _ => sidecar.contains_key(&(qid.to_string(), doc.to_string())),
    };
    let plan = plan(
        selected,
        qrels,
        &model_judged,
        selection.overwrite,
        selection.proposals,
    )?;
    if let Some(layout) = match format {
        QrelsFormat::Trec => Some(Layout::Trec),
        QrelsFormat::Tsv => Some(Layout::Tsv),
        QrelsFormat::Native | QrelsFormat::Beir => None,
    } {
        check_line_ids(&plan.accepted, layout, selection.proposals)?;
    }
    Ok(plan)
}

/// The qrels' text `old` with the accepted judgments written in, in its format; checked to read
/// back (never leave qrels the gate cannot read).
fn edited(
    format: QrelsFormat,
    old: &str,
    accepted: &[Accepted],
    at: &str,
    path: &Path,
) -> Result<String> {
    let new = match format {
        QrelsFormat::Native => {
            let mut by_qid: BTreeMap<&str, Vec<&Accepted>> = BTreeMap::new();
            for accepted in accepted {
                by_qid.entry(&accepted.qid).or_default().push(accepted);
            }
            edit::native(old, &by_qid, at)
        }
        QrelsFormat::Trec => edit::lines_format(old, Layout::Trec, accepted),
        QrelsFormat::Tsv => edit::lines_format(old, Layout::Tsv, accepted),
        QrelsFormat::Beir => {
            return Err(Error::input(
                path,
                "BEIR qrels: `ragate convert` them to native qrels JSONL first",
            ));
        }
    };
    let check = TextFile::from_bytes(path, new.clone().into_bytes())?;
    input::read_qrels_file(&check, Some(format))?;
    Ok(new)
}

/// The sidecar's text with the accepted judgments recorded, each as proposed by its judge at `at`.
fn with_accepted(sidecar: &mut Sidecar, accepted: &[Accepted], at: &str) -> String {
    for accepted in accepted {
        sidecar.insert(
            (accepted.qid.clone(), accepted.doc_id.clone()),
            ModelJudgment {
                judge: accepted.judge.clone(),
                at: Some(at.to_string()),
            },
        );
    }
    judged_by::sidecar_text(sidecar)
}

/// The lines before the diff: what was selected, kept and replaced.
fn describe(plan: &Plan, selected: usize, total: usize, path: &Path) -> String {
    let mut text = format!(
        "{selected} of {total} proposal(s) selected; {} to write into {}\n",
        plan.accepted.len(),
        path.display()
    );
    let (human, model) = plan.kept;
    if human + model > 0 {
        text.push_str(&format!(
            "kept {} existing judgment(s) ({human} human, {model} model): pass --overwrite to replace them\n",
            human + model
        ));
    }
    let (human, model) = plan.replaced;
    if human + model > 0 {
        text.push_str(&format!(
            "replacing {} existing judgment(s) ({human} human, {model} model) (--overwrite)\n",
            human + model
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proposal(qid: &str, doc: &str, score: Option<f64>) -> Proposal {
        Proposal {
            qid: qid.into(),
            doc_id: doc.into(),
            grade: 2,
            judge: "j".into(),
            score,
            rationale: None,
            priority: None,
        }
    }

    #[test]
    fn only_and_min_score_select_and_a_typo_is_an_error() {
        let proposals = vec![
            proposal("q1", "d1", Some(0.9)),
            proposal("q1", "d2", Some(0.4)),
            proposal("q2", "d1", None),
        ];
        let path = Path::new("p.jsonl");
        let pick = |only: &[&str], min: Option<f64>| -> Vec<String> {
            let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
            selected(&proposals, &only_pairs(&only).unwrap(), min, path)
                .unwrap()
                .iter()
                .map(|p| format!("{}:{}", p.qid, p.doc_id))
                .collect()
        };
        assert_eq!(pick(&[], None).len(), 3);
        assert_eq!(pick(&[], Some(0.5)), vec!["q1:d1"]);
        assert_eq!(pick(&["q1:d2", "q2:d1"], None), vec!["q1:d2", "q2:d1"]);
        assert_eq!(pick(&["q1:d2"], Some(0.5)), Vec::<String>::new());
        let typo = only_pairs(&["q1:d9".to_string()]).unwrap();
        let err = selected(&proposals, &typo, None, path)
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("--only q1:d9: no such proposal in the file"),
            "{err}"
        );
        assert!(only_pairs(&["q1".to_string()]).is_err());
    }

    #[test]
    fn ids_with_a_separator_cannot_go_to_line_qrels() {
        let accepted = |doc: &str| Accepted {
            qid: "q1".into(),
            doc_id: doc.into(),
            grade: 1,
            judge: "j".into(),
        };
        let path = Path::new("p.jsonl");
        assert!(check_line_ids(&[accepted("d 1")], Layout::Trec, path).is_err());
        assert!(check_line_ids(&[accepted("d 1")], Layout::Tsv, path).is_ok());
        let err = check_line_ids(&[accepted("d\t1")], Layout::Tsv, path)
            .unwrap_err()
            .to_string();
        assert!(err.contains("TSV qrels cannot hold it"), "{err}");
        assert!(check_line_ids(&[accepted("d1")], Layout::Trec, path).is_ok());
    }

    #[test]
    fn judged_documents_are_kept_unless_overwrite_and_counted_as_human_or_model() {
        let file = TextFile::from_bytes("q.txt", b"q1 0 d1 1\nq1 0 d2 0\n".to_vec()).unwrap();
        let qrels = input::read_qrels_file(&file, None).unwrap();
        let proposals = [
            proposal("q1", "d1", None),
            proposal("q1", "d2", None),
            proposal("q1", "d3", None),
        ];
        let selected: Vec<&Proposal> = proposals.iter().collect();
        let model = |_: &str, doc: &str| doc == "d2";
        let path = Path::new("p.jsonl");
        let kept = plan(&selected, &qrels, &model, false, path).unwrap();
        assert_eq!(kept.accepted.len(), 1);
        assert_eq!((kept.kept, kept.replaced), ((1, 1), (0, 0)));
        let replaced = plan(&selected, &qrels, &model, true, path).unwrap();
        assert_eq!(replaced.accepted.len(), 3);
        assert_eq!((replaced.kept, replaced.replaced), ((0, 0), (1, 1)));
        let unknown = [proposal("q9", "d1", None)];
        let err = plan(&[&unknown[0]], &qrels, &model, false, path)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("query `q9`, which the tier's qrels"), "{err}");
    }
}
