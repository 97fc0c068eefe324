//! `ragate qrels accept DRAFT --tier T` (or `--into FILE`) adds reviewed drafted queries
//! (`ragate synth`) to native qrels JSONL, each stamped `drafted_by.accepted_at` (and its
//! judgments' `judged_by.at`) with the time of acceptance. The unified diff is shown first;
//! only `--yes` writes; in CI nothing is accepted unless `--force`. A qid the target already
//! has is an error: nothing is renamed or replaced silently.

use std::collections::BTreeSet;
use std::path::Path;

use crate::baseline::store;
use crate::baseline::store::accepted_utc;
use crate::error::{Error, Result};
use crate::input::native_qrels::{self, QrelsLine};
use crate::input::text_file::TextFile;
use crate::input::{self, QrelsFormat};
use crate::testset::qrels_apply::unified;

/// A draft file's lines with their line numbers, after checking the file reads as native
/// qrels and every query carries `drafted_by`.
fn draft_lines(path: &Path) -> Result<Vec<(u64, QrelsLine)>> {
    let file = TextFile::read(path)?;
    let qrels = input::read_qrels_file(&file, Some(QrelsFormat::Native))?;
    let mut lines = Vec::with_capacity(qrels.len());
    for line in file.lines() {
        let query: QrelsLine = native_qrels::parse_json_line(
            &file,
            line.number,
            line.text,
            "a native qrels line written by `ragate synth`",
        )?;
        if query.drafted_by.is_none() {
            return Err(Error::parse(
                path,
                line.number,
                "no `drafted_by`: expected a draft written by `ragate synth` (a query written by \
                 hand goes into the qrels directly)",
            ));
        }
        lines.push((line.number, query));
    }
    Ok(lines)
}

/// The drafts `--only` selects (all without it); a qid of `--only` that no draft has is an
/// error (a typo would otherwise accept nothing, silently).
fn selected(
    lines: Vec<(u64, QrelsLine)>,
    only: &[String],
    path: &Path,
) -> Result<Vec<(u64, QrelsLine)>> {
    let qids: BTreeSet<&str> = lines.iter().map(|(_, q)| q.qid.as_str()).collect();
    if let Some(missing) = only.iter().find(|qid| !qids.contains(qid.as_str())) {
        return Err(Error::input(
            path,
            format!(
                "--only {}: no such draft in the file",
                crate::error::shorten(missing)
            ),
        ));
    }
    let only: BTreeSet<&str> = only.iter().map(String::as_str).collect();
    Ok(lines
        .into_iter()
        .filter(|(_, q)| only.is_empty() || only.contains(q.qid.as_str()))
        .collect())
}

/// The draft line stamped as accepted at `at`: `drafted_by.accepted_at` and every
/// `judged_by.<doc>.at` that has none.
fn stamped(mut query: QrelsLine, at: &str) -> QrelsLine {
    if let Some(drafted_by) = &mut query.drafted_by {
        drafted_by.accepted_at = Some(at.to_string());
    }
    if let Some(judged_by) = &mut query.judged_by {
        for judgment in judged_by.0.values_mut() {
            judgment.at.get_or_insert_with(|| at.to_string());
        }
    }
    query
}

/// The target's text, empty when the file does not exist yet (the config may name a new tier's
/// file before it exists).
fn read_target(target: &Path) -> Result<String> {
    match std::fs::read_to_string(target) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(Error::io(target, e)),
    }
}

/// The qids of the target's queries (`old` is its text), which must be native qrels JSONL.
fn existing_qids(target: &Path, old: &str) -> Result<BTreeSet<String>> {
    if old.trim().is_empty() {
        return Ok(BTreeSet::new());
    }
    let file = TextFile::from_bytes(target, old.to_string().into_bytes())?;
    if input::detect_qrels_format(&file)? != QrelsFormat::Native {
        return Err(Error::input(
            target,
            "drafted queries go into native qrels JSONL (they carry query texts, answers and \
             provenance): `ragate convert` these qrels first, or pass --into a new file",
        ));
    }
    let qrels = input::read_qrels_file(&file, Some(QrelsFormat::Native))?;
    Ok(qrels.queries().iter().map(|q| q.qid.clone()).collect())
}

/// A draft with the qid of a query of the target is an error: nothing is renamed or replaced.
fn refuse_known_qids(
    lines: &[(u64, QrelsLine)],
    existing: &BTreeSet<String>,
    draft: &Path,
    target: &Path,
) -> Result<()> {
    let Some((number, query)) = lines.iter().find(|(_, q)| existing.contains(&q.qid)) else {
        return Ok(());
    };
    Err(Error::parse(
        draft,
        *number,
        format!(
            "draft `{}` has the qid of a query of {}: expected new qids (draft again with another --qid-prefix)",
            crate::error::shorten(&query.qid),
            target.display()
        ),
    ))
}

/// The target's text with the drafts appended, stamped as accepted now; checked to read back as
/// a tier (never leave qrels the gate cannot read).
fn appended(old: &str, lines: &[(u64, QrelsLine)], target: &Path) -> Result<String> {
    let at = accepted_utc()?;
    let mut new = old.to_string();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    for (_, query) in lines {
        new.push_str(&stamped(query.clone(), &at).to_json());
        new.push('\n');
    }
    if !lines.is_empty() {
        let check = TextFile::from_bytes(target, new.clone().into_bytes())?;
        input::read_qrels_file(&check, Some(QrelsFormat::Native))?;
    }
    Ok(new)
}

/// Adds the drafts of `draft` (those of `only`, else all) to `target`, written only when `write`
/// (`--yes`), and returns the report for people: the selection, the diff and what was written.
pub(crate) fn accept(draft: &Path, only: &[String], target: &Path, write: bool) -> Result<String> {
    let lines = selected(draft_lines(draft)?, only, draft)?;
    let old = read_target(target)?;
    refuse_known_qids(&lines, &existing_qids(target, &old)?, draft, target)?;
    let new = appended(&old, &lines, target)?;
    let mut report = format!(
        "{} draft(s) selected; to add to {}\n",
        lines.len(),
        target.display()
    );
    if lines.is_empty() {
        report.push_str("nothing to accept\n");
        return Ok(report);
    }
    report.push_str(&unified(&old, &new, target));
    let queries = if lines.len() == 1 { "y" } else { "ies" };
    if !write {
        report.push_str(&format!(
            "nothing written: pass --yes to add {} drafted quer{queries} to {}\n",
            lines.len(),
            target.display()
        ));
        return Ok(report);
    }
    if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    store::write_atomic(target, &new)?;
    report.push_str(&format!(
        "added {} accepted quer{queries} to {}\n",
        lines.len(),
        target.display()
    ));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acceptance_stamps_the_draft_and_its_judgments_but_keeps_an_earlier_time() {
        let draft: QrelsLine = serde_json::from_str(
            r#"{"qid": "synth-0001", "query": "q", "gold_doc_ids": ["d1", "d2"],
                "judged_by": {"d1": {"judge": "g"}, "d2": {"judge": "g", "at": "2026-01-01T00:00:00Z"}},
                "drafted_by": {"generator": "g", "seed": 1}}"#,
        )
        .unwrap();
        let accepted = stamped(draft, "2026-12-03T00:00:00Z");
        let drafted_by = accepted.drafted_by.unwrap();
        assert_eq!(
            drafted_by.accepted_at.as_deref(),
            Some("2026-12-03T00:00:00Z")
        );
        assert_eq!(drafted_by.seed, Some(1));
        let judged_by = accepted.judged_by.unwrap().into_inner();
        assert_eq!(judged_by["d1"].at.as_deref(), Some("2026-12-03T00:00:00Z"));
        assert_eq!(judged_by["d2"].at.as_deref(), Some("2026-01-01T00:00:00Z"));
    }
}
