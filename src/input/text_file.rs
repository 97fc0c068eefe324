//! A whole text file read into memory and split into numbered lines (BOM and CRLF tolerated).

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// One input file read whole and checked to be UTF-8, for readers of small and medium files
/// (qrels, queries, corpora, native runs). Large TREC runs are streamed by `trec_run` instead.
pub struct TextFile {
    path: PathBuf,
    text: String,
}

/// One non-blank line: its 1-based number and its text without the line ending.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// The line's 1-based number.
    pub number: u64,
    /// The line's text, without its ending.
    pub text: &'a str,
}

impl TextFile {
    /// Reads the file at `path`: UTF-8 (a leading BOM dropped), else an error naming the file.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(path, bytes)
    }

    /// Checks the whole content at once; the error names the line of the first invalid byte.
    pub fn from_bytes(path: impl Into<PathBuf>, mut bytes: Vec<u8>) -> Result<Self> {
        let path = path.into();
        if bytes.starts_with(UTF8_BOM) {
            bytes.drain(..UTF8_BOM.len());
        }
        match String::from_utf8(bytes) {
            Ok(text) => Ok(TextFile { path, text }),
            Err(e) => {
                let bytes = e.as_bytes();
                let offset = e.utf8_error().valid_up_to();
                let before = &bytes[..offset];
                let line = before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
                let line_start = before
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                Err(Error::parse(
                    &path,
                    line,
                    format!(
                        "invalid UTF-8 at byte {} of the line: expected UTF-8 text",
                        offset - line_start + 1
                    ),
                ))
            }
        }
    }

    /// The file's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The first non-blank line, for format detection.
    pub fn first_line(&self) -> Option<Line<'_>> {
        self.lines().next()
    }

    /// Non-blank lines in order with their numbers; blank (whitespace-only) lines carry no data.
    pub fn lines(&self) -> impl Iterator<Item = Line<'_>> + '_ {
        self.text
            .split('\n')
            .enumerate()
            .filter_map(|(index, raw)| {
                let text = raw.strip_suffix('\r').unwrap_or(raw);
                (!text.trim().is_empty()).then_some(Line {
                    number: index as u64 + 1,
                    text,
                })
            })
    }

    /// Fails when the file holds no data at all.
    pub fn require_data(&self, expected: &str) -> Result<()> {
        match self.first_line() {
            Some(_) => Ok(()),
            None => Err(Error::input(
                &self.path,
                format!("the file is empty: expected {expected}"),
            )),
        }
    }
}

/// Accepts an id (a qid) without control characters: a tab or a line break inside an id would
/// break the line formats ragate writes (`eval --format tsv`, TREC-style rows). `what` names the
/// field in the message.
pub fn check_id(what: &str, id: &str) -> std::result::Result<(), String> {
    match id.chars().find(|c| c.is_control()) {
        None => Ok(()),
        Some(c) => Err(format!(
            "{what} {} contains the control character U+{:04X}: expected an id without tabs, \
             line breaks or other control characters",
            crate::error::shorten(&format!("{id:?}")),
            u32::from(c)
        )),
    }
}

/// The line where each id of a file first appeared, so that a repeat names both lines.
#[derive(Debug, Default)]
pub struct FirstLines(FxHashMap<String, u64>);

impl FirstLines {
    /// Records `id` at `line`; an id seen before is an error (`what` names the field,
    /// `expected` what a valid file has).
    pub fn record(
        &mut self,
        file: &TextFile,
        what: &str,
        id: &str,
        line: u64,
        expected: &str,
    ) -> Result<()> {
        match self.0.insert(id.to_string(), line) {
            None => Ok(()),
            Some(first) => Err(Error::parse(
                file.path(),
                line,
                format!(
                    "{what} `{}` appears twice (lines {first} and {line}): expected {expected}",
                    crate::error::shorten(id)
                ),
            )),
        }
    }

    /// The line where `id` was first seen, if it was.
    pub fn get(&self, id: &str) -> Option<u64> {
        self.0.get(id).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(file: &TextFile) -> Vec<(u64, String)> {
        file.lines()
            .map(|l| (l.number, l.text.to_string()))
            .collect()
    }

    #[test]
    fn strips_bom_and_crlf_and_skips_blank_lines_keeping_numbers() {
        let file = TextFile::from_bytes("f", b"\xEF\xBB\xBFa b\r\n\r\n  \nc\n".to_vec()).unwrap();
        assert_eq!(
            numbered(&file),
            vec![(1, "a b".to_string()), (4, "c".to_string())]
        );
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let err = TextFile::from_bytes("runs/x.jsonl", b"ok\nbad \xFF\n".to_vec())
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "runs/x.jsonl:2: invalid UTF-8 at byte 5 of the line: expected UTF-8 text"
        );
    }

    #[test]
    fn ids_with_control_characters_are_refused() {
        assert_eq!(check_id("qid", "q-1 é"), Ok(()));
        assert_eq!(
            check_id("qid", "a\tb"),
            Err(
                "qid \"a\\tb\" contains the control character U+0009: expected an id without \
                 tabs, line breaks or other control characters"
                    .to_string()
            )
        );
        assert!(check_id("qid", "a\u{0}").unwrap_err().contains("U+0000"));
        assert!(check_id("qid", "a\u{85}").unwrap_err().contains("U+0085"));
    }

    #[test]
    fn empty_file_is_an_error() {
        let file = TextFile::from_bytes("q.tsv", b"\n \r\n".to_vec()).unwrap();
        let err = file.require_data("qrels lines").unwrap_err();
        assert_eq!(
            err.to_string(),
            "q.tsv: the file is empty: expected qrels lines"
        );
    }
}
