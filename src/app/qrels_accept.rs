//! `ragate qrels accept DRAFT --tier T` (or `--into FILE`): adds reviewed drafted queries
//! (`ragate synth`) to native qrels JSONL, each stamped `drafted_by.accepted_at` (and its
//! judgments' `judged_by.at`) with the time of acceptance. The unified diff is shown first;
//! only `--yes` writes; in CI nothing is accepted unless `--force`. A qid the target already
//! has is an error: nothing is renamed or replaced silently.

use std::collections::BTreeSet;
use std::path::Path;

use crate::app::qrels_apply::{qrels_file, unified};
use crate::app::{baseline, write_human};
use crate::baseline::store;
use crate::cli::QrelsAcceptArgs;
use crate::config;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::input::native_qrels::{self, QrelsLine};
use crate::input::text_file::TextFile;
use crate::input::{self, QrelsFormat};

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

pub(super) fn run(args: QrelsAcceptArgs) -> Result<i32> {
    if crate::env::is_ci() && !args.force {
        return Err(Error::Usage(
            "refusing to accept drafted queries in CI (CI is set): review them and accept them locally, or pass --force"
                .to_string(),
        ));
    }
    let target = match (&args.into, &args.tier) {
        (Some(into), _) => into.clone(),
        (None, Some(tier)) => {
            let config = config::load(&args.config)?;
            qrels_file(config.tier(tier)?)?
        }
        (None, None) => unreachable!("clap requires --tier or --into"),
    };
    let lines = selected(draft_lines(&args.draft)?, &args.only, &args.draft)?;
    let old = match std::fs::read_to_string(&target) {
        Ok(text) => text,
        // A new tier's file: the config may name it before it exists.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(&target, e)),
    };
    let existing: BTreeSet<String> = if old.trim().is_empty() {
        BTreeSet::new()
    } else {
        let file = TextFile::from_bytes(&target, old.clone().into_bytes())?;
        if input::detect_qrels_format(&file)? != QrelsFormat::Native {
            return Err(Error::input(
                &target,
                "drafted queries go into native qrels JSONL (they carry query texts, answers and \
                 provenance): `ragate convert` these qrels first, or pass --into a new file",
            ));
        }
        let qrels = input::read_qrels_file(&file, Some(QrelsFormat::Native))?;
        qrels.queries().iter().map(|q| q.qid.clone()).collect()
    };
    if let Some((number, query)) = lines.iter().find(|(_, q)| existing.contains(&q.qid)) {
        return Err(Error::parse(
            &args.draft,
            *number,
            format!(
                "draft `{}` has the qid of a query of {}: expected new qids (draft again with another --qid-prefix)",
                crate::error::shorten(&query.qid),
                target.display()
            ),
        ));
    }
    let at = baseline::accepted_utc()?;
    let mut new = old.clone();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    for (_, query) in &lines {
        new.push_str(&stamped(query.clone(), &at).to_json());
        new.push('\n');
    }
    // What is written must read back as a tier: never leave qrels the gate cannot read.
    if !lines.is_empty() {
        let check = TextFile::from_bytes(&target, new.clone().into_bytes())?;
        input::read_qrels_file(&check, Some(QrelsFormat::Native))?;
    }
    let mut report = format!(
        "{} draft(s) selected; to add to {}\n",
        lines.len(),
        target.display()
    );
    if lines.is_empty() {
        report.push_str("nothing to accept\n");
        write_human(&report)?;
        return Ok(exit_code::SUCCESS);
    }
    report.push_str(&unified(&old, &new, &target));
    if !args.yes {
        report.push_str(&format!(
            "nothing written: pass --yes to add {} drafted quer{} to {}\n",
            lines.len(),
            if lines.len() == 1 { "y" } else { "ies" },
            target.display()
        ));
        write_human(&report)?;
        return Ok(exit_code::SUCCESS);
    }
    if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    store::write_atomic(&target, &new)?;
    report.push_str(&format!(
        "added {} accepted quer{} to {}\n",
        lines.len(),
        if lines.len() == 1 { "y" } else { "ies" },
        target.display()
    ));
    write_human(&report)?;
    Ok(exit_code::SUCCESS)
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
