//! Readers of qrels, query texts, corpora and runs, with format detection.

pub mod beir;
pub mod corpus;
pub(crate) mod decimal;
pub mod judge_items;
pub mod judged_by;
pub mod judgments;
pub mod labels;
pub mod native_qrels;
pub mod proposals;
pub mod qrels;
pub mod queries;
pub mod run;
pub mod text_file;
pub mod trec_qrels;
pub mod trec_run;
pub(crate) mod unique_keys;

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};
use qrels::Qrels;
use text_file::TextFile;
use trec_qrels::Layout;

/// Formats of relevance judgments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QrelsFormat {
    /// JSONL, one query a line (`qid`, `query`, `gold_doc_ids`, `graded_relevance`, ...).
    Native,
    /// `qid iter doc_id grade`.
    Trec,
    /// `qid<TAB>doc_id<TAB>grade`, header optional.
    Tsv,
    /// A BEIR folder (`queries.jsonl`, `qrels/<split>.tsv`).
    Beir,
}

/// Formats of runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunFormat {
    /// JSONL, one query a line (`qid`, `retrieved`, `answer`, `contexts`).
    Native,
    /// `qid Q0 doc_id rank score tag`.
    Trec,
}

fn has_json_extension(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("jsonl" | "json" | "ndjson")
    )
}

/// The qrels format of `file`, from its extension or its first non-comment line.
pub(crate) fn detect_qrels_format(file: &TextFile) -> Result<QrelsFormat> {
    if has_json_extension(file.path()) {
        return Ok(QrelsFormat::Native);
    }
    // trec_eval's comment lines (`#` first) say nothing of the format.
    let Some(line) = file.lines().find(|line| !line.text.starts_with('#')) else {
        return Err(Error::input(
            file.path(),
            "the file is empty: expected qrels (native JSONL, TREC `qid iter doc_id grade` or TSV `qid<TAB>doc_id<TAB>grade`)",
        ));
    };
    let text = line.text.trim();
    let format = if text.starts_with('{') {
        QrelsFormat::Native
    } else if text.split('\t').count() == 3 {
        QrelsFormat::Tsv
    } else if text.split_ascii_whitespace().count() == 4 {
        QrelsFormat::Trec
    } else {
        return Err(Error::parse(
            file.path(),
            line.number,
            format!(
                "cannot tell the qrels format: tried native JSONL (a JSON object a line), TREC \
                 (`qid iter doc_id grade`), TSV (`qid<TAB>doc_id<TAB>grade`) and BEIR (a folder), \
                 but the first line has {} whitespace-separated fields; pass --qrels-format",
                text.split_ascii_whitespace().count()
            ),
        ));
    };
    Ok(format)
}

/// Reads qrels in `format`, or in the format detected from the path and the first line.
/// `queries` gives query texts to formats that have none (TREC, TSV).
pub fn load_qrels(
    path: &Path,
    format: Option<QrelsFormat>,
    beir_split: &str,
    queries: Option<&Path>,
) -> Result<Qrels> {
    let mut qrels = if format == Some(QrelsFormat::Beir) || (format.is_none() && path.is_dir()) {
        beir::read_qrels(path, beir_split)?
    } else {
        read_qrels_file(&TextFile::read(path)?, format)?
    };
    if let Some(queries_path) = queries {
        let texts = queries::read(&TextFile::read(queries_path)?)?;
        queries::attach(&mut qrels, texts);
    }
    Ok(qrels)
}

/// Reads a qrels file (not a BEIR folder) in `format`, or in the format detected from its path and
/// first line.
pub fn read_qrels_file(file: &TextFile, format: Option<QrelsFormat>) -> Result<Qrels> {
    match format.map_or_else(|| detect_qrels_format(file), Ok)? {
        QrelsFormat::Native => native_qrels::read(file),
        QrelsFormat::Trec => trec_qrels::read(file, Layout::Trec),
        QrelsFormat::Tsv => trec_qrels::read(file, Layout::Tsv),
        QrelsFormat::Beir => Err(Error::input(
            file.path(),
            "not a folder: a BEIR qrels source is a folder with `queries.jsonl` and `qrels/<split>.tsv`",
        )),
    }
}

/// Detects a run's format from its extension or its first non-blank line (reading 64 KiB at most).
pub fn detect_run_format(path: &Path) -> Result<RunFormat> {
    if has_json_extension(path) {
        return Ok(RunFormat::Native);
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(64 << 10).read_to_end(&mut head))
        .map_err(|e| Error::io(path, e))?;
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    let Some((index, line)) = head
        .split(|&b| b == b'\n')
        .enumerate()
        .find(|(_, l)| !l.trim_ascii().is_empty() && !l.starts_with(b"#"))
    else {
        return Err(Error::input(
            path,
            "the file is empty: expected a run (native JSONL or TREC `qid Q0 doc_id rank score tag`)",
        ));
    };
    let line = line.trim_ascii();
    if line.starts_with(b"{") {
        return Ok(RunFormat::Native);
    }
    let fields = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .count();
    // Fields after the sixth (`tag`) are accepted and ignored, as trec_eval does.
    if fields >= 6 {
        return Ok(RunFormat::Trec);
    }
    Err(Error::parse(
        path,
        index as u64 + 1,
        format!(
            "cannot tell the run format: tried native JSONL (a JSON object a line) and TREC \
             (`qid Q0 doc_id rank score tag`), but the first line has {fields} whitespace-separated \
             fields; pass --run-format"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn detects_qrels_formats_from_contents() {
        let dir = tempfile::tempdir().unwrap();
        let trec = write(dir.path(), "a.txt", "q1 0 d1 1\n");
        let tsv = write(dir.path(), "b.txt", "q1\td1\t1\n");
        let native = write(
            dir.path(),
            "c.txt",
            "{\"qid\":\"q1\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\"]}\n",
        );
        for path in [trec, tsv, native] {
            let qrels = load_qrels(&path, None, "test", None).unwrap();
            assert_eq!(qrels.queries()[0].judgments.get("d1").unwrap().grade, 1);
        }
        let commented = write(dir.path(), "e.txt", "# a comment line\nq1 0 d1 1\n");
        let qrels = load_qrels(&commented, None, "test", None).unwrap();
        assert_eq!(qrels.comment_lines(), 1);
        let unknown = write(dir.path(), "d.txt", "q1 d1\n");
        let err = load_qrels(&unknown, None, "test", None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("d.txt:1: cannot tell the qrels format: tried native JSONL"),
            "{err}"
        );
        assert!(
            err.ends_with("the first line has 2 whitespace-separated fields; pass --qrels-format"),
            "{err}"
        );
    }

    #[test]
    fn detects_run_formats() {
        let dir = tempfile::tempdir().unwrap();
        let trec = write(dir.path(), "r.txt", "\u{feff}\r\nq1 Q0 d1 1 2.5 tag\r\n");
        assert_eq!(detect_run_format(&trec).unwrap(), RunFormat::Trec);
        let native = write(dir.path(), "r.out", "{\"qid\":\"q1\",\"retrieved\":[]}\n");
        assert_eq!(detect_run_format(&native).unwrap(), RunFormat::Native);
        let empty = write(dir.path(), "e.txt", "\n");
        assert!(
            detect_run_format(&empty)
                .unwrap_err()
                .to_string()
                .contains("the file is empty")
        );
        let commented = write(
            dir.path(),
            "c.txt",
            "# run of 2026\nq1 Q0 d1 1 2.5 tag extra\n",
        );
        assert_eq!(detect_run_format(&commented).unwrap(), RunFormat::Trec);
        let bad = write(dir.path(), "b.txt", "q1 d1 3\n");
        let err = detect_run_format(&bad).unwrap_err().to_string();
        assert!(err.contains("b.txt:1: cannot tell the run format"), "{err}");
    }
}
