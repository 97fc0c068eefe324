//! Readers of line-oriented qrels: TREC (`qid iter doc_id grade`, lines starting with `#` are
//! comments, skipped and counted, as trec_eval does) and TSV (`qid<TAB>doc_id<TAB>grade`).

use crate::error::{Error, Result};
use crate::input::qrels::{Judgment, Qrels, Unfinished, bounded_grade};
use crate::input::text_file::TextFile;

/// The two line layouts of graded judgments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `qid iter doc_id grade`, separated by any whitespace.
    Trec,
    /// `qid<TAB>doc_id<TAB>grade`, with an optional header line (BEIR: `query-id corpus-id score`).
    Tsv,
}

impl Layout {
    fn expected(self) -> &'static str {
        match self {
            Layout::Trec => "4 whitespace-separated fields `qid iter doc_id grade`",
            Layout::Tsv => "3 tab-separated fields `qid<TAB>doc_id<TAB>grade`",
        }
    }

    /// Splits a line into (qid, doc_id, grade text), or None when the field count is wrong.
    fn fields(self, text: &str) -> Option<(&str, &str, &str)> {
        match self {
            Layout::Trec => {
                let mut it = text.split_ascii_whitespace();
                let fields = (it.next()?, it.next()?, it.next()?, it.next()?);
                it.next()
                    .is_none()
                    .then_some((fields.0, fields.2, fields.3))
            }
            Layout::Tsv => {
                let mut it = text.split('\t').map(str::trim);
                let fields = (it.next()?, it.next()?, it.next()?);
                let complete = it.next().is_none()
                    && [fields.0, fields.1, fields.2].iter().all(|f| !f.is_empty());
                complete.then_some(fields)
            }
        }
    }
}

fn field_count(layout: Layout, text: &str) -> usize {
    match layout {
        Layout::Trec => text.split_ascii_whitespace().count(),
        Layout::Tsv => text.split('\t').count(),
    }
}

/// Reads TREC (`qid iter doc_id grade`) or TSV (`qid<TAB>doc_id<TAB>grade`) qrels, per `layout`.
pub fn read(file: &TextFile, layout: Layout) -> Result<Qrels> {
    let what = match layout {
        Layout::Trec => "TREC qrels lines `qid iter doc_id grade`",
        Layout::Tsv => "TSV qrels lines `qid<TAB>doc_id<TAB>grade`",
    };
    file.require_data(what)?;
    let mut qrels = Qrels::new(file.path());
    let mut first = true;
    let mut last: Option<(&str, usize)> = None;
    let mut comment_lines = 0;
    for line in file.lines() {
        if layout == Layout::Trec && line.text.starts_with('#') {
            comment_lines += 1;
            continue;
        }
        if let Some(c) = line.text.chars().find(|&c| c.is_control() && c != '\t') {
            return Err(Error::parse(
                file.path(),
                line.number,
                format!(
                    "control character U+{:04X} in the line: expected {} (fields separated by \
                     spaces or tabs, nothing else)",
                    u32::from(c),
                    layout.expected()
                ),
            ));
        }
        let Some((qid, doc, grade_text)) = layout.fields(line.text) else {
            return Err(Error::parse(
                file.path(),
                line.number,
                format!(
                    "expected {}, found {} fields",
                    layout.expected(),
                    field_count(layout, line.text)
                ),
            ));
        };
        let is_header = std::mem::take(&mut first)
            && layout == Layout::Tsv
            && grade_text.parse::<f64>().is_err();
        if is_header {
            continue;
        }
        let grade: i64 = grade_text.parse().map_err(|_| {
            Error::parse(
                file.path(),
                line.number,
                format!(
                    "grade `{}` of doc `{}`: expected an integer grade",
                    crate::error::shorten(grade_text),
                    crate::error::shorten(doc)
                ),
            )
        })?;
        let grade = bounded_grade(grade, doc)
            .map_err(|message| Error::parse(file.path(), line.number, message))?;
        // Qrels usually list a query's judgments together: look the qid up once per run of lines.
        let position = match last {
            Some((last_qid, position)) if last_qid == qid => position,
            _ => qrels.entry(qid),
        };
        last = Some((qid, position));
        qrels
            .query_mut(position)
            .judgments
            .push(doc, Judgment::from_grade(grade));
    }
    qrels.set_comment_lines(comment_lines);
    qrels.finish().map_err(|unfinished| match unfinished {
        Unfinished::Empty(error) => error,
        Unfinished::Duplicate { qid, doc } => {
            let lines = lines_judging(file, layout, &qid, &doc);
            Error::parse(
                file.path(),
                lines[1],
                format!(
                    "query `{}` judges doc `{}` twice (lines {} and {}): expected one judgment per pair",
                    crate::error::shorten(&qid),
                    crate::error::shorten(&doc),
                    lines[0],
                    lines[1]
                ),
            )
        }
    })
}

/// On the error path only: the first two lines that judge (`qid`, `doc`).
fn lines_judging(file: &TextFile, layout: Layout, qid: &str, doc: &str) -> [u64; 2] {
    let mut numbers = file
        .lines()
        .filter(|l| matches!(layout.fields(l.text), Some((q, d, _)) if q == qid && d == doc))
        .map(|l| l.number);
    [numbers.next().unwrap_or(0), numbers.next().unwrap_or(0)]
}
#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str, layout: Layout) -> Result<Qrels> {
        read(
            &TextFile::from_bytes("qrels.txt", text.as_bytes().to_vec()).unwrap(),
            layout,
        )
    }

    #[test]
    fn trec_qrels_group_by_query_in_first_seen_order() {
        let qrels = read_str(
            "q2 0 d1 1\nq1 0 d9 0\nq2 0 d2 3\r\nq1 0 d8 -1\n",
            Layout::Trec,
        )
        .unwrap();
        let q2 = &qrels.queries()[0];
        assert_eq!(q2.qid, "q2");
        assert_eq!(q2.judgments.get("d2").unwrap(), Judgment::from_grade(3));
        assert_eq!(qrels.queries()[1].num_relevant(), 0);
    }

    #[test]
    fn trec_comment_lines_are_skipped_and_counted() {
        let text = "# judged by NIST\nq1 0 d1 1\n# another\nq1 0 d2 0\n#\n";
        let qrels = read_str(text, Layout::Trec).unwrap();
        assert_eq!(qrels.comment_lines(), 3);
        assert_eq!(qrels.len(), 1);
        assert_eq!(qrels.queries()[0].judgments.len(), 2);
        assert_eq!(qrels.queries()[0].num_relevant(), 1);
        // only a `#` at the line's start makes a comment; TSV has none
        assert_eq!(
            read_str("q1 0 d1 1\nq1 # d2 1 x\n", Layout::Trec)
                .unwrap_err()
                .to_string(),
            "qrels.txt:2: expected 4 whitespace-separated fields `qid iter doc_id grade`, found 5 fields"
        );
        let tsv = read_str("# c\tx\t1\n", Layout::Tsv).unwrap();
        assert_eq!(
            (tsv.queries()[0].qid.as_str(), tsv.comment_lines()),
            ("# c", 0)
        );
        assert_eq!(
            read_str("q1 0 d1 1\n", Layout::Trec)
                .unwrap()
                .comment_lines(),
            0
        );
    }

    #[test]
    fn tsv_header_is_optional() {
        let with = read_str("query-id\tcorpus-id\tscore\nq1\td1\t2\n", Layout::Tsv).unwrap();
        let without = read_str("q1\td1\t2\n", Layout::Tsv).unwrap();
        assert_eq!(with.queries()[0].judgments, without.queries()[0].judgments);
    }

    #[test]
    fn errors_name_line_and_expectation() {
        let cases = [
            (
                "q1 0 d1\n",
                Layout::Trec,
                "qrels.txt:1: expected 4 whitespace-separated fields `qid iter doc_id grade`, found 3 fields",
            ),
            (
                "q1 0 d1 1\nq1 0 d2 x\n",
                Layout::Trec,
                "qrels.txt:2: grade `x` of doc `d2`: expected an integer grade",
            ),
            (
                "q1\td1\t1\nq1\td2\t1.5\n",
                Layout::Tsv,
                "qrels.txt:2: grade `1.5` of doc `d2`: expected an integer grade",
            ),
            (
                "q1 0 d1 100\nq1 0 d2 1024\n",
                Layout::Trec,
                "qrels.txt:2: grade 1024 of doc `d2` is out of range: expected an integer grade in -100..=100 (relevance levels; negative grades mean judged non-relevant)",
            ),
            (
                "q1\td1\t-100\nq1\td2\t-101\n",
                Layout::Tsv,
                "qrels.txt:2: grade -101 of doc `d2` is out of range: expected an integer grade in -100..=100 (relevance levels; negative grades mean judged non-relevant)",
            ),
            (
                "q1 0 d1 1\nq1 0 d\u{0}2 1\n",
                Layout::Trec,
                "qrels.txt:2: control character U+0000 in the line: expected 4 whitespace-separated fields `qid iter doc_id grade` (fields separated by spaces or tabs, nothing else)",
            ),
            (
                "q1\u{0}0\td1\t1\n",
                Layout::Tsv,
                "qrels.txt:1: control character U+0000 in the line: expected 3 tab-separated fields `qid<TAB>doc_id<TAB>grade` (fields separated by spaces or tabs, nothing else)",
            ),
            (
                "q1\td1\n",
                Layout::Tsv,
                "qrels.txt:1: expected 3 tab-separated fields `qid<TAB>doc_id<TAB>grade`, found 2 fields",
            ),
            (
                "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 2\n",
                Layout::Trec,
                "qrels.txt:3: query `q1` judges doc `d1` twice (lines 1 and 3): expected one judgment per pair",
            ),
            (
                "\n\n",
                Layout::Trec,
                "qrels.txt: the file is empty: expected TREC qrels lines `qid iter doc_id grade`",
            ),
        ];
        for (input, layout, expected) in cases {
            assert_eq!(read_str(input, layout).unwrap_err().to_string(), expected);
        }
    }
}
