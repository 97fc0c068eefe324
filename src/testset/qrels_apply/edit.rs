//! The qrels file with accepted judgments written in, in its own format: native JSONL lines
//! rewritten (`graded_relevance`, `gold_doc_ids`, `judged_by`; the line as a [`QrelsLine`], its
//! fields in that type's order), TREC and TSV lines replaced in place or appended. Lines without
//! an accepted judgment are kept byte for byte.

use std::collections::BTreeMap;

use crate::input::judged_by::ModelJudgment;
use crate::input::native_qrels::QrelsLine;
use crate::input::trec_qrels::Layout;

/// The lowest grade of a model judgment that joins a native query's `gold_doc_ids` (TREC DL's
/// binary relevance: 2 highly and 3 perfectly relevant; 1 "related" is graded, not gold).
pub(crate) const GOLD_GRADE: u8 = 2;

/// A judgment to write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Accepted {
    /// The query.
    pub qid: String,
    /// The document.
    pub doc_id: String,
    /// The grade, 0-3.
    pub grade: u8,
    /// The judge's identity, for the provenance.
    pub judge: String,
}

/// The lines of `text`, each with its line ending.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n')
}

/// The line ending of `line` (`\r\n`, `\n` or none) and the line without it.
fn split_ending(line: &str) -> (&str, &str) {
    if let Some(body) = line.strip_suffix("\r\n") {
        (body, "\r\n")
    } else if let Some(body) = line.strip_suffix('\n') {
        (body, "\n")
    } else {
        (line, "")
    }
}

/// Native qrels JSONL with `accepted` (by qid) written into their queries' lines. `at` is the
/// time recorded in `judged_by`. Every qid of `accepted` must have a line (the caller checked
/// against the parsed qrels).
pub(crate) fn native(text: &str, accepted: &BTreeMap<&str, Vec<&Accepted>>, at: &str) -> String {
    let mut out = String::with_capacity(text.len() + 256 * accepted.len());
    for (index, line) in lines(text).enumerate() {
        let (body, ending) = split_ending(line);
        let bom = if index == 0 && body.starts_with('\u{feff}') {
            "\u{feff}"
        } else {
            ""
        };
        let json_text = &body[bom.len()..];
        let parsed: Option<QrelsLine> = serde_json::from_str(json_text.trim()).ok();
        let judgments = parsed
            .as_ref()
            .and_then(|line| accepted.get(line.qid.as_str()));
        match (parsed, judgments) {
            (Some(mut query), Some(judgments)) => {
                for judgment in judgments {
                    write_native(&mut query, judgment, at);
                }
                out.push_str(bom);
                out.push_str(&query.to_json());
                out.push_str(if ending.is_empty() { "\n" } else { ending });
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Writes one judgment into a native query's line.
fn write_native(query: &mut QrelsLine, judgment: &Accepted, at: &str) {
    let doc = judgment.doc_id.as_str();
    if let Some(gold) = &mut query.gold_doc_ids {
        let listed = gold.iter().position(|d| d == doc);
        match (judgment.grade >= GOLD_GRADE, listed) {
            (true, None) => gold.push(doc.to_string()),
            (false, Some(position)) => {
                gold.remove(position);
            }
            _ => {}
        }
    }
    query.grade(doc, judgment.grade.into());
    let provenance = ModelJudgment {
        judge: judgment.judge.clone(),
        at: Some(at.to_string()),
    };
    let judged_by = query.judged_by.get_or_insert_with(Default::default);
    judged_by.0.insert(doc.to_string(), provenance);
}

/// TREC or TSV qrels with `accepted` written: a judged (qid, doc_id) line gets the new grade in
/// place, the others are appended in order (`qid 0 doc grade` or `qid<TAB>doc<TAB>grade`).
pub(crate) fn lines_format(text: &str, layout: Layout, accepted: &[Accepted]) -> String {
    let mut by_pair: BTreeMap<(&str, &str), &Accepted> = accepted
        .iter()
        .map(|a| ((a.qid.as_str(), a.doc_id.as_str()), a))
        .collect();
    let mut out = String::with_capacity(text.len() + 32 * accepted.len());
    for line in lines(text) {
        let (body, ending) = split_ending(line);
        let fields: Vec<&str> = match layout {
            Layout::Trec => body.split_ascii_whitespace().collect(),
            Layout::Tsv => body.split('\t').map(str::trim).collect(),
        };
        let pair = match (layout, fields.as_slice()) {
            (Layout::Trec, [qid, _, doc, _]) | (Layout::Tsv, [qid, doc, _]) => Some((*qid, *doc)),
            _ => None,
        };
        match pair.and_then(|pair| by_pair.remove(&pair)) {
            Some(judgment) => {
                let replaced = match layout {
                    Layout::Trec => format!(
                        "{} {} {} {}",
                        fields[0], fields[1], fields[2], judgment.grade
                    ),
                    Layout::Tsv => format!("{}\t{}\t{}", fields[0], fields[1], judgment.grade),
                };
                out.push_str(&replaced);
                out.push_str(if ending.is_empty() { "\n" } else { ending });
            }
            None => out.push_str(line),
        }
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    for judgment in accepted {
        if by_pair
            .remove(&(judgment.qid.as_str(), judgment.doc_id.as_str()))
            .is_some()
        {
            let line = match layout {
                Layout::Trec => format!(
                    "{} 0 {} {}\n",
                    judgment.qid, judgment.doc_id, judgment.grade
                ),
                Layout::Tsv => format!(
                    "{}\t{}\t{}\n",
                    judgment.qid, judgment.doc_id, judgment.grade
                ),
            };
            out.push_str(&line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(qid: &str, doc: &str, grade: u8) -> Accepted {
        Accepted {
            qid: qid.into(),
            doc_id: doc.into(),
            grade,
            judge: "command `j`".into(),
        }
    }

    #[test]
    fn native_lines_get_grades_gold_and_provenance_and_others_stay_byte_for_byte() {
        let text = "{\"qid\": \"q1\", \"query\": \"x\", \"gold_doc_ids\": [\"d1\"], \"class\": \"a\"}\r\n\
                    {\"qid\": \"q2\",  \"query\": \"y\", \"graded_relevance\": {\"d1\": 1}}\n";
        let (high, low, other) = (
            accepted("q1", "d2", 3),
            accepted("q1", "d3", 1),
            accepted("zz", "d", 1),
        );
        let mut by_qid: BTreeMap<&str, Vec<&Accepted>> = BTreeMap::new();
        by_qid.insert("q1", vec![&high, &low]);
        by_qid.insert("zz", vec![&other]);
        let out = native(text, &by_qid, "2026-12-03T00:00:00Z");
        let (first, second) = out.split_once("\r\n").unwrap();
        assert_eq!(
            first,
            "{\"qid\":\"q1\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\",\"d2\"],\
             \"graded_relevance\":{\"d2\":3,\"d3\":1},\"class\":\"a\",\"judged_by\":{\
             \"d2\":{\"judge\":\"command `j`\",\"at\":\"2026-12-03T00:00:00Z\"},\
             \"d3\":{\"judge\":\"command `j`\",\"at\":\"2026-12-03T00:00:00Z\"}}}"
        );
        assert_eq!(
            second,
            "{\"qid\": \"q2\",  \"query\": \"y\", \"graded_relevance\": {\"d1\": 1}}\n"
        );
        // What it wrote reads back: d2 gold with grade 3, d3 graded 1 but not gold.
        let file =
            crate::input::text_file::TextFile::from_bytes("q.jsonl", out.into_bytes()).unwrap();
        let qrels = crate::input::native_qrels::read(&file).unwrap();
        let q1 = &qrels.queries()[0];
        assert_eq!(
            q1.judgments.get("d2").map(|j| (j.grade, j.relevant)),
            Some((3, true))
        );
        assert_eq!(
            q1.judgments.get("d3").map(|j| (j.grade, j.relevant)),
            Some((1, false))
        );
        assert_eq!(q1.judged_by.keys().collect::<Vec<_>>(), vec!["d2", "d3"]);
        assert!(qrels.queries()[1].judged_by.is_empty());
    }

    #[test]
    fn a_native_overwrite_below_the_gold_grade_leaves_the_gold_list() {
        let text = "{\"qid\":\"q1\",\"query\":\"x\",\"gold_doc_ids\":[\"d1\",\"d2\"]}";
        let low = accepted("q1", "d1", 0);
        let by_qid = BTreeMap::from([("q1", vec![&low])]);
        let out = native(text, &by_qid, "t");
        assert!(out.contains("\"gold_doc_ids\":[\"d2\"]"), "{out}");
        assert!(out.contains("\"graded_relevance\":{\"d1\":0}"), "{out}");
        assert!(out.ends_with('\n'));
    }

    #[test]
    fn trec_and_tsv_lines_are_replaced_in_place_or_appended() {
        let trec = "# judged by people\nq1 0 d1 1\nq1 0 d2 0";
        let out = lines_format(
            trec,
            Layout::Trec,
            &[accepted("q1", "d2", 2), accepted("q2", "d9", 1)],
        );
        assert_eq!(out, "# judged by people\nq1 0 d1 1\nq1 0 d2 2\nq2 0 d9 1\n");
        let tsv = "query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\n";
        let out = lines_format(tsv, Layout::Tsv, &[accepted("q1", "d3", 3)]);
        assert_eq!(
            out,
            "query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\nq1\td3\t3\n"
        );
    }
}
