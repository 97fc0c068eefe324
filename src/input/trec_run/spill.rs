//! Runs not grouped by query, sorted by query through temporary files in bounded memory.
//!
//! Every metric needs all the lines of a query at once, and in a shuffled run the last line of a
//! query may be the file's last. Holding the run in memory grows with the file (an 18 MB run took
//! 155 MiB); an external sort by qid would write and read the run several times. Instead the run is
//! partitioned once by a hash of the qid into `ceil(file size / bucket_bytes)` anonymous temporary
//! files (buckets, at most [`MAX_BUCKETS`]), in a compact binary form (varint lengths, the score as
//! 8 bytes; about 30 bytes a line against 37 of text), as the block pipeline parses it in
//! parallel. Then each worker takes one bucket at a time, reads it whole, gathers each query's
//! lines (a counting sort of the encoded groups by query, file order kept within a query: each
//! query's entries end up contiguous, so they are decoded once and its doc ids lie together while
//! it is scored) and processes each query once.
//! A query never spans two buckets, so the outputs are exactly the grouped reader's, and sorting
//! them by first line gives the grouped reader's order.
//!
//! Memory: the blocks in flight while partitioning, plus per worker one bucket of about
//! `bucket_bytes`, its copy sorted by query and one entry (24 bytes) per group. Hashing spreads the queries evenly; a bucket
//! over 1.5 x `bucket_bytes` (a run larger than `MAX_BUCKETS` buckets, or bad luck) is partitioned
//! again with another seed, up to [`MAX_DEPTH`] times, unless one query fills most of it: such a
//! query is held whole, as the grouped reader holds a query larger than a block. The temporary
//! files take about 0.8 x the run's size in the temporary directory (`TMPDIR`); they have no name
//! and vanish when closed, even if the process is killed.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Mutex;

use rustc_hash::FxHashMap;

use super::{LineNotes, QueryOutput, ReadOptions, RunEntry, block, pipeline};
use crate::error::{Error, Result};

/// Buckets of the first partition (open files at once).
const MAX_BUCKETS: u64 = 256;
/// Buckets of a re-partition of one oversized bucket.
const MAX_SUB_BUCKETS: u64 = 16;
/// Re-partitions of one bucket before it is processed as it is.
const MAX_DEPTH: u32 = 3;

/// Bytes read at a time when a bucket is partitioned again.
const SPLIT_CHUNK: u64 = 4 << 20;

const TAG_BLOCK: u8 = 0;
const TAG_GROUP: u8 = 1;

/// Reads the run at `path` (known to be ungrouped) and calls `process` once per query with all
/// its lines in file order; the outputs come back in the order of the queries' first lines, with
/// the run's comment lines and lines with extra fields.
pub(super) fn for_each_query<R, F>(
    path: &Path,
    options: &ReadOptions,
    process: &F,
) -> Result<(Vec<QueryOutput<R>>, LineNotes)>
where
    R: Send,
    F: Fn(&str, &mut [RunEntry<'_>]) -> R + Sync,
{
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    let bucket_bytes = options.bucket_bytes.max(1);
    let count = size.div_ceil(bucket_bytes).clamp(1, MAX_BUCKETS) as usize;
    let buckets = new_buckets(count).map_err(|e| temp_error(path, &e))?;
    let work = |bytes: &[u8]| {
        let mut parts = vec![Vec::with_capacity(bytes.len() / count + 64); count];
        let scan = block::parse(bytes, |qid, first_line, entries| {
            let part = &mut parts[bucket_of(qid.as_bytes(), 0, count)];
            encode_group(part, qid.as_bytes(), first_line, entries);
        });
        pipeline::Parsed {
            value: parts,
            line_count: scan.line_count,
            notes: scan.notes,
            error: scan.error,
        }
    };
    let mut any_line = false;
    let notes = pipeline::run(path, options, work, |parts, lines_before| {
        for (mut file, part) in buckets.iter().zip(parts) {
            if part.is_empty() {
                continue;
            }
            any_line = true;
            let mut marker = vec![TAG_BLOCK];
            put_varint(&mut marker, lines_before);
            file.write_all(&marker)
                .and_then(|()| file.write_all(&part))
                .map_err(|e| temp_error(path, &e))?;
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if !any_line {
        return Err(super::empty_run(path));
    }
    let queue = Mutex::new(buckets.into_iter());
    let threads = options.threads.max(1).min(count);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut outputs = Vec::new();
                    loop {
                        let next = queue.lock().ok().and_then(|mut q| q.next());
                        let Some(file) = next else {
                            return Ok(outputs);
                        };
                        process_bucket(path, file, bucket_bytes, 0, process, &mut outputs)?;
                    }
                })
            })
            .collect();
        super::join_in_file_order(handles)
    })
    .map(|outputs| (outputs, notes))
}

fn new_buckets(count: usize) -> std::io::Result<Vec<File>> {
    (0..count).map(|_| tempfile::tempfile()).collect()
}

fn temp_error(path: &Path, error: &std::io::Error) -> Error {
    Error::input(
        path,
        format!(
            "the run is not grouped by query, and the temporary files that sort it by query (in {}) \
             could not be written or read: {error}; free some space there or set TMPDIR to a \
             directory with room for about the run's size (or group the run's lines by qid)",
            std::env::temp_dir().display()
        ),
    )
}

/// The bucket of `qid` among `count`, for partition `seed`: FNV-1a, then a 64-bit finaliser so
/// that every bit of the hash counts.
pub(super) fn bucket_of(qid: &[u8], seed: u32, count: usize) -> usize {
    let mut hash = 0xcbf2_9ce4_8422_2325u64 ^ u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for &byte in qid {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    ((u128::from(hash) * count as u128) >> 64) as usize
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub(super) fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7F) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

pub(super) fn get_slice<'a>(bytes: &'a [u8], at: &mut usize, len: u64) -> Option<&'a [u8]> {
    let end = at.checked_add(usize::try_from(len).ok()?)?;
    let slice = bytes.get(*at..end)?;
    *at = end;
    Some(slice)
}

/// `TAG_GROUP qid_len qid first_line count entries_len (doc_len doc score_bits)*`, integers as
/// varints but the score as its 8 bytes; `entries_len` (the bytes of the entries) lets a reader
/// skip a group without decoding its entries.
fn encode_group(out: &mut Vec<u8>, qid: &[u8], first_line: u64, entries: &[RunEntry<'_>]) {
    out.push(TAG_GROUP);
    put_varint(out, qid.len() as u64);
    out.extend_from_slice(qid);
    put_varint(out, first_line);
    put_varint(out, entries.len() as u64);
    let entries_len: usize = entries
        .iter()
        .map(|e| varint_len(e.doc_id.len() as u64) + e.doc_id.len() + 8)
        .sum();
    put_varint(out, entries_len as u64);
    out.reserve(entries_len);
    for entry in entries {
        put_varint(out, entry.doc_id.len() as u64);
        out.extend_from_slice(entry.doc_id);
        out.extend_from_slice(&entry.score.to_bits().to_le_bytes());
    }
}

fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// One record of a bucket file.
enum Record<'a> {
    /// The lines before the block whose groups follow (their first lines count from it).
    Block { lines_before: u64 },
    /// One query's contiguous lines: `entries` is their encoding, `count` of them (not checked
    /// until they are decoded).
    Group {
        qid: &'a [u8],
        first_line: u64,
        count: u64,
        entries: &'a [u8],
    },
}

/// The record at `*at`, moving past it; None when the bytes end inside it (or are malformed).
fn decode<'a>(bytes: &'a [u8], at: &mut usize) -> Option<Record<'a>> {
    let tag = *bytes.get(*at)?;
    *at += 1;
    match tag {
        TAG_BLOCK => Some(Record::Block {
            lines_before: get_varint(bytes, at)?,
        }),
        TAG_GROUP => {
            let qid_len = get_varint(bytes, at)?;
            let qid = get_slice(bytes, at, qid_len)?;
            let first_line = get_varint(bytes, at)?;
            let count = get_varint(bytes, at)?;
            let entries_len = get_varint(bytes, at)?;
            let entries = get_slice(bytes, at, entries_len)?;
            Some(Record::Group {
                qid,
                first_line,
                count,
                entries,
            })
        }
        _ => None,
    }
}

/// The entries of a group's encoding, in order.
fn entries(mut bytes: &[u8]) -> impl Iterator<Item = RunEntry<'_>> {
    std::iter::from_fn(move || {
        let mut at = 0;
        let len = get_varint(bytes, &mut at)?;
        let doc_id = get_slice(bytes, &mut at, len)?;
        let score = get_slice(bytes, &mut at, 8)?;
        let score = f64::from_bits(u64::from_le_bytes(score.try_into().ok()?));
        bytes = &bytes[at..];
        Some(RunEntry { doc_id, score })
    })
}

fn corrupt(path: &Path) -> Error {
    Error::input(
        path,
        "internal error: a temporary file of the sort by query is damaged; run again, and report \
         this if it persists",
    )
}

fn read_whole(path: &Path, mut file: File, size: u64) -> Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_end(&mut bytes))
        .map_err(|e| temp_error(path, &e))?;
    Ok(bytes)
}

/// Processes every query of one bucket into `outputs`, partitioning it again first when it is
/// much larger than `bucket_bytes`.
fn process_bucket<R, F>(
    path: &Path,
    file: File,
    bucket_bytes: u64,
    depth: u32,
    process: &F,
    outputs: &mut Vec<QueryOutput<R>>,
) -> Result<()>
where
    F: Fn(&str, &mut [RunEntry<'_>]) -> R,
{
    let size = file.metadata().map_err(|e| temp_error(path, &e))?.len();
    if size > bucket_bytes.saturating_mul(3) / 2 && depth < MAX_DEPTH {
        let parts = split(path, file, size, bucket_bytes, depth + 1)?;
        let largest = parts.iter().map(|(_, len)| *len).max().unwrap_or(0);
        // When one query fills most of the bucket, splitting again cannot make it smaller.
        let depth = if largest > size / 4 * 3 {
            MAX_DEPTH
        } else {
            depth + 1
        };
        for (part, _) in parts {
            process_bucket(path, part, bucket_bytes, depth, process, outputs)?;
        }
        return Ok(());
    }
    let bytes = read_whole(path, file, size)?;
    gather(&bytes, process, outputs).ok_or_else(|| corrupt(path))
}

/// The key of a qid in [`gather`]'s map: a qid of up to 15 bytes packed into an integer (hashed
/// and compared without touching the bucket's bytes), a longer one as it is.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum QidKey<'a> {
    Short(u128),
    Long(&'a [u8]),
}

impl<'a> QidKey<'a> {
    pub(super) fn of(qid: &'a [u8]) -> Self {
        if qid.len() < 16 {
            let mut packed = [0u8; 16];
            packed[..qid.len()].copy_from_slice(qid);
            packed[15] = qid.len() as u8;
            QidKey::Short(u128::from_le_bytes(packed))
        } else {
            QidKey::Long(qid)
        }
    }
}

/// Gathers each query's lines of one bucket and processes each query once; None when the bucket
/// is damaged. A first pass finds each group's query (one lookup a group, its entries skipped by
/// their length); a second copies each group's encoded entries into its query's contiguous range
/// of a second buffer (file order kept within a query), so that a query's entries are then
/// decoded in one sequential run and its doc ids lie together in memory while it is scored.
fn gather<R, F>(bytes: &[u8], process: &F, outputs: &mut Vec<QueryOutput<R>>) -> Option<()>
where
    F: Fn(&str, &mut [RunEntry<'_>]) -> R,
{
    struct Query<'a> {
        qid: &'a [u8],
        first_line: u64,
        lines: usize,
        /// Bytes of the query's encoded entries, then (after the first pass) where they start.
        start: usize,
        len: usize,
    }
    let mut slots: FxHashMap<QidKey<'_>, usize> = FxHashMap::default();
    let mut queries: Vec<Query<'_>> = Vec::new();
    // Every group in bucket order: its query's slot and its encoded entries.
    let mut groups: Vec<(usize, &[u8])> = Vec::new();
    let (mut at, mut lines_before) = (0, 0);
    while at < bytes.len() {
        match decode(bytes, &mut at)? {
            Record::Block {
                lines_before: lines,
            } => lines_before = lines,
            Record::Group {
                qid,
                first_line,
                count,
                entries,
            } => {
                let slot = *slots.entry(QidKey::of(qid)).or_insert_with(|| {
                    queries.push(Query {
                        qid,
                        first_line: lines_before + first_line,
                        lines: 0,
                        start: 0,
                        len: 0,
                    });
                    queries.len() - 1
                });
                let query = &mut queries[slot];
                query.lines = query.lines.checked_add(usize::try_from(count).ok()?)?;
                query.len += entries.len();
                groups.push((slot, entries));
            }
        }
    }
    drop(slots);
    let mut total = 0;
    for query in &mut queries {
        query.start = total;
        total += query.len;
    }
    let mut sorted = vec![0u8; total];
    let mut next: Vec<usize> = queries.iter().map(|q| q.start).collect();
    for (slot, encoded) in groups {
        let at = &mut next[slot];
        sorted[*at..*at + encoded.len()].copy_from_slice(encoded);
        *at += encoded.len();
    }
    let mut lines: Vec<RunEntry<'_>> = Vec::new();
    for query in &queries {
        let qid = std::str::from_utf8(query.qid).ok()?;
        let encoded = &sorted[query.start..query.start + query.len];
        lines.clear();
        let mut decoded_bytes = 0;
        lines.extend(entries(encoded).inspect(|e| {
            decoded_bytes += varint_len(e.doc_id.len() as u64) + e.doc_id.len() + 8;
        }));
        // A damaged encoding ends the entries early or leaves bytes over.
        if lines.len() != query.lines || decoded_bytes != encoded.len() {
            return None;
        }
        outputs.push(QueryOutput {
            qid: qid.into(),
            first_line: query.first_line,
            value: process(qid, &mut lines),
        });
    }
    Some(())
}

/// Partitions one bucket file into up to [`MAX_SUB_BUCKETS`] new ones with hash seed `seed`,
/// reading it in chunks; returns the new files with their sizes. Groups are written with
/// absolute first lines (each new file starts with a block record of 0 lines before).
fn split(
    path: &Path,
    mut file: File,
    size: u64,
    bucket_bytes: u64,
    seed: u32,
) -> Result<Vec<(File, u64)>> {
    let count = size.div_ceil(bucket_bytes).clamp(2, MAX_SUB_BUCKETS) as usize;
    let io = |e: std::io::Error| temp_error(path, &e);
    let mut parts: Vec<(std::io::BufWriter<File>, u64)> = Vec::with_capacity(count);
    for file in new_buckets(count).map_err(io)? {
        let mut writer = std::io::BufWriter::with_capacity(64 << 10, file);
        writer.write_all(&[TAG_BLOCK, 0]).map_err(io)?;
        parts.push((writer, 2));
    }
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let (mut buffer, mut record) = (Vec::new(), Vec::new());
    let mut lines_before = 0;
    loop {
        // Records cut by the chunk's end stay in the buffer and are completed by the next read.
        let start = buffer.len();
        (&mut file)
            .take(SPLIT_CHUNK)
            .read_to_end(&mut buffer)
            .map_err(io)?;
        let at_end = ((buffer.len() - start) as u64) < SPLIT_CHUNK;
        let mut at = 0;
        loop {
            let mut end = at;
            match decode(&buffer, &mut end) {
                Some(Record::Block {
                    lines_before: lines,
                }) => lines_before = lines,
                Some(Record::Group {
                    qid,
                    first_line,
                    count: lines,
                    entries,
                }) => {
                    record.clear();
                    record.push(TAG_GROUP);
                    put_varint(&mut record, qid.len() as u64);
                    record.extend_from_slice(qid);
                    put_varint(&mut record, lines_before + first_line);
                    put_varint(&mut record, lines);
                    put_varint(&mut record, entries.len() as u64);
                    record.extend_from_slice(entries);
                    let (writer, len) = &mut parts[bucket_of(qid, seed, count)];
                    writer.write_all(&record).map_err(io)?;
                    *len += record.len() as u64;
                }
                None => break,
            }
            at = end;
        }
        buffer.drain(..at);
        if at_end {
            if !buffer.is_empty() {
                return Err(corrupt(path));
            }
            break;
        }
    }
    parts
        .into_iter()
        .map(|(writer, len)| Ok((writer.into_inner().map_err(|e| io(e.into_error()))?, len)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_round_trip_through_the_encoding() {
        let entries = [
            RunEntry {
                doc_id: b"d1",
                score: 2.5,
            },
            RunEntry {
                doc_id: "dé".as_bytes(),
                score: -0.0,
            },
        ];
        let mut bytes = vec![TAG_BLOCK];
        put_varint(&mut bytes, 300);
        encode_group(&mut bytes, b"q7", 1 << 40, &entries);
        let mut at = 0;
        let Some(Record::Block { lines_before: 300 }) = decode(&bytes, &mut at) else {
            panic!("block record expected")
        };
        let Some(Record::Group {
            qid,
            first_line,
            count,
            entries: encoded,
        }) = decode(&bytes, &mut at)
        else {
            panic!("group record expected")
        };
        assert_eq!((qid, first_line, count), (&b"q7"[..], 1 << 40, 2));
        let decoded: Vec<RunEntry<'_>> = super::entries(encoded).collect();
        assert_eq!(decoded, entries);
        assert!(decoded[1].score.is_sign_negative());
        assert_eq!(at, bytes.len());
        // a truncated record is incomplete, never a short one
        for cut in 1..bytes.len() {
            let mut at = 0;
            let complete = std::iter::from_fn(|| decode(&bytes[..cut], &mut at)).count();
            assert!(complete < 2, "cut at {cut}");
        }
    }

    #[test]
    fn varint_len_is_the_length_put_varint_writes() {
        for value in [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 40, u64::MAX] {
            let mut bytes = Vec::new();
            put_varint(&mut bytes, value);
            assert_eq!(varint_len(value), bytes.len(), "{value}");
        }
    }

    #[test]
    fn a_damaged_bucket_is_an_error_not_fewer_lines() {
        let entries = [RunEntry {
            doc_id: b"doc",
            score: 1.0,
        }; 3];
        let mut bytes = vec![TAG_BLOCK, 0];
        encode_group(&mut bytes, b"q1", 1, &entries);
        let gathered = |bytes: &[u8]| {
            let mut outputs = Vec::new();
            gather(
                bytes,
                &|_: &str, lines: &mut [RunEntry<'_>]| lines.len(),
                &mut outputs,
            )
            .map(|()| outputs.iter().map(|o| o.value).collect::<Vec<_>>())
        };
        assert_eq!(gathered(&bytes), Some(vec![3]));
        // the count says 4 lines where 3 are encoded
        let count_at = 2 + 1 + 1 + 2 + 1;
        let mut wrong_count = bytes.clone();
        wrong_count[count_at] = 4;
        assert_eq!(gathered(&wrong_count), None);
        // a doc id length that runs past the entries
        let mut wrong_doc = bytes.clone();
        wrong_doc[count_at + 2] = 9;
        assert_eq!(gathered(&wrong_doc), None);
        assert_eq!(gathered(&bytes[..bytes.len() - 1]), None);
    }

    #[test]
    fn buckets_spread_queries_evenly_and_seeds_differ() {
        let count = 16;
        let mut sizes = vec![0usize; count];
        let mut moved = 0;
        for q in 0..16_000 {
            let qid = format!("q{q:05}");
            let bucket = bucket_of(qid.as_bytes(), 0, count);
            sizes[bucket] += 1;
            moved += usize::from(bucket != bucket_of(qid.as_bytes(), 1, count));
        }
        assert!(sizes.iter().all(|&n| (850..1150).contains(&n)), "{sizes:?}");
        assert!(moved > 14_000, "{moved}");
    }
}
