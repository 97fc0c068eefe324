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

const BLOCK_BYTES: usize = 4 << 20;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
const EXPECTED_FIELDS: &str = "6 whitespace-separated fields `qid Q0 doc_id rank score tag`";

/// One line of a run: the retrieved document and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunEntry<'a> {
    pub doc_id: &'a str,
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

struct Block {
    index: usize,
    bytes: Vec<u8>,
}

/// What a worker made of one block: outputs, or the first error with its line relative to the block.
struct BlockOutput<R> {
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

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

fn first_field(line: &[u8]) -> Option<&[u8]> {
    let start = line.iter().position(|&b| !is_space(b))?;
    let len = line[start..]
        .iter()
        .position(|&b| is_space(b))
        .unwrap_or(line.len() - start);
    Some(&line[start..start + len])
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
        let output = parse_block(&block, process);
        let _ = recycle.send(block.bytes);
        if messages.send(Message::Block(output)).is_err() {
            return;
        }
    }
}

/// The six fields of one run line, or the field count when it is not six.
fn split_fields(line: &[u8]) -> Result<[&[u8]; 6], usize> {
    let mut fields: [&[u8]; 6] = [&[]; 6];
    let mut count = 0;
    let mut i = 0;
    let n = line.len();
    loop {
        while i < n && is_space(line[i]) {
            i += 1;
        }
        if i == n {
            break;
        }
        let start = i;
        while i < n && !is_space(line[i]) {
            i += 1;
        }
        if count < 6 {
            fields[count] = &line[start..i];
        }
        count += 1;
    }
    if count == 6 { Ok(fields) } else { Err(count) }
}

fn parse_score(text: &[u8]) -> Result<f64, String> {
    match fast_float2::parse::<f64, _>(text) {
        Ok(score) if score.is_finite() => Ok(score),
        _ => Err(format!(
            "score `{}`: expected a finite number",
            String::from_utf8_lossy(text)
        )),
    }
}

fn check_rank(text: &[u8]) -> Result<(), String> {
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
        Ok(())
    } else {
        Err(format!(
            "rank `{}`: expected an integer",
            String::from_utf8_lossy(text)
        ))
    }
}

fn utf8<'a>(field: &'a [u8], name: &str) -> Result<&'a str, String> {
    std::str::from_utf8(field)
        .map_err(|_| format!("invalid UTF-8 in the {name} field: expected UTF-8 text"))
}

fn parse_block<R, F>(block: &Block, process: &F) -> BlockOutput<R>
where
    F: Fn(&str, &mut [RunEntry<'_>]) -> R,
{
    let bytes = &block.bytes[..];
    let mut output = BlockOutput {
        index: block.index,
        line_count: 0,
        outputs: Vec::new(),
        error: None,
    };
    let mut entries: Vec<RunEntry<'_>> = Vec::with_capacity(1024);
    let mut qid: &str = "";
    let mut first_line = 0;
    let mut line_number = 0;
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p);
        let line = &bytes[start..end];
        start = end + 1;
        line_number += 1;
        let fields = match split_fields(line) {
            Ok(fields) => fields,
            Err(0) => continue,
            Err(count) => {
                output.error = Some((
                    line_number,
                    format!("expected {EXPECTED_FIELDS}, found {count}"),
                ));
                break;
            }
        };
        let parsed = (|| {
            if fields[0] != qid.as_bytes() {
                let next = utf8(fields[0], "qid")?;
                if !entries.is_empty() {
                    output.outputs.push(QueryOutput {
                        qid: qid.into(),
                        first_line,
                        value: process(qid, &mut entries),
                    });
                    entries.clear();
                }
                qid = next;
                first_line = line_number;
            }
            let doc_id = utf8(fields[2], "doc_id")?;
            check_rank(fields[3])?;
            let score = parse_score(fields[4])?;
            entries.push(RunEntry { doc_id, score });
            Ok::<(), String>(())
        })();
        if let Err(message) = parsed {
            output.error = Some((line_number, message));
            break;
        }
    }
    if output.error.is_none() && !entries.is_empty() {
        output.outputs.push(QueryOutput {
            qid: qid.into(),
            first_line,
            value: process(qid, &mut entries),
        });
    }
    output.line_count = line_number;
    output
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
    pub entries: Vec<(Box<str>, f64)>,
}

/// Reads a run whose queries are not contiguous: every query's entries, owned, in first-seen order.
/// Memory grows with the file; grouped runs should use `for_each_query` directly.
pub fn read_ungrouped(path: &Path, threads: usize) -> Result<Vec<OwnedQuery>> {
    // Groups come back in file order, so appending them per qid keeps each query's file order.
    let collect = |_: &str, entries: &mut [RunEntry<'_>]| -> Vec<(Box<str>, f64)> {
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
/// descending. Entries already in that order (the usual case) are left untouched without sorting.
pub fn sort_by_trec_order(entries: &mut [RunEntry<'_>]) {
    fn ranks_before(a: &RunEntry<'_>, b: &RunEntry<'_>) -> bool {
        a.score > b.score || (a.score == b.score && a.doc_id >= b.doc_id)
    }
    if entries.windows(2).all(|w| ranks_before(&w[0], &w[1])) {
        return;
    }
    entries.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| b.doc_id.cmp(a.doc_id))
    });
}
