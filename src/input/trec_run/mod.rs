//! Streaming, parallel reader of TREC runs (`qid Q0 doc_id rank score tag`).
//!
//! A reader thread fills blocks of about 4 MiB that end on a query boundary (the lines of the last
//! query of a block are carried into the next one), worker threads parse and process whole queries
//! of a block while the next block is read, and the caller receives per-query outputs in file
//! order. Memory is bounded by the blocks in flight, never by the file size. Nothing is
//! allocated per line: entries borrow the block.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

use rustc_hash::FxHashSet;

use crate::error::{Error, Result};

mod block;

const BLOCK_BYTES: usize = 4 << 20;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const EXPECTED_FIELDS: &str = "6 whitespace-separated fields `qid Q0 doc_id rank score tag`";

/// One line of a run: the retrieved document and its score. The id is bytes: the reader has
/// checked that the file is UTF-8, and only the ids that metrics look up need to become `str`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunEntry<'a> {
    pub doc_id: &'a [u8],
    pub score: f64,
}

/// The processed result of one query's lines.
#[derive(Debug)]
pub struct QueryOutput<R> {
    pub qid: Box<str>,
    /// The 1-based line number of the query's first line.
    pub first_line: u64,
    pub value: R,
}

/// What a complete pass over a run produced.
#[derive(Debug)]
pub enum Pass<R> {
    /// Every query's lines were contiguous: one output per query, in file order.
    Grouped(Vec<QueryOutput<R>>),
    /// A qid reappeared after other queries (its first and later line): the pass stopped there.
    Ungrouped {
        qid: Box<str>,
        first_line: u64,
        later_line: u64,
    },
}

pub(crate) struct Block {
    index: usize,
    bytes: Vec<u8>,
}

/// What a worker made of one block: outputs, or the first error with its line relative to the block.
pub(crate) struct BlockOutput<R> {
    index: usize,
    line_count: u64,
    outputs: Vec<QueryOutput<R>>,
    error: Option<(u64, String)>,
}

enum Message<R> {
    Block(BlockOutput<R>),
    ReadError(std::io::Error),
    End { blocks: usize },
}

/// Parses the run at `path` on `threads` workers and calls `process(qid, entries)` once per group
/// of contiguous lines of one query, entries in file order. `process` may reorder the entries.
pub fn for_each_query<R, F>(path: &Path, threads: usize, process: F) -> Result<Pass<R>>
where
    R: Send,
    F: Fn(&str, &mut [RunEntry<'_>]) -> R + Sync,
{
    run_pass(path, threads, process, true)
}

fn run_pass<R, F>(path: &Path, threads: usize, process: F, stop_on_repeat: bool) -> Result<Pass<R>>
where
    R: Send,
    F: Fn(&str, &mut [RunEntry<'_>]) -> R + Sync,
{
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let threads = threads.max(1);
    let (block_tx, block_rx) = mpsc::sync_channel::<Block>(threads);
    let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
    let (message_tx, message_rx) = mpsc::channel::<Message<R>>();
    let block_rx = Mutex::new(block_rx);
    std::thread::scope(|scope| {
        let reader_messages = message_tx.clone();
        scope.spawn(move || read_blocks(file, block_tx, recycle_rx, reader_messages));
        for _ in 0..threads {
            let (block_rx, recycle_tx, message_tx) =
                (&block_rx, recycle_tx.clone(), message_tx.clone());
            let process = &process;
            scope.spawn(move || work(block_rx, recycle_tx, message_tx, process));
        }
        drop((message_tx, recycle_tx));
        merge(path, message_rx, stop_on_repeat)
    })
}

fn read_blocks<R>(
    mut file: File,
    blocks: SyncSender<Block>,
    recycled: Receiver<Vec<u8>>,
    messages: Sender<Message<R>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut index = 0;
    let mut at_start = true;
    loop {
        let mut bytes = recycled.try_recv().unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(&carry);
        carry.clear();
        let target = BLOCK_BYTES.max(bytes.len() * 2);
        bytes.reserve_exact(target - bytes.len());
        let wanted = (target - bytes.len()) as u64;
        let got = match file.by_ref().take(wanted).read_to_end(&mut bytes) {
            Ok(got) => got as u64,
            Err(e) => {
                let _ = messages.send(Message::ReadError(e));
                return;
            }
        };
        if at_start {
            if bytes.starts_with(UTF8_BOM) {
                bytes.drain(..UTF8_BOM.len());
            }
            at_start = false;
        }
        let at_end = got < wanted;
        if !at_end {
            match last_query_start(&bytes) {
                Some(cut) => {
                    carry.extend_from_slice(&bytes[cut..]);
                    bytes.truncate(cut);
                }
                None => {
                    // One query fills the whole block: read on with a larger block.
                    carry = bytes;
                    continue;
                }
            }
        }
        if !bytes.is_empty() {
            if blocks.send(Block { index, bytes }).is_err() {
                return;
            }
            index += 1;
        }
        if at_end {
            let _ = messages.send(Message::End { blocks: index });
            return;
        }
    }
}

/// The offset where the lines of the last (possibly incomplete) query of `bytes` begin, or None
/// when that query starts at offset 0 (the block holds a single query).
fn last_query_start(bytes: &[u8]) -> Option<usize> {
    fn first_field(line: &[u8]) -> Option<&[u8]> {
        line.split(|&b| b <= b' ').find(|field| !field.is_empty())
    }
    let last_newline = memchr::memrchr(b'\n', bytes)?;
    let mut end = last_newline;
    let mut qid: Option<&[u8]> = None;
    loop {
        let start = memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |p| p + 1);
        let line_qid = first_field(&bytes[start..end]);
        match (qid, line_qid) {
            (_, None) => {}
            (None, Some(q)) => qid = Some(q),
            (Some(q), Some(other)) if q != other => return Some(end + 1),
            _ => {}
        }
        if start == 0 {
            return None;
        }
        end = start - 1;
    }
}

fn work<R, F>(
    blocks: &Mutex<Receiver<Block>>,
    recycle: Sender<Vec<u8>>,
    messages: Sender<Message<R>>,
    process: &F,
) where
    F: Fn(&str, &mut [RunEntry<'_>]) -> R,
{
    loop {
        let next = blocks
            .lock()
            .map_err(|_| ())
            .and_then(|rx| rx.recv().map_err(|_| ()));
        let Ok(block) = next else { return };
        let output = block::parse(&block, process);
        let _ = recycle.send(block.bytes);
        if messages.send(Message::Block(output)).is_err() {
            return;
        }
    }
}

fn merge<R>(path: &Path, messages: Receiver<Message<R>>, stop_on_repeat: bool) -> Result<Pass<R>> {
    let mut pending: BTreeMap<usize, BlockOutput<R>> = BTreeMap::new();
    let mut next = 0;
    let mut total: Option<usize> = None;
    let mut lines_before = 0;
    let mut outputs: Vec<QueryOutput<R>> = Vec::new();
    let mut seen: FxHashSet<Box<str>> = FxHashSet::default();
    while total != Some(next) {
        match messages.recv() {
            Ok(Message::Block(block)) => {
                pending.insert(block.index, block);
            }
            Ok(Message::End { blocks }) => total = Some(blocks),
            Ok(Message::ReadError(e)) => return Err(Error::io(path, e)),
            Err(_) => {
                return Err(Error::input(
                    path,
                    "internal error: the run reader stopped early",
                ));
            }
        }
        while let Some(block) = pending.remove(&next) {
            if let Some((line, message)) = block.error {
                return Err(Error::parse(path, lines_before + line, message));
            }
            for mut output in block.outputs {
                output.first_line += lines_before;
                if stop_on_repeat && !seen.insert(output.qid.clone()) {
                    let earlier = outputs
                        .iter()
                        .find(|o| o.qid == output.qid)
                        .map_or(0, |o| o.first_line);
                    return Ok(Pass::Ungrouped {
                        qid: output.qid,
                        first_line: earlier,
                        later_line: output.first_line,
                    });
                }
                outputs.push(output);
            }
            lines_before += block.line_count;
            next += 1;
        }
    }
    if outputs.is_empty() {
        return Err(Error::input(
            path,
            format!("the file is empty: expected TREC run lines with {EXPECTED_FIELDS}"),
        ));
    }
    Ok(Pass::Grouped(outputs))
}

/// One query's entries with owned doc ids, for runs that must be held in memory.
#[derive(Debug)]
pub struct OwnedQuery {
    pub qid: Box<str>,
    pub entries: Vec<(Box<[u8]>, f64)>,
}

/// Reads a run whose queries are not contiguous: every query's entries, owned, in first-seen order.
/// Memory grows with the file; grouped runs should use `for_each_query` directly.
pub fn read_ungrouped(path: &Path, threads: usize) -> Result<Vec<OwnedQuery>> {
    // Groups come back in file order, so appending them per qid keeps each query's file order.
    let collect = |_: &str, entries: &mut [RunEntry<'_>]| -> Vec<(Box<[u8]>, f64)> {
        entries
            .iter()
            .map(|e| (Box::from(e.doc_id), e.score))
            .collect()
    };
    let Pass::Grouped(groups) = run_pass(path, threads, collect, false)? else {
        unreachable!("a pass that does not stop on repeats always completes")
    };
    let mut order: Vec<OwnedQuery> = Vec::new();
    let mut position: rustc_hash::FxHashMap<Box<str>, usize> = Default::default();
    for group in groups {
        match position.get(&group.qid) {
            Some(&i) => order[i].entries.extend(group.value),
            None => {
                position.insert(group.qid.clone(), order.len());
                order.push(OwnedQuery {
                    qid: group.qid,
                    entries: group.value,
                });
            }
        }
    }
    Ok(order)
}

/// Orders one query's entries as trec_eval ranks them: score descending, ties by doc_id
/// descending (byte order). Runs usually come sorted by score already; then only runs of equal
/// scores are put in order, and nothing moves when those are in order too.
pub fn sort_by_trec_order(entries: &mut [RunEntry<'_>]) {
    if entries.windows(2).any(|w| w[0].score < w[1].score) {
        entries.sort_by(|a, b| {
            b.score
                .partial_cmp(&a.score)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| b.doc_id.cmp(a.doc_id))
        });
        return;
    }
    for ties in entries.chunk_by_mut(|a, b| a.score == b.score) {
        if ties.len() > 1 {
            ties.sort_by(|a, b| b.doc_id.cmp(a.doc_id));
        }
    }
}

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

    #[test]
    fn last_query_start_finds_the_trailing_group() {
        let text = b"a Q0 d 1 1 t\nb Q0 d 1 1 t\nb Q0 e 2 1 t\nb Q0 f";
        assert_eq!(last_query_start(text), Some(13));
        assert_eq!(last_query_start(b"b Q0 d 1 1 t\nb Q0 e"), None);
        assert_eq!(last_query_start(b"partial line"), None);
    }
}
