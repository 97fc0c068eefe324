//! Streaming, parallel reader of TREC runs (`qid Q0 doc_id rank score tag`).
//!
//! `pipeline` reads the file in blocks of about 4 MiB that end on a query boundary while worker
//! threads parse and process whole queries; the caller receives per-query outputs in file order.
//! Memory is bounded by the blocks in flight, never by the file size. Nothing is allocated per
//! line: entries borrow the block.
//!
//! A run whose queries are not contiguous (a qid reappears after other queries) is detected on
//! the way and read a second time, so that every query is still processed once with all its
//! lines: gathered by query in memory (`memory`) when the run's compact form (about three
//! quarters of its text for a shuffled run) fits [`ReadOptions::memory_budget`] (320 MiB by
//! default: a shuffled run of about 440 MB), else sorted by query through temporary files
//! (`spill`); both in bounded memory.
//!
//! Over 600 lines only for its `mod tests` (some 470 lines of block and thread boundary cases).

use std::ops::ControlFlow;
use std::path::Path;

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};

mod block;
mod memory;
mod pipeline;
mod spill;

const EXPECTED_FIELDS: &str = "6 whitespace-separated fields `qid Q0 doc_id rank score tag`";

/// One line of a run: the retrieved document and its score. The id is bytes: the reader has
/// checked that the file is UTF-8, and only the ids that metrics look up need to become `str`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunEntry<'a> {
    /// The document id, as the file spells it.
    pub doc_id: &'a [u8],
    /// The run's score of the document.
    pub score: f64,
}

/// Lines of a run that were read but not scored whole: comment lines (starting with `#`, as
/// trec_eval skips them) and lines with fields after the sixth (`tag`), which are ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineNotes {
    /// Lines starting with `#`, skipped.
    pub comments: u64,
    /// Lines with more than six fields, read up to the sixth.
    pub extra_fields: u64,
}

impl LineNotes {
    /// Adds the counts of `other`.
    pub fn add(&mut self, other: LineNotes) {
        self.comments += other.comments;
        self.extra_fields += other.extra_fields;
    }
}

/// The processed result of one query's lines.
#[derive(Debug)]
pub struct QueryOutput<R> {
    /// The query's id.
    pub qid: Box<str>,
    /// The 1-based line number of the query's first line.
    pub first_line: u64,
    /// What the caller's function computed from the query's entries.
    pub value: R,
}

/// Joins a scope's workers (a worker's panic resumes on this thread, after all have finished)
/// and merges their outputs in file order (by each query's first line).
fn join_in_file_order<R>(
    handles: Vec<std::thread::ScopedJoinHandle<'_, Result<Vec<QueryOutput<R>>>>>,
) -> Result<Vec<QueryOutput<R>>> {
    let results: Vec<Result<Vec<QueryOutput<R>>>> = handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
        .collect();
    let mut outputs = Vec::new();
    for result in results {
        outputs.extend(result?);
    }
    outputs.sort_unstable_by_key(|output| output.first_line);
    Ok(outputs)
}

/// The first query found not contiguous: its first line and the line where it reappeared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// The query's id.
    pub qid: Box<str>,
    /// The 1-based line of its first entry.
    pub first_line: u64,
    /// The 1-based line where it appeared again after other queries.
    pub later_line: u64,
}

/// Every query of a run, processed once.
#[derive(Debug)]
pub struct Queries<R> {
    /// One output per query, in the order of the queries' first lines.
    pub outputs: Vec<QueryOutput<R>>,
    /// Set when the run was not grouped by query (it was then read again and gathered by query).
    pub ungrouped: Option<Repeat>,
    /// Whether the ungrouped run was sorted through temporary files, its compact form being
    /// larger than the memory budget (false: gathered in memory, or grouped).
    pub spilled: bool,
    /// The run's comment lines and lines with extra fields.
    pub notes: LineNotes,
}

/// Sizes of the reader. The defaults suit real runs; tests shrink them to cross every boundary
/// with small files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Worker threads.
    pub threads: usize,
    /// Bytes read into one block (a block grows to hold a query larger than this).
    pub block_bytes: usize,
    /// Blocks that may exist at once between the reader thread and the caller.
    pub blocks_in_flight: usize,
    /// Target size of one temporary file when an ungrouped run is sorted by query: each worker
    /// holds one such file (and its entries) in memory at a time.
    pub bucket_bytes: u64,
    /// Bytes the compact form of an ungrouped run may take in memory; beyond it the run is
    /// sorted through temporary files instead (0: always through temporary files).
    pub memory_budget: usize,
}

/// The default [`ReadOptions::memory_budget`]: with the blocks in flight, the workers' scratch
/// and the process's own needs (the qrels), an ungrouped run stays under 512 MiB of peak memory.
pub const DEFAULT_MEMORY_BUDGET: usize = 320 << 20;

impl ReadOptions {
    /// The defaults for `threads` workers: 4 MiB blocks, two in flight per worker plus two, an
    /// ungrouped run gathered in memory up to [`DEFAULT_MEMORY_BUDGET`], and beyond it temporary
    /// files that keep the workers' share of an ungrouped run to about 64 MiB.
    pub fn new(threads: usize) -> Self {
        let threads = threads.max(1);
        ReadOptions {
            threads,
            block_bytes: 4 << 20,
            blocks_in_flight: 2 * threads + 2,
            bucket_bytes: ((64u64 << 20) / threads as u64).max(4 << 20),
            memory_budget: DEFAULT_MEMORY_BUDGET,
        }
    }
}

/// Parses the run at `path` on `options.threads` workers and calls `process(qid, entries)` once
/// per query with all of its lines, entries in file order (`process` may reorder them). A run
/// grouped by query is read once; an ungrouped one is detected and read again, gathered by query
/// in memory (see `memory`) or, beyond the memory budget, through temporary files (see
/// `spill`), with the same outputs in the same order.
pub fn for_each_query<R, F>(path: &Path, options: &ReadOptions, process: F) -> Result<Queries<R>>
where
    R: Send,
    F: Fn(&str, &mut [RunEntry<'_>]) -> R + Sync,
{
    let mut outputs: Vec<QueryOutput<R>> = Vec::new();
    let mut seen: FxHashMap<Box<str>, u64> = FxHashMap::default();
    let mut repeat: Option<Repeat> = None;
    // A worker stops processing its block at the block's first repeated qid: in a shuffled run
    // nearly every line is a group of its own, and processing each would be wasted.
    let work = |bytes: &[u8]| {
        let mut outputs = Vec::new();
        let mut in_block: FxHashMap<&str, u64> = FxHashMap::default();
        let mut block_repeat: Option<Repeat> = None;
        let scan = block::parse(bytes, |qid, first_line, entries| {
            if block_repeat.is_some() {
                return;
            }
            if let Some(&first) = in_block.get(qid) {
                block_repeat = Some(Repeat {
                    qid: qid.into(),
                    first_line: first,
                    later_line: first_line,
                });
                return;
            }
            in_block.insert(qid, first_line);
            outputs.push(QueryOutput {
                qid: qid.into(),
                first_line,
                value: process(qid, entries),
            });
        });
        pipeline::Parsed {
            value: (outputs, block_repeat),
            line_count: scan.line_count,
            notes: scan.notes,
            error: scan.error,
        }
    };
    let notes = pipeline::run(
        path,
        options,
        work,
        |(block, block_repeat), lines_before| {
            for mut output in block {
                output.first_line += lines_before;
                if let Some(&first_line) = seen.get(&output.qid) {
                    repeat = Some(Repeat {
                        qid: output.qid,
                        first_line,
                        later_line: output.first_line,
                    });
                    return Ok(ControlFlow::Break(()));
                }
                seen.insert(output.qid.clone(), output.first_line);
                outputs.push(output);
            }
            if let Some(found) = block_repeat {
                // Its first group in the block was among the outputs: not seen in an earlier block.
                repeat = Some(Repeat {
                    first_line: lines_before + found.first_line,
                    later_line: lines_before + found.later_line,
                    ..found
                });
                return Ok(ControlFlow::Break(()));
            }
            Ok(ControlFlow::Continue(()))
        },
    )?;
    drop(seen);
    if let Some(repeat) = repeat {
        drop(outputs);
        // The first reading stopped at the repeat: the notes are those of the second one.
        if let Some((outputs, notes)) = memory::for_each_query(path, options, &process)? {
            return Ok(Queries {
                outputs,
                ungrouped: Some(repeat),
                spilled: false,
                notes,
            });
        }
        let (outputs, notes) = spill::for_each_query(path, options, &process)?;
        return Ok(Queries {
            outputs,
            ungrouped: Some(repeat),
            spilled: true,
            notes,
        });
    }
    if outputs.is_empty() {
        return Err(empty_run(path));
    }
    Ok(Queries {
        outputs,
        ungrouped: None,
        spilled: false,
        notes,
    })
}

fn empty_run(path: &Path) -> Error {
    Error::input(
        path,
        format!("the file is empty: expected TREC run lines with {EXPECTED_FIELDS}"),
    )
}

/// Orders one query's entries as trec_eval ranks them: score descending, ties by doc_id
/// descending (byte order). Runs usually come sorted by score already; then only runs of equal
/// scores are put in order, and nothing moves when those are in order too.
pub fn sort_by_trec_order(entries: &mut [RunEntry<'_>]) {
    if !is_in_score_order(entries) {
        entries.sort_by(trec_cmp);
        return;
    }
    for ties in entries.chunk_by_mut(|a, b| a.score == b.score) {
        if ties.len() > 1 {
            ties.sort_by(|a, b| b.doc_id.cmp(a.doc_id));
        }
    }
}

/// Whether no entry scores higher than the one before it (ties may still need ordering).
pub fn is_in_score_order(entries: &[RunEntry<'_>]) -> bool {
    !entries.windows(2).any(|w| w[0].score < w[1].score)
}

/// trec_eval's order of two entries: `Less` when `a` ranks ahead of `b` (higher score, or the
/// same score and the greater doc id in byte order).
pub fn trec_cmp(a: &RunEntry<'_>, b: &RunEntry<'_>) -> std::cmp::Ordering {
    b.score
        .partial_cmp(&a.score)
        .unwrap_or(std::cmp::Ordering::Equal)
        .then_with(|| b.doc_id.cmp(a.doc_id))
}

/// The doc ids of one query's entries in trec_eval's order (as [`sort_by_trec_order`]), ordered
/// lazily: entries already in score order cost one pass; otherwise only the ranks taken are
/// sorted, in chunks that double (a selection of the next chunk, then a sort of it), so a
/// shuffled query of 1,000 lines scored to depth 100 is not sorted whole.
pub fn in_trec_order<'e, 'a>(entries: &'e mut [RunEntry<'a>]) -> TrecOrder<'e, 'a> {
    let sorted = if is_in_score_order(entries) {
        sort_by_trec_order(entries);
        entries.len()
    } else {
        0
    };
    TrecOrder {
        entries,
        sorted,
        next: 0,
    }
}

/// Iterator of [`in_trec_order`].
pub struct TrecOrder<'e, 'a> {
    entries: &'e mut [RunEntry<'a>],
    /// Entries before this index are in their final place.
    sorted: usize,
    next: usize,
}

impl<'a> Iterator for TrecOrder<'_, 'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.next == self.sorted {
            let rest = &mut self.entries[self.sorted..];
            if rest.is_empty() {
                return None;
            }
            let chunk = self.sorted.max(64).min(rest.len());
            if chunk < rest.len() {
                rest.select_nth_unstable_by(chunk - 1, trec_cmp);
            }
            // Entries that compare equal are equal (same score, same id): any order of them is.
            rest[..chunk].sort_unstable_by(trec_cmp);
            self.sorted += chunk;
        }
        let doc_id = self.entries[self.next].doc_id;
        self.next += 1;
        Some(doc_id)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.entries.len() - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for TrecOrder<'_, '_> {}

#[cfg(test)]
mod tests;
