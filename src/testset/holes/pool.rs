//! TREC-style pooling of judgment holes: the union of every run's top-k documents per query,
//! less what the qrels judge, each hole scored by how much a judgment of it can move the
//! gated metrics.
//!
//! The score of a hole is the sum, over the runs that retrieved it within the depth, of 1/rank
//! (rank 1-based, after chunk ids are mapped to documents and repeats dropped). The gated
//! retrieval metrics weigh a document by its rank (MRR by 1/rank, nDCG by 1/log2(rank+1),
//! precision@k and recall@k equally within k): 1/rank is MRR's weight, and summing over runs
//! favours what several systems retrieve, so the first judgments fill the holes that move most
//! runs' top ranks. Ties go to the best (smallest) rank, then qid and doc_id in byte order: the
//! order is deterministic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::Result;
use crate::evaluate::document_of;
use crate::input::qrels::Qrels;
use crate::input::text_file::TextFile;
use crate::input::trec_run::{self, ReadOptions};
use crate::input::{RunFormat, detect_run_format, run};

/// One run's top documents per query, in rank order (chunk ids mapped, repeats dropped).
pub(crate) type Ranking = BTreeMap<String, Vec<String>>;

/// The documents of `retrieved` (ids in rank order) as a ranking: chunk ids mapped to their
/// documents with `separator`, a document's later chunks dropped, cut at `depth`.
fn top_documents<'a>(
    retrieved: impl Iterator<Item = &'a [u8]>,
    depth: usize,
    separator: Option<&str>,
) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut top = Vec::new();
    for id in retrieved {
        if top.len() == depth {
            break;
        }
        let doc = String::from_utf8_lossy(document_of(id, separator)).into_owned();
        if seen.insert(doc.clone()) {
            top.push(doc);
        }
    }
    top
}

/// The top `depth` documents per query of the run at `path` (native JSONL or TREC, detected).
/// The top `depth` documents per query of a native run (a file, or a pipeline's output).
pub(crate) fn native_ranking(
    file: &TextFile,
    depth: usize,
    separator: Option<&str>,
) -> Result<Ranking> {
    Ok(run::read(file)?
        .into_iter()
        .map(|query| {
            let ids = query.retrieved.iter().map(|r| r.doc_id.as_bytes());
            (query.qid, top_documents(ids, depth, separator))
        })
        .collect())
}

pub(crate) fn read_run(
    path: &Path,
    depth: usize,
    separator: Option<&str>,
    threads: usize,
) -> Result<Ranking> {
    match detect_run_format(path)? {
        RunFormat::Native => native_ranking(&TextFile::read(path)?, depth, separator),
        RunFormat::Trec => {
            let queries =
                trec_run::for_each_query(path, &ReadOptions::new(threads), |_, entries| {
                    top_documents(trec_run::in_trec_order(entries), depth, separator)
                })?;
            Ok(queries
                .outputs
                .into_iter()
                .map(|output| (output.qid.into_string(), output.value))
                .collect())
        }
    }
}

/// A retrieved document the qrels do not judge.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hole {
    /// The query.
    pub qid: String,
    /// The unjudged document.
    pub doc_id: String,
    /// Sum over the runs that retrieved it of 1/rank.
    pub priority: f64,
    /// Its best (smallest) rank in any run, 1-based.
    pub best_rank: usize,
    /// How many runs retrieved it within the depth.
    pub runs: usize,
}

/// What the pool held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PoolStats {
    /// Queries of the qrels that some run retrieved documents for.
    pub queries: usize,
    /// Distinct (query, document) pairs in the pool.
    pub pooled: usize,
    /// Of those, how many the qrels judge.
    pub judged: usize,
    /// Queries of the runs that the qrels do not have (not pooled: nothing to judge them by).
    pub unknown_queries: usize,
}

/// The holes of the pool of `runs` against `qrels`, best first, with the pool's counts.
pub(crate) fn holes(runs: &[Ranking], qrels: &Qrels) -> (Vec<Hole>, PoolStats) {
    let mut pool: BTreeMap<(&str, &str), Hole> = BTreeMap::new();
    let mut stats = PoolStats::default();
    let mut queries = BTreeSet::new();
    let mut unknown = BTreeSet::new();
    for ranking in runs {
        for (qid, docs) in ranking {
            let Some(position) = qrels.position(qid) else {
                unknown.insert(qid.as_str());
                continue;
            };
            let judgments = &qrels.queries()[position].judgments;
            if !docs.is_empty() {
                queries.insert(qid.as_str());
            }
            for (index, doc) in docs.iter().enumerate() {
                let rank = index + 1;
                let hole = pool.entry((qid, doc)).or_insert_with(|| Hole {
                    qid: qid.clone(),
                    doc_id: doc.clone(),
                    priority: 0.0,
                    best_rank: rank,
                    runs: 0,
                });
                if hole.runs == 0 {
                    stats.pooled += 1;
                    stats.judged += usize::from(judgments.get(doc).is_some());
                }
                hole.priority += 1.0 / rank as f64;
                hole.best_rank = hole.best_rank.min(rank);
                hole.runs += 1;
            }
        }
    }
    stats.queries = queries.len();
    stats.unknown_queries = unknown.len();
    let mut holes: Vec<Hole> = pool
        .into_values()
        .filter(|hole| {
            let position = qrels
                .position(&hole.qid)
                .expect("pooled queries are in the qrels");
            qrels.queries()[position]
                .judgments
                .get(&hole.doc_id)
                .is_none()
        })
        .collect();
    holes.sort_by(|a, b| {
        b.priority
            .total_cmp(&a.priority)
            .then(a.best_rank.cmp(&b.best_rank))
            .then_with(|| a.qid.cmp(&b.qid))
            .then_with(|| a.doc_id.cmp(&b.doc_id))
    });
    (holes, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::read_qrels_file;

    fn qrels(text: &str) -> Qrels {
        let file = TextFile::from_bytes("qrels.txt", text.as_bytes().to_vec()).unwrap();
        read_qrels_file(&file, None).unwrap()
    }

    fn ranking(entries: &[(&str, &[&str])]) -> Ranking {
        entries
            .iter()
            .map(|(qid, docs)| {
                (
                    qid.to_string(),
                    docs.iter().map(|d| d.to_string()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn holes_are_pooled_across_runs_and_ranked_by_the_sum_of_reciprocal_ranks() {
        let qrels = qrels("q1 0 d1 1\nq2 0 d9 0\n");
        let a = ranking(&[
            ("q1", &["d1", "d2", "d3"]),
            ("q2", &["d4"]),
            ("qx", &["d1"]),
        ]);
        let b = ranking(&[("q1", &["d3", "d1", "d5"])]);
        let (holes, stats) = holes(&[a, b], &qrels);
        let shape: Vec<(&str, &str, f64, usize, usize)> = holes
            .iter()
            .map(|h| {
                (
                    h.qid.as_str(),
                    h.doc_id.as_str(),
                    h.priority,
                    h.best_rank,
                    h.runs,
                )
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                ("q1", "d3", 1.0 + 1.0 / 3.0, 1, 2),
                ("q2", "d4", 1.0, 1, 1),
                ("q1", "d2", 0.5, 2, 1),
                ("q1", "d5", 1.0 / 3.0, 3, 1),
            ]
        );
        assert_eq!(
            stats,
            PoolStats {
                queries: 2,
                pooled: 5,
                judged: 1,
                unknown_queries: 1
            }
        );
    }

    #[test]
    fn ties_go_to_the_best_rank_then_the_ids() {
        let qrels = qrels("q1 0 d0 1\nq2 0 d0 1\n");
        let a = ranking(&[("q2", &["b", "a"]), ("q1", &["x"])]);
        let b = ranking(&[("q2", &["a", "b"])]);
        let (holes, _) = holes(&[a, b], &qrels);
        let order: Vec<(&str, &str)> = holes
            .iter()
            .map(|h| (h.qid.as_str(), h.doc_id.as_str()))
            .collect();
        // a and b: 1.5 each, best rank 1: by id; x: 1.0.
        assert_eq!(order, vec![("q2", "a"), ("q2", "b"), ("q1", "x")]);
    }

    #[test]
    fn chunks_count_as_their_document_once_within_the_depth() {
        let ids: Vec<&[u8]> = vec![b"d1#0", b"d1#1", b"d2#0", b"d3#4"];
        assert_eq!(
            top_documents(ids.iter().copied(), 2, Some("#")),
            vec!["d1".to_string(), "d2".to_string()]
        );
        assert_eq!(top_documents(ids.iter().copied(), 2, None).len(), 2);
    }

    #[test]
    fn native_and_trec_runs_are_read_to_the_depth() {
        let dir = tempfile::tempdir().unwrap();
        let native = dir.path().join("run.jsonl");
        std::fs::write(
            &native,
            "{\"qid\":\"q1\",\"retrieved\":[{\"doc_id\":\"a\"},{\"doc_id\":\"b\"},{\"doc_id\":\"c\"}]}\n",
        )
        .unwrap();
        assert_eq!(read_run(&native, 2, None, 1).unwrap()["q1"], vec!["a", "b"]);
        let trec = dir.path().join("run.txt");
        // Out of score order: trec_eval's order is by score.
        std::fs::write(&trec, "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 3.0 t\nq1 Q0 c 3 2.0 t\n").unwrap();
        assert_eq!(read_run(&trec, 2, None, 1).unwrap()["q1"], vec!["b", "c"]);
    }
}
