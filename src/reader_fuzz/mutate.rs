//! Structure-aware mutations of a valid input: line and field edits, deleted delimiters and
//! inserted hostile tokens (NUL, BOM, CRLF, huge or non-finite numbers, invalid UTF-8, long ids).

use proptest::prelude::*;

/// Tokens a hostile or broken input may carry, inserted at a position or put in place of a number.
const TOKENS: &[&[u8]] = &[
    b"\0",
    b"\xEF\xBB\xBF",
    b"\r\n",
    b"\r",
    b"\n",
    b"\t",
    b" ",
    b"NaN",
    b"nan",
    b"inf",
    b"-inf",
    b"Infinity",
    b"-0",
    b"-0.0",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"1e308",
    b"-1",
    b"1024",
    b"65536",
    b"4294967296",
    b"9223372036854775807",
    b"9223372036854775808",
    b"-9223372036854775809",
    b"18446744073709551616",
    b"0.30000000000000004",
    b"00001",
    b"0x10",
    b"\xFF",
    b"\xC3",
    b"\xED\xA0\x80",
    b"\\u0000",
    b"\\ud800",
    b"null",
    b"true",
    b"[]",
    b"{}",
    b"\"\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"${",
    b"${RAGATE_FUZZ_UNSET}",
    b"${HOME}",
    b"&a",
    b"*a",
    b"!!binary",
    b"---\n",
    b"- ",
    b"#",
    b"Q0",
    b"\xE2\x80\xAE",
];

/// Bytes that delimit structure; deleting one breaks a brace, a string or a field.
const DELIMITERS: &[u8] = b"{}[]\":,\t \n";

/// One edit: its kind and raw parameters (positions are taken modulo the input's length).
pub(super) type Edit = (u8, usize, usize, u8);

const EDIT_KINDS: u8 = 11;

/// Mutations of one of `seeds`: 1 to 4 edits applied in turn.
pub(super) fn mutated(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let count = seeds.len();
    (
        0..count,
        prop::collection::vec(
            (0..EDIT_KINDS, any::<usize>(), any::<usize>(), any::<u8>()),
            1..5,
        ),
    )
        .prop_map(move |(seed, edits)| {
            let mut bytes = seeds[seed].clone();
            for edit in edits {
                apply(&mut bytes, edit);
            }
            bytes
        })
}

/// Arbitrary bytes, half of the time after a valid-looking start so that format detection
/// passes and the parser behind it sees them.
pub(super) fn arbitrary() -> impl Strategy<Value = Vec<u8>> {
    let prefixes: &[&[u8]] = &[b"", b"{", b"{\"qid\":", b"q1 Q0 ", b"q1\t", b"version: 1\n"];
    (
        prop::sample::select(prefixes.to_vec()),
        prop::collection::vec(any::<u8>(), 0..512),
    )
        .prop_map(|(prefix, tail)| [prefix, &tail[..]].concat())
}

fn line_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            ranges.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < bytes.len() {
        ranges.push((start, bytes.len()));
    }
    ranges
}

/// Spans of ASCII digits (with sign, point and exponent), the numbers of the input.
fn number_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = if i > 0 && bytes[i - 1] == b'-' {
                i - 1
            } else {
                i
            };
            while i < bytes.len() && matches!(bytes[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+') {
                i += 1;
            }
            ranges.push((start, i));
        } else {
            i += 1;
        }
    }
    ranges
}

fn pick<T: Copy>(items: &[T], index: usize) -> Option<T> {
    (!items.is_empty()).then(|| items[index % items.len()])
}

fn apply(bytes: &mut Vec<u8>, (kind, a, b, byte): Edit) {
    let len = bytes.len();
    let lines = line_ranges(bytes);
    let token = TOKENS[(a ^ b) % TOKENS.len()];
    match kind {
        // truncate
        0 => bytes.truncate(a % (len + 1)),
        // duplicate a line
        1 => {
            if let Some((s, e)) = pick(&lines, a) {
                let line = bytes[s..e].to_vec();
                bytes.splice(e..e, line);
            }
        }
        // delete a line
        2 => {
            if let Some((s, e)) = pick(&lines, a) {
                bytes.drain(s..e);
            }
        }
        // swap two lines
        3 => {
            if let (Some(x), Some(y)) = (pick(&lines, a), pick(&lines, b)) {
                let mut order: Vec<(usize, usize)> = lines.clone();
                let (i, j) = (
                    order.iter().position(|&r| r == x).unwrap_or(0),
                    order.iter().position(|&r| r == y).unwrap_or(0),
                );
                order.swap(i, j);
                *bytes = order
                    .iter()
                    .flat_map(|&(s, e)| bytes[s..e].to_vec())
                    .collect();
            }
        }
        // swap two fields of a line (split on tab, space or comma)
        4 => {
            if let Some((s, e)) = pick(&lines, a) {
                let line = &bytes[s..e];
                let separator = [b'\t', b' ', b','][b % 3];
                let mut fields: Vec<&[u8]> = line.split(|&c| c == separator).collect();
                if fields.len() > 1 {
                    let i = b % fields.len();
                    let j = (b / 3 + 1) % fields.len();
                    fields.swap(i, j);
                    let joined = fields.join(&separator);
                    bytes.splice(s..e, joined);
                }
            }
        }
        // insert a token
        5 => {
            let at = a % (len + 1);
            bytes.splice(at..at, token.iter().copied());
        }
        // replace a number by a token
        6 => {
            if let Some((s, e)) = pick(&number_ranges(bytes), a) {
                bytes.splice(s..e, token.iter().copied());
            }
        }
        // delete a delimiter (a brace, a quote, a tab...)
        7 => {
            let positions: Vec<usize> = (0..len)
                .filter(|&i| DELIMITERS.contains(&bytes[i]))
                .collect();
            if let Some(at) = pick(&positions, a) {
                bytes.remove(at);
            }
        }
        // overwrite one byte
        8 => {
            if len > 0 {
                bytes[a % len] = byte;
            }
        }
        // insert a very long id-like run
        9 => {
            let at = a % (len + 1);
            let run = vec![b'a' + byte % 26; 1 + b % 100_000];
            bytes.splice(at..at, run);
        }
        // replace a number by a huge digit string
        _ => {
            if let Some((s, e)) = pick(&number_ranges(bytes), a) {
                let digits = vec![b'9'; 1 + b % 400];
                bytes.splice(s..e, digits);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_change_the_input_as_named() {
        let seed = b"q1 0 d1 2\nq2 0 d2 1\n".to_vec();
        let edit = |e: Edit| {
            let mut bytes = seed.clone();
            apply(&mut bytes, e);
            String::from_utf8_lossy(&bytes).into_owned()
        };
        assert_eq!(edit((0, 4, 0, 0)), "q1 0");
        assert_eq!(edit((1, 0, 0, 0)), "q1 0 d1 2\nq1 0 d1 2\nq2 0 d2 1\n");
        assert_eq!(edit((2, 1, 0, 0)), "q1 0 d1 2\n");
        assert_eq!(edit((3, 0, 1, 0)), "q2 0 d2 1\nq1 0 d1 2\n");
        assert_eq!(edit((4, 0, 4, 0)), "d1 0 q1 2\nq2 0 d2 1\n");
        assert_eq!(edit((6, 3, 0, 0)), "q1 0 d1 \r\nq2 0 d2 1\n");
        assert_eq!(edit((7, 0, 0, 0)), "q10 d1 2\nq2 0 d2 1\n");
        assert_eq!(edit((10, 0, 2, 0)).lines().next(), Some("q999 0 d1 2"));
    }
}
