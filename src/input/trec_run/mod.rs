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
mod tests {
    use super::*;

    fn order(entries: &[(&'static str, f64)]) -> Vec<&'static str> {
        let mut entries: Vec<RunEntry<'static>> = entries
            .iter()
            .map(|&(doc, score)| RunEntry {
                doc_id: doc.as_bytes(),
                score,
            })
            .collect();
        sort_by_trec_order(&mut entries);
        entries
            .iter()
            .map(|e| std::str::from_utf8(e.doc_id).unwrap())
            .collect()
    }

    #[test]
    fn trec_order_is_score_descending_then_doc_id_descending() {
        assert_eq!(
            order(&[("a", 1.0), ("b", 2.0), ("c", 1.0)]),
            ["b", "c", "a"]
        );
        assert_eq!(
            order(&[("a", 2.0), ("b", 2.0), ("c", 1.0)]),
            ["b", "a", "c"]
        );
        assert_eq!(
            order(&[("D10", 0.0), ("D9", -0.0), ("D100", 0.0)]),
            ["D9", "D100", "D10"]
        );
    }

    /// `queries` queries of 10..30 lines with scores of one decimal (ties included); the lines
    /// grouped by query, then the same lines in a seeded shuffled order.
    fn grouped_and_shuffled(queries: usize) -> (String, String) {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        let mut lines = Vec::new();
        for q in 0..queries {
            for rank in 1..=10 + next(21) {
                let score = next(40) as f64 / 10.0;
                lines.push(format!("q{q} Q0 d{} {rank} {score} tag\n", next(500)));
            }
        }
        let grouped = lines.concat();
        for i in (1..lines.len()).rev() {
            lines.swap(i, next(i + 1));
        }
        (grouped, lines.concat())
    }

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Each query's (doc, score) lines as `process` receives them.
    fn read(path: &Path, options: &ReadOptions) -> Result<Queries<Vec<(String, f64)>>> {
        for_each_query(path, options, |_, entries: &mut [RunEntry<'_>]| {
            entries
                .iter()
                .map(|e| (String::from_utf8(e.doc_id.to_vec()).unwrap(), e.score))
                .collect()
        })
    }

    /// A query's id, first line and (doc, score) lines.
    type Lines = (String, u64, Vec<(String, f64)>);

    /// Each query's lines in file order, with the query's first line, in first-line order.
    fn expected(text: &str) -> Vec<Lines> {
        let mut queries: Vec<Lines> = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split(' ').collect();
            let entry = (fields[2].to_string(), fields[4].parse().unwrap());
            match queries.iter_mut().find(|q| q.0 == fields[0]) {
                Some(query) => query.2.push(entry),
                None => queries.push((fields[0].to_string(), index as u64 + 1, vec![entry])),
            }
        }
        queries
    }

    /// Tiny blocks, and an ungrouped run always sorted through temporary files of `bucket_bytes`.
    fn tiny(threads: usize, bucket_bytes: u64) -> ReadOptions {
        ReadOptions {
            threads,
            block_bytes: 512,
            blocks_in_flight: 2,
            bucket_bytes,
            memory_budget: 0,
        }
    }

    /// Tiny blocks, and an ungrouped run gathered in memory up to `memory_budget` bytes.
    fn in_memory(threads: usize, memory_budget: usize) -> ReadOptions {
        ReadOptions {
            memory_budget,
            ..tiny(threads, 4 << 10)
        }
    }

    #[test]
    fn an_ungrouped_run_larger_than_the_blocks_in_flight_gives_the_grouped_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let (grouped_text, shuffled_text) = grouped_and_shuffled(300);
        // ~6,000 lines, ~140 KB: hundreds of 512-byte blocks through 2 buffers.
        assert!(shuffled_text.len() > 100 * 512, "{}", shuffled_text.len());
        let grouped = write(dir.path(), "grouped.txt", &grouped_text);
        let shuffled = write(dir.path(), "shuffled.txt", &shuffled_text);
        let from_grouped = read(&grouped, &tiny(2, 1 << 20)).unwrap();
        assert_eq!(from_grouped.ungrouped, None);
        let mut grouped_values: Vec<_> = from_grouped
            .outputs
            .into_iter()
            .map(|o| (o.qid.to_string(), o.value))
            .collect();
        grouped_values.sort_by(|a, b| a.0.cmp(&b.0));
        let expect = expected(&shuffled_text);
        // one bucket, several, and buckets so small that they are partitioned again
        for (threads, bucket_bytes) in [(1, 1 << 20), (2, 8 << 10), (3, 100)] {
            let queries = read(&shuffled, &tiny(threads, bucket_bytes)).unwrap();
            let repeat = queries.ungrouped.expect("the run is ungrouped");
            assert!(repeat.first_line < repeat.later_line);
            let actual: Vec<_> = queries
                .outputs
                .into_iter()
                .map(|o| (o.qid.to_string(), o.first_line, o.value))
                .collect();
            assert_eq!(
                actual, expect,
                "threads {threads}, buckets of {bucket_bytes}"
            );
            // the same lines as the grouped read, whatever their order within a query
            let mut values: Vec<_> = actual
                .into_iter()
                .map(|(qid, _, mut value)| {
                    let mut from_grouped = grouped_values
                        [grouped_values.binary_search_by(|g| g.0.cmp(&qid)).unwrap()]
                    .1
                    .clone();
                    value.sort_by(|a, b| a.partial_cmp(b).unwrap());
                    from_grouped.sort_by(|a, b| a.partial_cmp(b).unwrap());
                    (value, from_grouped)
                })
                .collect();
            assert!(values.iter_mut().all(|(a, b)| a == b));
            assert_eq!(values.len(), 300);
            assert!(queries.spilled);
        }
        // in memory; and a budget passed part-way, after which the run goes through files
        for (threads, budget, spilled) in
            [(1, 1 << 30, false), (2, 1 << 30, false), (2, 20_000, true)]
        {
            let queries = read(&shuffled, &in_memory(threads, budget)).unwrap();
            assert!(queries.ungrouped.is_some());
            assert_eq!(
                queries.spilled, spilled,
                "threads {threads}, budget {budget}"
            );
            let actual: Vec<_> = queries
                .outputs
                .into_iter()
                .map(|o| (o.qid.to_string(), o.first_line, o.value))
                .collect();
            assert_eq!(actual, expect, "threads {threads}, budget {budget}");
        }
    }

    /// Every `every`-th line of `text` followed by a comment line, every line whose index is a
    /// multiple of 3 with fields after the sixth; with the counts of both.
    fn with_comments_and_junk(text: &str, every: usize) -> (String, LineNotes) {
        let mut notes = LineNotes::default();
        let mut out = String::from("# a comment before any query\n");
        notes.comments += 1;
        for (index, line) in text.lines().enumerate() {
            out.push_str(line);
            if index % 3 == 0 {
                out.push_str(" more junk\tat end");
                notes.extra_fields += 1;
            }
            out.push('\n');
            if index % every == 0 {
                out.push_str("#comment with q0 Q0 words 1 2 3\n");
                notes.comments += 1;
            }
        }
        (out, notes)
    }

    #[test]
    fn comments_and_extra_fields_are_counted_alike_grouped_in_memory_and_spilled() {
        let dir = tempfile::tempdir().unwrap();
        let (grouped_text, shuffled_text) = grouped_and_shuffled(200);
        let plain = read(
            &write(dir.path(), "plain.txt", &grouped_text),
            &tiny(2, 1 << 20),
        )
        .unwrap()
        .outputs
        .into_iter()
        .map(|o| (o.qid, o.value))
        .collect::<Vec<_>>();
        let (grouped, grouped_notes) = with_comments_and_junk(&grouped_text, 7);
        let (shuffled, shuffled_notes) = with_comments_and_junk(&shuffled_text, 5);
        let grouped = write(dir.path(), "grouped.txt", &grouped);
        let shuffled = write(dir.path(), "shuffled.txt", &shuffled);
        let queries = read(&grouped, &tiny(2, 1 << 20)).unwrap();
        assert_eq!(queries.ungrouped, None);
        assert_eq!(queries.notes, grouped_notes);
        let values: Vec<_> = queries
            .outputs
            .into_iter()
            .map(|o| (o.qid, o.value))
            .collect();
        assert_eq!(values, plain, "the same queries and lines as without them");
        for options in [tiny(2, 8 << 10), in_memory(2, 1 << 30)] {
            let queries = read(&shuffled, &options).unwrap();
            assert!(queries.ungrouped.is_some());
            assert_eq!(queries.spilled, options.memory_budget == 0);
            assert_eq!(queries.notes, shuffled_notes);
            assert_eq!(queries.outputs.len(), 200);
        }
    }

    /// Each query's doc ids in trec_eval's order (ties included), as the metrics see them.
    fn ranked(path: &Path, options: &ReadOptions) -> Queries<Vec<String>> {
        for_each_query(path, options, |_, entries: &mut [RunEntry<'_>]| {
            in_trec_order(entries)
                .map(|doc| String::from_utf8(doc.to_vec()).unwrap())
                .collect()
        })
        .unwrap()
    }

    #[test]
    fn a_shuffled_run_is_not_processed_line_by_line_before_it_is_found_ungrouped() {
        let dir = tempfile::tempdir().unwrap();
        let (_, shuffled_text) = grouped_and_shuffled(300);
        let shuffled = write(dir.path(), "shuffled.txt", &shuffled_text);
        let lines = shuffled_text.lines().count();
        assert!(lines > 5_000, "{lines}");
        let calls = std::sync::atomic::AtomicUsize::new(0);
        // one 4 MiB block holds the whole run: the first pass stops at its first repeated qid
        let queries = for_each_query(&shuffled, &ReadOptions::new(2), |_, _| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
        assert!(queries.ungrouped.is_some() && !queries.spilled);
        assert_eq!(queries.outputs.len(), 300);
        let calls = calls.into_inner();
        // 300 for the queries, a few for the groups before the first repeat
        assert!(
            calls < 400,
            "{calls} calls for {lines} lines of 300 queries"
        );
    }

    #[test]
    fn a_shuffled_run_gathered_in_memory_ranks_exactly_as_the_grouped_run() {
        let dir = tempfile::tempdir().unwrap();
        // scores of one decimal among 40 values: many ties, broken by doc id
        let (grouped_text, shuffled_text) = grouped_and_shuffled(300);
        let grouped = write(dir.path(), "grouped.txt", &grouped_text);
        let shuffled = write(dir.path(), "shuffled.txt", &shuffled_text);
        let mut from_grouped: Vec<_> = ranked(&grouped, &in_memory(2, 1 << 30))
            .outputs
            .into_iter()
            .map(|o| (o.qid, o.value))
            .collect();
        from_grouped.sort_by(|a, b| a.0.cmp(&b.0));
        for threads in [1, 2, 3] {
            let queries = ranked(&shuffled, &in_memory(threads, 1 << 30));
            assert!(queries.ungrouped.is_some() && !queries.spilled);
            let mut from_shuffled: Vec<_> = queries
                .outputs
                .into_iter()
                .map(|o| (o.qid, o.value))
                .collect();
            from_shuffled.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(from_shuffled, from_grouped, "threads {threads}");
        }
    }

    #[test]
    fn duplicate_doc_ids_of_a_shuffled_query_all_reach_process_in_file_order() {
        let dir = tempfile::tempdir().unwrap();
        // `d` twice in q1 (lines 1 and 5) with different scores, across blocks of 512 bytes
        let mut text = String::from("q1 Q0 d 1 2.5 t\nq2 Q0 x 1 1 t\n");
        for i in 0..40 {
            text.push_str(&format!("q{} Q0 f{i} 2 0.5 t\n", i % 3 + 1));
        }
        text.push_str("q1 Q0 d 9 7.25 t\n");
        let path = write(dir.path(), "run.txt", &text);
        for options in [in_memory(2, 1 << 30), tiny(2, 4 << 10)] {
            let queries = read(&path, &options).unwrap();
            let actual: Vec<_> = queries
                .outputs
                .into_iter()
                .map(|o| (o.qid.to_string(), o.first_line, o.value))
                .collect();
            assert_eq!(actual, expected(&text));
            let q1 = &actual[0].2;
            assert_eq!(q1.first(), Some(&("d".to_string(), 2.5)));
            assert_eq!(q1.last(), Some(&("d".to_string(), 7.25)));
        }
    }

    #[test]
    fn errors_far_beyond_the_blocks_in_flight_are_returned_with_their_absolute_line() {
        let dir = tempfile::tempdir().unwrap();
        let (grouped_text, shuffled_text) = grouped_and_shuffled(300);
        let break_line = |text: &str, line: usize| {
            let mut lines: Vec<&str> = text.lines().collect();
            lines[line - 1] = "q1 Q0 broken";
            lines.join("\n")
        };
        // an error in the first block of a long run: the reader must not be left waiting
        let early = write(dir.path(), "early.txt", &break_line(&grouped_text, 2));
        // an error found only when the ungrouped run is read the second time
        let late = write(dir.path(), "late.txt", &break_line(&shuffled_text, 5_000));
        for (path, line) in [(early, 2), (late, 5_000)] {
            for options in [
                tiny(1, 4 << 10),
                tiny(2, 4 << 10),
                in_memory(1, 1 << 30),
                in_memory(2, 1 << 30),
            ] {
                let error = read(&path, &options).unwrap_err().to_string();
                assert!(
                    error.ends_with(&format!(":{line}: expected {EXPECTED_FIELDS}, found 3")),
                    "{error}"
                );
            }
        }
    }

    #[test]
    fn a_repeat_is_reported_with_both_lines_and_an_empty_run_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "run.txt",
            "a Q0 d 1 1 t\nb Q0 d 1 1 t\n\na Q0 e 2 0.5 t\n",
        );
        let queries = read(&path, &ReadOptions::new(2)).unwrap();
        let repeat = queries.ungrouped.unwrap();
        assert_eq!(
            (&*repeat.qid, repeat.first_line, repeat.later_line),
            ("a", 1, 4)
        );
        let values: Vec<_> = queries
            .outputs
            .iter()
            .map(|o| (&*o.qid, o.first_line, o.value.len()))
            .collect();
        assert_eq!(values, [("a", 1, 2), ("b", 2, 1)]);
        let empty = write(dir.path(), "empty.txt", "\n\n");
        let error = read(&empty, &ReadOptions::new(2)).unwrap_err().to_string();
        assert!(error.contains("the file is empty"), "{error}");
    }

    #[test]
    fn a_query_larger_than_a_bucket_is_gathered_whole() {
        let dir = tempfile::tempdir().unwrap();
        // 3,000 lines of `big` interleaved with 20 small queries: no re-partition can split it
        let text: String = (0..3_000)
            .map(|i| match i % 7 {
                0 => format!("s{} Q0 d{i} 1 {i} t\n", i % 20),
                _ => format!("big Q0 d{i} 1 {}.5 t\n", i % 13),
            })
            .collect();
        let path = write(dir.path(), "run.txt", &text);
        for options in [tiny(2, 64), tiny(2, 4 << 10), in_memory(2, 1 << 30)] {
            let queries = read(&path, &options).unwrap();
            let actual: Vec<_> = queries
                .outputs
                .into_iter()
                .map(|o| (o.qid.to_string(), o.first_line, o.value))
                .collect();
            assert_eq!(actual, expected(&text), "{options:?}");
        }
    }

    #[test]
    fn a_panic_in_process_reaches_the_caller_instead_of_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let (grouped_text, shuffled_text) = grouped_and_shuffled(300);
        let grouped = write(dir.path(), "grouped.txt", &grouped_text);
        let shuffled = write(dir.path(), "shuffled.txt", &shuffled_text);
        for path in [grouped, shuffled] {
            for (threads, memory_budget) in [(1, 0), (2, 0), (1, 1 << 30), (2, 1 << 30)] {
                let (done_tx, done_rx) = std::sync::mpsc::channel();
                let path_in_thread = path.clone();
                // A separate thread, so that a hang fails the test instead of blocking it.
                std::thread::spawn(move || {
                    let outcome = std::panic::catch_unwind(|| {
                        let options = ReadOptions {
                            memory_budget,
                            ..tiny(threads, 8 << 10)
                        };
                        for_each_query(&path_in_thread, &options, |qid, _| {
                            assert_ne!(qid, "q150", "deliberate panic");
                        })
                    });
                    let message = match outcome {
                        Ok(result) => format!("no panic: {:?}", result.map(|q| q.outputs.len())),
                        Err(panic) => panic
                            .downcast_ref::<String>()
                            .cloned()
                            .unwrap_or_else(|| "a panic without a message".to_string()),
                    };
                    let _ = done_tx.send(message);
                });
                let message = done_rx
                    .recv_timeout(std::time::Duration::from_secs(60))
                    .unwrap_or_else(|_| panic!("{}: hung after a panic", path.display()));
                assert!(
                    message.contains("deliberate panic"),
                    "{}, threads {threads}, budget {memory_budget}: {message}",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn the_lazy_trec_order_is_the_full_sort_at_every_length() {
        let (docs, scores) = (
            ["a", "b", "c", "d10", "d9"],
            [0.0, -0.0, 1.0, 2.5, 2.5, 3.0],
        );
        let mut state = 88_172_645_463_325_252u64;
        for len in [0, 1, 2, 63, 64, 65, 200, 1_000] {
            let entries: Vec<RunEntry<'static>> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    RunEntry {
                        doc_id: docs[(state % 5) as usize].as_bytes(),
                        score: scores[(state / 5 % 6) as usize] + (state / 30 % 50) as f64,
                    }
                })
                .collect();
            let mut sorted = entries.clone();
            sort_by_trec_order(&mut sorted);
            let expected: Vec<&[u8]> = sorted.iter().map(|e| e.doc_id).collect();
            for sorted_input in [false, true] {
                let mut input = if sorted_input {
                    sorted.clone()
                } else {
                    entries.clone()
                };
                let lazy = in_trec_order(&mut input);
                assert_eq!(lazy.len(), len);
                assert_eq!(lazy.collect::<Vec<_>>(), expected, "length {len}");
            }
            // taking only the top ranks gives the same prefix
            let mut input = entries.clone();
            let top: Vec<&[u8]> = in_trec_order(&mut input).take(10).collect();
            assert_eq!(top, expected[..len.min(10)]);
        }
    }
}
