//! Parsing one block of a TREC run. A word-at-a-time scan finds the candidate separators of the
//! whole block (any byte up to 0x20) and notes whether the block is pure ASCII; space, tab and CR
//! separate fields, LF ends a line, any other control byte (NUL, say) is an error naming the
//! line; each line must have at least six fields (later ones are ignored and counted), a line
//! that starts with `#` is a comment (skipped and counted); lines are grouped by query.

use super::{EXPECTED_FIELDS, LineNotes, RunEntry};
use crate::input::decimal;

const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Bit 7 of each byte of the result is set where the byte of `word` is below 0x21. Exact per
/// byte: adding 0x5F to the low seven bits never carries into the next byte.
fn separator_mask(word: u64) -> u64 {
    let at_least_0x21 = (word & 0x7F7F_7F7F_7F7F_7F7F) + 0x5F5F_5F5F_5F5F_5F5F;
    !(at_least_0x21 | word) & HIGH_BITS
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

struct BlockParser<'a, F> {
    bytes: &'a [u8],
    on_group: F,
    /// Field spans of the current line (the first six) and how many fields it has.
    spans: [(usize, usize); 6],
    fields: usize,
    token_start: usize,
    /// Where the current line begins.
    line_start: usize,
    /// Comment lines and lines with fields after the sixth, so far.
    notes: LineNotes,
    /// Lines finished so far (1-based number of the last one).
    line: u64,
    qid: &'a [u8],
    first_line: u64,
    entries: Vec<RunEntry<'a>>,
}

impl<'a, F> BlockParser<'a, F>
where
    F: FnMut(&'a str, u64, &mut [RunEntry<'a>]),
{
    #[inline]
    fn separator(&mut self, at: usize) -> Result<(), String> {
        if at > self.token_start {
            if self.fields < 6 {
                self.spans[self.fields] = (self.token_start, at);
            }
            self.fields += 1;
        }
        self.token_start = at + 1;
        match self.bytes[at] {
            b'\n' => {
                let ended = self.end_line();
                self.line_start = at + 1;
                ended
            }
            b' ' | b'\t' | b'\r' => Ok(()),
            byte => {
                // The error is on the line being read: count it as the line reported.
                self.line += 1;
                Err(format!(
                    "control byte {byte:#04x} in the line: expected {EXPECTED_FIELDS}, separated \
                     by spaces or tabs"
                ))
            }
        }
    }

    fn field(&self, index: usize) -> &'a [u8] {
        let (start, end) = self.spans[index];
        &self.bytes[start..end]
    }

    fn end_line(&mut self) -> Result<(), String> {
        self.line += 1;
        let fields = std::mem::take(&mut self.fields);
        if fields == 0 {
            return Ok(());
        }
        // One byte test per line: a line with a field has a byte at its start.
        if self.bytes[self.line_start] == b'#' {
            self.notes.comments += 1;
            return Ok(());
        }
        match fields {
            6 => {}
            7.. => self.notes.extra_fields += 1,
            _ => return Err(format!("expected {EXPECTED_FIELDS}, found {fields}")),
        }
        let qid = self.field(0);
        if qid != self.qid {
            self.flush()?;
            self.qid = qid;
            self.first_line = self.line;
        }
        check_rank(self.field(3))?;
        let score_text = self.field(4);
        let score = decimal::parse_finite(score_text).ok_or_else(|| {
            format!(
                "score `{}`: expected a finite number",
                String::from_utf8_lossy(score_text)
            )
        })?;
        let doc_id = self.field(2);
        self.entries.push(RunEntry { doc_id, score });
        Ok(())
    }

    /// Hands the lines of the current query to `on_group`.
    fn flush(&mut self) -> Result<(), String> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let qid = std::str::from_utf8(self.qid)
            .map_err(|_| "invalid UTF-8 in the qid field: expected UTF-8 text".to_string())?;
        (self.on_group)(qid, self.first_line, &mut self.entries);
        self.entries.clear();
        Ok(())
    }

    /// Walks the block's separators; returns whether every byte scanned was ASCII (then the
    /// scanned part is valid UTF-8) with the first error, if any.
    fn scan(&mut self) -> (bool, Result<(), String>) {
        let (words, tail) = self.bytes.as_chunks::<8>();
        let mut seen_bits = 0u64;
        let separators = words.iter().enumerate().flat_map(|(index, word)| {
            let word = u64::from_le_bytes(*word);
            seen_bits |= word;
            let mut mask = separator_mask(word);
            std::iter::from_fn(move || {
                let bit = (mask != 0).then(|| mask.trailing_zeros() as usize / 8)?;
                mask &= mask - 1;
                Some(index * 8 + bit)
            })
        });
        for at in separators {
            if let Err(e) = self.separator(at) {
                return (seen_bits & HIGH_BITS == 0, Err(e));
            }
        }
        let base = words.len() * 8;
        for (offset, &byte) in tail.iter().enumerate() {
            seen_bits |= u64::from(byte);
            if byte < 0x21
                && let Err(e) = self.separator(base + offset)
            {
                return (seen_bits & HIGH_BITS == 0, Err(e));
            }
        }
        (seen_bits & HIGH_BITS == 0, self.finish())
    }

    /// Ends a last line that has no line feed, and hands over the last query.
    fn finish(&mut self) -> Result<(), String> {
        let len = self.bytes.len();
        if self.token_start < len {
            self.separator_at_end(len);
        }
        if self.bytes.last().is_some_and(|&b| b != b'\n') {
            self.end_line()?;
        }
        self.flush()
    }

    fn separator_at_end(&mut self, len: usize) {
        if self.fields < 6 {
            self.spans[self.fields] = (self.token_start, len);
        }
        self.fields += 1;
        self.token_start = len;
    }
}

/// The first invalid UTF-8 sequence of `bytes` as (1-based line, message), if any.
fn utf8_error(bytes: &[u8]) -> Option<(u64, String)> {
    let error = std::str::from_utf8(bytes).err()?;
    let offset = error.valid_up_to();
    let before = &bytes[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() as u64 + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |p| p + 1);
    Some((
        line,
        format!(
            "invalid UTF-8 at byte {} of the line: expected UTF-8 text",
            offset - line_start + 1
        ),
    ))
}

/// What parsing a block found: its line count, its comment lines and lines with extra fields,
/// and the first error with its line in the block.
pub(super) struct Scan {
    pub line_count: u64,
    pub notes: LineNotes,
    pub error: Option<(u64, String)>,
}

/// Parses a block of whole lines, calling `on_group(qid, first_line, entries)` once per group of
/// contiguous lines of one query (`first_line` is 1-based within the block), entries in file order.
pub(super) fn parse<'a, F>(bytes: &'a [u8], on_group: F) -> Scan
where
    F: FnMut(&'a str, u64, &mut [RunEntry<'a>]),
{
    let mut parser = BlockParser {
        bytes,
        on_group,
        spans: [(0, 0); 6],
        fields: 0,
        token_start: 0,
        line_start: 0,
        notes: LineNotes::default(),
        line: 0,
        qid: &[],
        first_line: 0,
        entries: Vec::with_capacity(1024),
    };
    let (ascii, result) = parser.scan();
    let mut error = result.err().map(|message| (parser.line.max(1), message));
    // A UTF-8 error before (or on) the line of a parse error is reported instead of it.
    if !ascii
        && let Some((line, message)) = utf8_error(bytes)
        && error.as_ref().is_none_or(|(at, _)| line <= *at)
    {
        error = Some((line, message));
    }
    Scan {
        line_count: parser.line,
        notes: parser.notes,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separator_mask_is_exact_per_byte() {
        for byte in 0..=255u8 {
            for position in 0..8 {
                let mut bytes = [b'x'; 8];
                bytes[position] = byte;
                let mask = separator_mask(u64::from_le_bytes(bytes));
                let expected = if byte < 0x21 {
                    0x80u64 << (8 * position)
                } else {
                    0
                };
                assert_eq!(mask, expected, "byte {byte:#04x} at {position}");
            }
        }
        // neighbours of a separator are not flagged (no borrow or carry between bytes)
        let mixed = u64::from_le_bytes(*b" \x21 \xff\x00\x7f\t\n");
        assert_eq!(separator_mask(mixed), 0x8080_0080_0080_0080);
    }

    struct Group {
        qid: String,
        first_line: u64,
        value: Vec<(String, f64)>,
    }

    struct Parsed {
        line_count: u64,
        notes: LineNotes,
        outputs: Vec<Group>,
        error: Option<(u64, String)>,
    }

    fn parse_text(text: &[u8]) -> Parsed {
        let mut outputs = Vec::new();
        let scan = parse(text, |qid, first_line, entries| {
            let value = entries
                .iter()
                .map(|e| (String::from_utf8(e.doc_id.to_vec()).unwrap(), e.score))
                .collect();
            outputs.push(Group {
                qid: qid.to_string(),
                first_line,
                value,
            });
        });
        Parsed {
            line_count: scan.line_count,
            notes: scan.notes,
            outputs,
            error: scan.error,
        }
    }

    #[test]
    fn groups_lines_by_query_with_tabs_crlf_and_no_final_newline() {
        let out = parse_text(b"q1 Q0 a 1 2.5 t\r\n\nq1\tQ0\tb\t2\t1.5\tt\nq2 Q0 c 1 -3 t");
        assert!(out.error.is_none());
        assert_eq!(out.line_count, 4);
        let [first, second] = &out.outputs[..] else {
            panic!("two groups expected")
        };
        assert_eq!((&*first.qid, first.first_line), ("q1", 1));
        assert_eq!(
            first.value,
            [("a".to_string(), 2.5), ("b".to_string(), 1.5)]
        );
        assert_eq!((&*second.qid, second.first_line), ("q2", 4));
        assert_eq!(second.value, [("c".to_string(), -3.0)]);
    }

    #[test]
    fn first_error_wins_with_its_line() {
        let out = parse_text(b"q1 Q0 a 1 2.5 t\nq1 Q0 b 2 x t\nq1 Q0 c 1 2 3 4\n");
        assert_eq!(
            out.error,
            Some((2, "score `x`: expected a finite number".to_string()))
        );
        let out = parse_text(b"q1 Q0 a 1 2.5 t\nq1 Q0 \xC3 2 1 t\nq1 Q0 c 1\n");
        assert_eq!(
            out.error,
            Some((
                2,
                "invalid UTF-8 at byte 7 of the line: expected UTF-8 text".to_string()
            ))
        );
        let out = parse_text(b"q1 Q0 a 1 2.5 t\nq1 Q0 c 1\nq1 Q0 \xC3 2 1 t\n");
        assert_eq!(
            out.error,
            Some((2, format!("expected {EXPECTED_FIELDS}, found 4")))
        );
    }

    #[test]
    fn control_bytes_other_than_space_tab_and_line_ends_are_errors() {
        let out = parse_text(b"q1 Q0 a 1 2.5 t\nq1 Q0 b\x002 2 1.5 t\n");
        assert_eq!(
            out.error,
            Some((
                2,
                format!(
                    "control byte 0x00 in the line: expected {EXPECTED_FIELDS}, separated by spaces or tabs"
                )
            ))
        );
        let out = parse_text(b"q1\x0bQ0 a 1 2.5 t\n");
        assert_eq!(out.error.map(|(line, _)| line), Some(1));
    }

    #[test]
    fn comment_lines_are_skipped_and_extra_fields_ignored_both_counted() {
        let out =
            parse_text(b"# run of 2026\nq1 Q0 a 1 2.5 t more junk\n#x y\nq1 Q0 b 2 1.5 t\n# last");
        assert!(out.error.is_none());
        assert_eq!(out.line_count, 5);
        assert_eq!(
            out.notes,
            LineNotes {
                comments: 3,
                extra_fields: 1
            }
        );
        let [group] = &out.outputs[..] else {
            panic!("one group expected: a comment does not split a query")
        };
        assert_eq!((&*group.qid, group.first_line), ("q1", 2));
        assert_eq!(
            group.value,
            [("a".to_string(), 2.5), ("b".to_string(), 1.5)]
        );
        // a `#` after the line's start is no comment, and fewer than six fields still fail
        let out = parse_text(b"q1 Q0 a 1 2.5 t\n q1 # b 2 1.5\n");
        assert_eq!(
            out.error,
            Some((2, format!("expected {EXPECTED_FIELDS}, found 5")))
        );
        // fields after the sixth are not read: a bad rank or score before them still fails
        let out = parse_text(b"q1 Q0 a x 2.5 t junk\n");
        assert_eq!(
            out.error,
            Some((1, "rank `x`: expected an integer".to_string()))
        );
        // control bytes in a comment are still errors
        let out = parse_text(b"# a\x00b\n");
        assert_eq!(out.error.map(|(line, _)| line), Some(1));
    }

    #[test]
    fn non_ascii_utf8_ids_are_fine() {
        let out = parse_text("q1 Q0 café 1 2.5 t\n".as_bytes());
        assert!(out.error.is_none());
        assert_eq!(out.outputs[0].value[0].0, "café");
    }
}
