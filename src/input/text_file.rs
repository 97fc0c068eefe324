//! A whole text file read into memory and split into numbered lines (BOM and CRLF tolerated).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The bytes of one input file with its path, for readers of small and medium files
/// (qrels, queries, native runs). Large TREC runs are streamed by `trec_run` instead.
pub struct TextFile {
    path: PathBuf,
    bytes: Vec<u8>,
}

/// One non-blank line: its 1-based number and its text without the line ending.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    pub number: u64,
    pub text: &'a str,
}

impl TextFile {
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Ok(TextFile {
            path: path.to_path_buf(),
            bytes,
        })
    }

    #[cfg(test)]
    pub fn from_bytes(path: &str, bytes: &[u8]) -> Self {
        TextFile {
            path: PathBuf::from(path),
            bytes: bytes.to_vec(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn content(&self) -> &[u8] {
        self.bytes.strip_prefix(UTF8_BOM).unwrap_or(&self.bytes)
    }

    /// The first non-blank line, for format detection.
    pub fn first_line(&self) -> Result<Option<Line<'_>>> {
        self.lines().next().transpose()
    }

    /// Non-blank lines in order. Blank (whitespace-only) lines carry no data and are skipped;
    /// a line that is not UTF-8 is an error naming it.
    pub fn lines(&self) -> impl Iterator<Item = Result<Line<'_>>> + '_ {
        let path = &self.path;
        self.content()
            .split(|&b| b == b'\n')
            .enumerate()
            .filter_map(move |(index, raw)| {
                let number = index as u64 + 1;
                let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
                match std::str::from_utf8(raw) {
                    Ok(text) if text.trim().is_empty() => None,
                    Ok(text) => Some(Ok(Line { number, text })),
                    Err(e) => Some(Err(Error::parse(
                        path,
                        number,
                        format!(
                            "invalid UTF-8 at byte {} of the line: expected UTF-8 text",
                            e.valid_up_to() + 1
                        ),
                    ))),
                }
            })
    }

    /// Fails when the file holds no data at all.
    pub fn require_data(&self, expected: &str) -> Result<()> {
        match self.first_line()? {
            Some(_) => Ok(()),
            None => Err(Error::input(
                &self.path,
                format!("the file is empty: expected {expected}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(file: &TextFile) -> Vec<(u64, String)> {
        file.lines()
            .map(|l| l.map(|l| (l.number, l.text.to_string())))
            .collect::<Result<_>>()
            .unwrap()
    }

    #[test]
    fn strips_bom_and_crlf_and_skips_blank_lines_keeping_numbers() {
        let file = TextFile::from_bytes("f", b"\xEF\xBB\xBFa b\r\n\r\n  \nc\n");
        assert_eq!(
            numbered(&file),
            vec![(1, "a b".to_string()), (4, "c".to_string())]
        );
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let file = TextFile::from_bytes("runs/x.jsonl", b"ok\nbad \xFF\n");
        let err = file.lines().find_map(|l| l.err()).unwrap();
        assert_eq!(
            err.to_string(),
            "runs/x.jsonl:2: invalid UTF-8 at byte 5 of the line: expected UTF-8 text"
        );
    }

    #[test]
    fn empty_file_is_an_error() {
        let file = TextFile::from_bytes("q.tsv", b"\n \r\n");
        let err = file.require_data("qrels lines").unwrap_err();
        assert_eq!(
            err.to_string(),
            "q.tsv: the file is empty: expected qrels lines"
        );
    }
}
