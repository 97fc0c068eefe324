//! Runs not grouped by query, gathered by query in memory when their compact form fits a budget.
//!
//! The block pipeline parses the run in parallel; each worker splits its block's lines by a hash
//! of the qid into [`PARTS`] partitions, appending each group of contiguous lines of one query to
//! its partition in a compact form (`qid_len qid first_line count (doc_len doc score_bits)*`,
//! integers as varints, the score as its 8 bytes: about 28 bytes a line of a shuffled run against
//! 37 of text). Appending to a few dozen partitions is sequential and stays in cache, where a
//! lookup per line in a dictionary of all the block's qids (thousands in a shuffled run) would
//! miss it. Once the file is read, each worker takes one partition at a time, gathers its queries
//! (a few hundred: that dictionary stays in cache) from every block in file order, so each query's
//! lines are in file order, and processes each query once. No temporary file is written, and the
//! run is parsed once more only (after the first pass that found it ungrouped).
//!
//! Memory: the compact form is counted as it is kept. When it passes
//! [`ReadOptions::memory_budget`] the read stops, what was kept is dropped and the caller sorts
//! the run through temporary files instead ([`super::spill`]), so memory stays bounded by the
//! budget plus the blocks in flight, whatever the run's size. Processing adds per worker one
//! partition's lines three times (about 80 bytes a line) and their doc ids once. The outputs
//! are exactly the grouped reader's, in the order of the queries' first lines.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustc_hash::FxHashMap;

use super::spill::{QidKey, bucket_of, get_slice, get_varint, put_varint};
use super::{LineNotes, QueryOutput, ReadOptions, RunEntry, block, pipeline};
use crate::error::{Error, Result};

/// Partitions of every block (and units of work when processing).
const PARTS: usize = 64;

/// One block's groups split into [`PARTS`] partitions, with the lines before the block.
struct Chunk {
    lines_before: u64,
    parts: Vec<Vec<u8>>,
}

impl Chunk {
    /// Bytes the chunk holds on the heap.
    fn heap_bytes(&self) -> usize {
        self.parts.iter().map(Vec::capacity).sum::<usize>()
            + self.parts.capacity() * std::mem::size_of::<Vec<u8>>()
    }
}

/// Splits one parsed block's groups into partitions by qid.
fn partition_block(bytes: &[u8]) -> pipeline::Parsed<Vec<Vec<u8>>> {
    // The compact form of a line is about 3/4 of its text: room for a little more, so that a
    // part rarely grows (a copy) and needs no shrinking (another copy) before it is kept.
    let estimate = bytes.len() * 13 / 16 / PARTS;
    let mut parts: Vec<Vec<u8>> = (0..PARTS).map(|_| Vec::with_capacity(estimate)).collect();
    let scan = block::parse(bytes, |qid, first_line, group| {
        let part = &mut parts[bucket_of(qid.as_bytes(), 0, PARTS)];
        put_varint(part, qid.len() as u64);
        part.extend_from_slice(qid.as_bytes());
        put_varint(part, first_line);
        put_varint(part, group.len() as u64);
        for entry in group.iter() {
            put_varint(part, entry.doc_id.len() as u64);
            part.extend_from_slice(entry.doc_id);
            part.extend_from_slice(&entry.score.to_bits().to_le_bytes());
        }
    });
    for part in &mut parts {
        if part.capacity() > part.len() + part.len() / 4 {
            part.shrink_to_fit();
        }
    }
    pipeline::Parsed {
        value: parts,
        line_count: scan.line_count,
        notes: scan.notes,
        error: scan.error,
    }
}

/// Reads the run at `path` (known to be ungrouped) and calls `process` once per query with all
/// its lines in file order; the outputs come back in the order of the queries' first lines.
/// `Ok(None)` when the run's compact form would pass `options.memory_budget`: nothing is kept.
/// The outputs come with the run's comment lines and lines with extra fields.
pub(super) fn for_each_query<R, F>(
    path: &Path,
    options: &ReadOptions,
    process: &F,
) -> Result<Option<(Vec<QueryOutput<R>>, LineNotes)>>
where
    R: Send,
    F: Fn(&str, &mut [RunEntry<'_>]) -> R + Sync,
{
    let budget = options.memory_budget;
    if budget == 0 {
        return Ok(None);
    }
    let mut chunks: Vec<Chunk> = Vec::new();
    let (mut used, mut over, mut any_line) = (0usize, false, false);
    let notes = pipeline::run(path, options, partition_block, |parts, lines_before| {
        any_line |= parts.iter().any(|part| !part.is_empty());
        let chunk = Chunk {
            lines_before,
            parts,
        };
        used += chunk.heap_bytes() + std::mem::size_of::<Chunk>();
        chunks.push(chunk);
        if used > budget {
            over = true;
            return Ok(ControlFlow::Break(()));
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if over {
        return Ok(None);
    }
    if !any_line {
        return Err(super::empty_run(path));
    }
    process_all(path, options.threads, &chunks, process).map(|outputs| Some((outputs, notes)))
}

/// Processes every query on `threads` workers, each taking one partition at a time.
fn process_all<R, F>(
    path: &Path,
    threads: usize,
    chunks: &[Chunk],
    process: &F,
) -> Result<Vec<QueryOutput<R>>>
where
    R: Send,
    F: Fn(&str, &mut [RunEntry<'_>]) -> R + Sync,
{
    let next = AtomicUsize::new(0);
    let work = || {
        let mut outputs = Vec::new();
        let mut scratch = Scratch::default();
        loop {
            let part = next.fetch_add(1, Ordering::Relaxed);
            if part >= PARTS {
                return Ok(outputs);
            }
            gather(chunks, part, &mut scratch, process, &mut outputs).ok_or_else(|| {
                Error::input(
                    path,
                    "internal error: the run's lines gathered in memory are damaged; please \
                     report this",
                )
            })?;
        }
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads.clamp(1, PARTS))
            .map(|_| scope.spawn(work))
            .collect();
        super::join_in_file_order(handles)
    })
}

/// A worker's buffers, reused from one partition to the next.
#[derive(Default)]
struct Scratch<'c> {
    /// Every line of the partition with its query's slot, in file order.
    lines: Vec<(u32, RunEntry<'c>)>,
    /// The doc ids of the same lines, each query's together (a counting sort of `lines` by
    /// slot): scoring a query then reads its ids from one place, not from every chunk.
    ids: Vec<u8>,
    /// Where each line's id is in `ids` (start, end), with its score, in the sorted order.
    placed: Vec<(usize, usize, f64)>,
}

/// Gathers the queries of partition `part` from every chunk, in file order, and processes each
/// once; None when a record is damaged.
fn gather<'c, R, F>(
    chunks: &'c [Chunk],
    part: usize,
    scratch: &mut Scratch<'c>,
    process: &F,
    outputs: &mut Vec<QueryOutput<R>>,
) -> Option<()>
where
    F: Fn(&str, &mut [RunEntry<'_>]) -> R,
{
    struct Query<'c> {
        qid: &'c str,
        first_line: u64,
        /// Lines, then (once counted) where the query's lines start in the sorted order.
        lines: usize,
        start: usize,
        /// Bytes of the query's doc ids, then where they start in `scratch.ids`.
        id_bytes: usize,
        id_start: usize,
    }
    let mut slots: FxHashMap<QidKey<'c>, u32> = FxHashMap::default();
    let mut queries: Vec<Query<'c>> = Vec::new();
    let lines = &mut scratch.lines;
    lines.clear();
    for chunk in chunks {
        let bytes = &chunk.parts[part][..];
        let mut at = 0;
        while at < bytes.len() {
            let qid_len = get_varint(bytes, &mut at)?;
            let qid = get_slice(bytes, &mut at, qid_len)?;
            let first_line = get_varint(bytes, &mut at)?;
            let count = get_varint(bytes, &mut at)?;
            let key = QidKey::of(qid);
            let slot = match slots.get(&key) {
                Some(&slot) => slot,
                None => {
                    let slot = u32::try_from(queries.len()).ok()?;
                    slots.insert(key, slot);
                    queries.push(Query {
                        qid: std::str::from_utf8(qid).ok()?,
                        first_line: chunk.lines_before + first_line,
                        lines: 0,
                        start: 0,
                        id_bytes: 0,
                        id_start: 0,
                    });
                    slot
                }
            };
            let query = &mut queries[slot as usize];
            query.lines += usize::try_from(count).ok()?;
            for _ in 0..count {
                let doc_len = get_varint(bytes, &mut at)?;
                let doc_id = get_slice(bytes, &mut at, doc_len)?;
                query.id_bytes += doc_id.len();
                let score = get_slice(bytes, &mut at, 8)?;
                let score = f64::from_bits(u64::from_le_bytes(score.try_into().ok()?));
                lines.push((slot, RunEntry { doc_id, score }));
            }
        }
    }
    drop(slots);
    let (mut total, mut total_id_bytes) = (0, 0);
    for query in &mut queries {
        query.start = total;
        total += query.lines;
        query.id_start = total_id_bytes;
        total_id_bytes += query.id_bytes;
    }
    let (ids, placed) = (&mut scratch.ids, &mut scratch.placed);
    ids.clear();
    ids.resize(total_id_bytes, 0);
    placed.clear();
    placed.resize(total, (0, 0, 0.0));
    let mut next: Vec<(usize, usize)> = queries
        .iter()
        .map(|query| (query.start, query.id_start))
        .collect();
    for &(slot, entry) in lines.iter() {
        let (line, byte) = &mut next[slot as usize];
        let end = *byte + entry.doc_id.len();
        ids[*byte..end].copy_from_slice(entry.doc_id);
        placed[*line] = (*byte, end, entry.score);
        *line += 1;
        *byte = end;
    }
    let ids = &scratch.ids[..];
    let mut sorted: Vec<RunEntry<'_>> = placed
        .iter()
        .map(|&(start, end, score)| RunEntry {
            doc_id: &ids[start..end],
            score,
        })
        .collect();
    for query in &queries {
        outputs.push(QueryOutput {
            qid: query.qid.into(),
            first_line: query.first_line,
            value: process(
                query.qid,
                &mut sorted[query.start..query.start + query.lines],
            ),
        });
    }
    Some(())
}
