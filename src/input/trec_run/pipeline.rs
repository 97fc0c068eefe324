//! The reading pipeline of a TREC run: a reader thread cuts the file into blocks that end on a
//! query boundary (the lines of the last query of a block are carried into the next one), worker
//! threads turn each block into a value, and the caller consumes the values in file order.
//!
//! A fixed number of block buffers circulate, reader -> worker -> caller -> reader: the reader
//! reads a block only into a free buffer, and the caller frees a buffer once it has consumed that
//! block. So at most `blocks_in_flight` blocks (and their values) exist at once, whatever the file
//! size and however slow the caller. No thread can be left waiting forever: the reader waits only
//! for a free buffer, whose one sender is the caller's side, so the caller ending (done, stopped
//! early or failed) ends the reader, whose end closes the workers' queue, and the workers only
//! send on unbounded channels. A panic in a worker's `work` is caught and resumed on the caller's
//! thread, which then unwinds out of the pipeline like any early end.

use std::any::Any;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender};

use super::{LineNotes, ReadOptions};
use crate::error::{Error, Result};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// What a worker made of one block: a value, the block's line count, its comment lines and lines
/// with extra fields, and the first error with its line relative to the block.
pub(super) struct Parsed<T> {
    pub value: T,
    pub line_count: u64,
    pub notes: LineNotes,
    pub error: Option<(u64, String)>,
}

struct Block {
    index: usize,
    bytes: Vec<u8>,
}

enum Message<T> {
    Block {
        index: usize,
        bytes: Vec<u8>,
        parsed: Parsed<T>,
    },
    ReadError(std::io::Error),
    /// `work` panicked on a block: the panic is resumed on the caller's thread.
    Panic(Box<dyn Any + Send>),
    End {
        blocks: usize,
    },
}

/// Reads `path` block by block, `work(block)` on `options.threads` workers, then
/// `consume(value, lines_before_the_block)` in file order until the end of the file or until
/// `consume` breaks. A block's error is returned with its absolute line, before its value is
/// consumed. Returns the notes of the blocks consumed.
pub(super) fn run<T, W, C>(
    path: &Path,
    options: &ReadOptions,
    work: W,
    consume: C,
) -> Result<LineNotes>
where
    T: Send,
    W: Fn(&[u8]) -> Parsed<T> + Sync,
    C: FnMut(T, u64) -> Result<ControlFlow<()>>,
{
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let threads = options.threads.max(1);
    let (block_bytes, buffers) = (options.block_bytes.max(1), options.blocks_in_flight.max(1));
    let (block_tx, block_rx) = mpsc::channel::<Block>();
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    let (message_tx, message_rx) = mpsc::channel::<Message<T>>();
    let block_rx = Mutex::new(block_rx);
    std::thread::scope(|scope| {
        let reader_messages = message_tx.clone();
        scope.spawn(move || {
            read_blocks(
                file,
                block_bytes,
                buffers,
                &block_tx,
                &free_rx,
                &reader_messages,
            );
        });
        for _ in 0..threads {
            let (block_rx, message_tx, work) = (&block_rx, message_tx.clone(), &work);
            scope.spawn(move || work_blocks(block_rx, &message_tx, work));
        }
        drop(message_tx);
        merge(path, message_rx, free_tx, consume)
    })
}

fn read_blocks<T>(
    mut file: File,
    block_bytes: usize,
    buffers: usize,
    blocks: &Sender<Block>,
    free: &Receiver<Vec<u8>>,
    messages: &Sender<Message<T>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let (mut index, mut allocated, mut at_start) = (0, 0, true);
    loop {
        let mut bytes = if allocated < buffers {
            allocated += 1;
            Vec::new()
        } else {
            match free.recv() {
                Ok(bytes) => bytes,
                // The caller has finished: nothing more to read.
                Err(_) => return,
            }
        };
        bytes.clear();
        bytes.append(&mut carry);
        // Read until the block holds the start of a later query, growing it past one large query.
        let at_end = loop {
            let target = block_bytes.max(bytes.len() * 2);
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
            if got < wanted {
                break true;
            }
            if let Some(cut) = last_query_start(&bytes) {
                carry.extend_from_slice(&bytes[cut..]);
                bytes.truncate(cut);
                break false;
            }
        };
        if !bytes.is_empty() {
            if blocks.send(Block { index, bytes }).is_err() {
                return;
            }
            index += 1;
        } else {
            allocated -= 1;
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
            // A comment line belongs to no query.
            (_, Some(_)) if bytes[start] == b'#' => {}
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

fn work_blocks<T, W>(blocks: &Mutex<Receiver<Block>>, messages: &Sender<Message<T>>, work: &W)
where
    W: Fn(&[u8]) -> Parsed<T>,
{
    loop {
        let next = blocks
            .lock()
            .map_err(|_| ())
            .and_then(|rx| rx.recv().map_err(|_| ()));
        let Ok(Block { index, bytes }) = next else {
            return;
        };
        // A panic must reach the caller: a worker that died silently would leave its block
        // missing and the caller waiting for it forever.
        let message = match catch_unwind(AssertUnwindSafe(|| work(&bytes))) {
            Ok(parsed) => Message::Block {
                index,
                bytes,
                parsed,
            },
            Err(panic) => Message::Panic(panic),
        };
        if messages.send(message).is_err() {
            return;
        }
    }
}

fn merge<T, C>(
    path: &Path,
    messages: Receiver<Message<T>>,
    free: Sender<Vec<u8>>,
    mut consume: C,
) -> Result<LineNotes>
where
    C: FnMut(T, u64) -> Result<ControlFlow<()>>,
{
    let mut pending: BTreeMap<usize, (Vec<u8>, Parsed<T>)> = BTreeMap::new();
    let (mut next, mut lines_before) = (0, 0);
    let mut notes = LineNotes::default();
    let mut total: Option<usize> = None;
    while total != Some(next) {
        match messages.recv() {
            Ok(Message::Block {
                index,
                bytes,
                parsed,
            }) => {
                pending.insert(index, (bytes, parsed));
            }
            Ok(Message::End { blocks }) => total = Some(blocks),
            Ok(Message::ReadError(e)) => return Err(Error::io(path, e)),
            // Dropping `free` (as the unwinding does) ends the reader, then the other workers.
            Ok(Message::Panic(panic)) => std::panic::resume_unwind(panic),
            Err(_) => {
                return Err(Error::input(
                    path,
                    "internal error: the run reader stopped early; please report this",
                ));
            }
        }
        while let Some((bytes, parsed)) = pending.remove(&next) {
            if let Some((line, message)) = parsed.error {
                return Err(Error::parse(path, lines_before + line, message));
            }
            let flow = consume(parsed.value, lines_before)?;
            lines_before += parsed.line_count;
            notes.add(parsed.notes);
            next += 1;
            // The reader may have finished already; then the buffer is simply dropped.
            let _ = free.send(bytes);
            if flow.is_break() {
                return Ok(notes);
            }
        }
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_query_start_finds_the_trailing_group() {
        let text = b"a Q0 d 1 1 t\nb Q0 d 1 1 t\nb Q0 e 2 1 t\nb Q0 f";
        assert_eq!(last_query_start(text), Some(13));
        assert_eq!(last_query_start(b"b Q0 d 1 1 t\nb Q0 e"), None);
        assert_eq!(last_query_start(b"partial line"), None);
        // a comment line inside a query's lines does not end the query
        let text = b"a Q0 d 1 1 t\nb Q0 d 1 1 t\n# note\nb Q0 e 2 1 t\nb Q0 f";
        assert_eq!(last_query_start(text), Some(13));
        assert_eq!(last_query_start(b"# a\nb Q0 d 1 1 t\n# c\nb Q0 e"), None);
    }
}
