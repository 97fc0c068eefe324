//! `ragate holes --judge NAME --out FILE`: a judge's proposed grade for every hole, through the
//! judge cache, written as a proposals file ([`crate::input::proposals`]). The qrels are never
//! touched: `ragate qrels apply` writes reviewed proposals.

use std::path::Path;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::input::corpus;
use crate::input::proposals::{self, Proposal};
use crate::input::qrels::Qrels;
use crate::judge::grade::GradeTask;
use crate::outputs::hand_edits::{self, Place};

use super::pool::Hole;

/// What a proposing run did.
pub(super) struct Written {
    /// Proposals written.
    pub proposals: usize,
    /// Of those, how many the judge was asked for (the others came from the cache).
    pub asked: usize,
}

/// The (query, document) tasks of `holes`: the query texts of the qrels, the documents' title
/// and text from the config's corpus. A query without text or a document outside the corpus is
/// an error naming it (a judge is never asked about an empty text).
fn tasks(config: &Config, qrels: &Qrels, holes: &[Hole]) -> Result<Vec<GradeTask>> {
    let corpus_path = config.corpus.as_deref().ok_or_else(|| {
        Error::Usage(format!(
            "{}: --judge needs the documents' texts: set `corpus:` in the config",
            config.path.display()
        ))
    })?;
    let corpus = corpus::read_optional(Some(corpus_path))?.unwrap_or_default();
    holes
        .iter()
        .map(|hole| {
            let position = qrels
                .position(&hole.qid)
                .expect("holes are of the qrels' queries");
            let question = qrels.queries()[position].text.clone().ok_or_else(|| {
                Error::input(
                    qrels.path(),
                    format!(
                        "query `{}` has no text to judge against: give the tier a `queries:` file",
                        crate::error::shorten(&hole.qid)
                    ),
                )
            })?;
            let document = corpus.get(&hole.doc_id).ok_or_else(|| {
                Error::input(
                    corpus_path,
                    format!(
                        "document `{}` (retrieved for query `{}`) is not in the corpus: expected \
                         every retrieved document's text",
                        crate::error::shorten(&hole.doc_id),
                        crate::error::shorten(&hole.qid)
                    ),
                )
            })?;
            let document = match document.title.trim() {
                "" => document.text.clone(),
                title => format!("{title}\n{}", document.text),
            };
            Ok(GradeTask {
                question,
                doc_id: hole.doc_id.clone(),
                document,
            })
        })
        .collect()
}

/// Asks judge `name` of `config` to grade every hole and writes the proposals to `out`, in the
/// holes' order. Nothing is written when any reply is malformed.
pub(super) fn run(
    config: &Config,
    qrels: &Qrels,
    name: &str,
    holes: &[Hole],
    out: &Path,
) -> Result<Written> {
    let judge = crate::run::config_judge::by_name(config, "--judge", name)?;
    let tasks = tasks(config, qrels, holes)?;
    let cache = crate::run::config_judge::run_cache(config)?;
    let (verdicts, asked) = judge.grade_cached(name, &tasks, cache.as_ref())?;
    let identity = judge.grade_identity();
    let mut text = String::new();
    for (hole, verdict) in holes.iter().zip(verdicts) {
        text.push_str(&proposals::line(&Proposal {
            qid: hole.qid.clone(),
            doc_id: hole.doc_id.clone(),
            grade: verdict.grade,
            judge: identity.clone(),
            score: verdict.score,
            rationale: verdict.rationale,
            priority: Some(hole.priority),
        }));
    }
    hand_edits::write(out, &text, Place::Named)?;
    Ok(Written {
        proposals: holes.len(),
        asked,
    })
}
