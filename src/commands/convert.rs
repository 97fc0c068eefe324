//! `ragate convert`: TREC, TSV, BEIR or native qrels (with a queries file for their texts) to
//! native qrels JSONL, read by the same readers as `eval` and the tiers, so that a collection is
//! converted once and every parse error names its file and line.
//!
//! Output order: the queries file's order when one is given (its judged queries, in its split),
//! else the qrels' order (first seen). Judgments in a line are sorted by doc id. Nothing is dropped
//! silently: judged queries left out (not in the queries file or the split) and queries without
//! judgments are counted on stderr, and the fields not kept are named.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::cli::{ConvertArgs, ConvertFormat};
use crate::error::{Error, Result, shorten};
use crate::exit_code;
use crate::input::native_qrels::{self, QrelsLine};
use crate::input::qrels::{Qrels, QueryQrels};
use crate::input::queries::{self, QueryText};
use crate::input::text_file::TextFile;
use crate::input::unique_keys::UniqueKeys;
use crate::input::{self, QrelsFormat, beir};
use crate::outputs::output_files;
use crate::outputs::writer;
use crate::term;

/// The BEIR split read when `--split` names none.
const DEFAULT_BEIR_SPLIT: &str = "test";

pub(super) fn run(args: ConvertArgs) -> Result<i32> {
    refuse_kept_native_fields(&args.keep)?;
    let beir = args.format == ConvertFormat::Beir
        || (args.format == ConvertFormat::Auto && args.qrels.is_dir());
    refuse_inputs(&args, beir)?;
    let mut qrels = read_qrels(&args, beir)?;
    let texts = match &args.queries {
        Some(path) => {
            let file = TextFile::read(path).map_err(|e| e.named_by("--queries"))?;
            Some(queries::read(&file)?)
        }
        None => None,
    };
    let split_filter = args.split.as_deref().filter(|_| !beir);
    let (order, report) = match texts {
        Some(texts) => join(&mut qrels, texts, split_filter)?,
        None if split_filter.is_some() => {
            return Err(Error::Usage(
                "--split NAME keeps the queries of --queries whose `split` field is NAME (or names \
                 a BEIR folder's qrels/NAME.tsv): pass --queries FILE"
                    .to_string(),
            ));
        }
        None => ((0..qrels.len()).collect(), String::new()),
    };
    let lines = render(&qrels, &order, &args)?;
    if order.is_empty() {
        return Err(Error::input(
            &args.out,
            format!(
                "no judged query to write{report}: check that the qids of the queries and the qrels match"
            ),
        ));
    }
    writer::write(&args.out, &lines.text).map_err(|e| e.named_by("--out"))?;
    term::info(format!(
        "ragate convert: {} queries written to {}{report}{}",
        order.len(),
        args.out.display(),
        lines.not_kept
    ));
    Ok(exit_code::SUCCESS)
}

/// `--out` may be none of the inputs: the qrels (each file of a BEIR folder) and the queries.
fn refuse_inputs(args: &ConvertArgs, beir: bool) -> Result<()> {
    let mut inputs = if beir {
        output_files::files_in(&args.qrels, 1, "a file of the BEIR folder (--qrels)")
    } else {
        vec![output_files::input(&args.qrels, "the qrels (--qrels)")]
    };
    if let Some(path) = &args.queries {
        inputs.push(output_files::input(path, "the queries (--queries)"));
    }
    output_files::refuse_input("--out", &args.out, &inputs)
}

/// The qrels to convert: a BEIR folder's split, else the file in its (given or detected)
/// format, with the sidecar of TREC and TSV qrels.
fn read_qrels(args: &ConvertArgs, beir: bool) -> Result<Qrels> {
    if beir {
        let split = args.split.as_deref().unwrap_or(DEFAULT_BEIR_SPLIT);
        return beir::read_qrels(&args.qrels, split);
    }
    let file = TextFile::read(&args.qrels).map_err(|e| e.named_by("--qrels"))?;
    let format = match qrels_format(args.format) {
        Some(format) => format,
        None => input::detect_qrels_format(&file)?,
    };
    let mut qrels = input::read_qrels_file(&file, Some(format))?;
    // TREC and TSV qrels keep the provenance of model judgments in a sidecar: it travels.
    if format != QrelsFormat::Native {
        crate::tier::attach_sidecar(&mut qrels, &args.qrels)?;
    }
    Ok(qrels)
}

fn qrels_format(format: ConvertFormat) -> Option<QrelsFormat> {
    match format {
        ConvertFormat::Auto => None,
        ConvertFormat::Trec => Some(QrelsFormat::Trec),
        ConvertFormat::Tsv => Some(QrelsFormat::Tsv),
        ConvertFormat::Beir => Some(QrelsFormat::Beir),
        ConvertFormat::Native => Some(QrelsFormat::Native),
    }
}

/// Joins the texts (those of `split`, when given) to the qrels: the positions of the judged
/// queries in the queries file's order, and what was left out, as `; ...` clauses.
fn join(
    qrels: &mut Qrels,
    texts: Vec<QueryText>,
    split: Option<&str>,
) -> Result<(Vec<usize>, String)> {
    let total = texts.len();
    let texts: Vec<QueryText> = texts
        .into_iter()
        .filter(|t| split.is_none_or(|s| t.attributes.get("split").map(String::as_str) == Some(s)))
        .collect();
    let other_split = total - texts.len();
    let order: Vec<usize> = texts
        .iter()
        .filter_map(|t| qrels.position(&t.qid))
        .collect();
    let unjudged = queries::attach(qrels, texts);
    let mut report = String::new();
    if let Some(split) = split {
        report.push_str(&format!(
            "; {other_split} queries not in split `{split}` left out"
        ));
    }
    if unjudged > 0 {
        report.push_str(&format!("; {unjudged} queries without judgments left out"));
    }
    let ignored = qrels.len() - order.len();
    if ignored > 0 {
        let which = if split.is_some() {
            "not in the queries file's split"
        } else {
            "not in the queries file"
        };
        report.push_str(&format!(
            "; the judgments of {ignored} queries {which} ignored"
        ));
    }
    Ok((order, report))
}

/// The output text and the `; fields not kept` clause.
struct Lines {
    text: String,
    not_kept: String,
}

fn render(qrels: &Qrels, order: &[usize], args: &ConvertArgs) -> Result<Lines> {
    let source = args.queries.as_deref().unwrap_or(&args.qrels);
    let mut text = String::new();
    let mut not_kept = BTreeSet::new();
    for &position in order {
        let query = &qrels.queries()[position];
        let line = native_line(query, &args.keep, source)?;
        not_kept.extend(
            query
                .attributes
                .keys()
                .filter(|key| !args.keep.contains(key))
                .cloned(),
        );
        text.push_str(&line.to_json());
        text.push('\n');
    }
    let not_kept = if not_kept.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = not_kept.into_iter().collect();
        format!(
            "; fields not kept (--keep FIELD keeps one as a slice field): {}",
            names.join(", ")
        )
    };
    Ok(Lines { text, not_kept })
}

/// One query as a native qrels line.
fn native_line(query: &QueryQrels, keep: &[String], source: &Path) -> Result<QrelsLine> {
    let text = query_text(query, source)?;
    let mut line = QrelsLine {
        qid: query.qid.clone(),
        query: text.to_string(),
        gold_doc_ids: None,
        // Always written, empty too: a line needs `graded_relevance` or `gold_doc_ids`.
        graded_relevance: Some(UniqueKeys::default()),
        gold_answer_substring: query.gold_answer_substring.clone(),
        reference_answer: query.reference_answer.clone(),
        must_pass: query.must_pass.then_some(true),
        slices: UniqueKeys::default(),
        // The provenance of model judgments (`ragate qrels apply`) and of a drafted query
        // travels with them.
        judged_by: (!query.judged_by.is_empty()).then(|| UniqueKeys(query.judged_by.clone())),
        drafted_by: query.drafted_by.clone(),
    };
    for (doc, judgment) in query.judgments.iter() {
        line.grade(doc, judgment.grade);
    }
    // Relevance that the grades alone would not give (native `gold_doc_ids`) is kept as such.
    if query
        .judgments
        .iter()
        .any(|(_, j)| j.relevant != (j.grade >= 1))
    {
        let gold = query.judgments.iter().filter(|(_, j)| j.relevant);
        line.gold_doc_ids = Some(gold.map(|(doc, _)| doc.to_string()).collect());
    }
    for field in keep {
        let value = query.attributes.get(field).ok_or_else(|| {
            Error::input(
                source,
                format!(
                    "query `{}` has no field `{field}` to keep: expected every written query to \
                     have it (or drop --keep {field})",
                    shorten(&query.qid)
                ),
            )
        })?;
        line.slices
            .0
            .insert(field.clone(), Value::from(value.as_str()));
    }
    Ok(line)
}

/// `--keep` of a field ragate writes itself, or of a near miss of one (which would not read back
/// as a slice), is a usage error.
fn refuse_kept_native_fields(keep: &[String]) -> Result<()> {
    for field in keep {
        if QrelsLine::fields().contains(field) {
            return Err(Error::Usage(format!(
                "--keep {field}: ragate writes this field itself; keep only slice fields (such as `type`)"
            )));
        }
        if let Some(known) = native_qrels::near_miss(field) {
            return Err(Error::Usage(format!(
                "--keep {field}: too close to the native qrels field `{known}` to read back as a \
                 slice field: expected a slice field whose name is not a near miss of a field \
                 (rename it in the queries file)"
            )));
        }
    }
    Ok(())
}

/// A query's text, which a native qrels line needs.
fn query_text<'q>(query: &'q QueryQrels, source: &Path) -> Result<&'q str> {
    query
        .text
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            Error::input(
                source,
                format!(
                    "query `{}` has no text: native qrels need one; pass --queries FILE (TSV \
                     `qid<TAB>text` or JSONL with qid and query)",
                    shorten(&query.qid)
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn args(dir: &Path, queries: Option<&str>, split: Option<&str>, keep: &[&str]) -> ConvertArgs {
        ConvertArgs {
            qrels: dir.join("qrels.tsv"),
            queries: queries.map(|q| dir.join(q)),
            format: ConvertFormat::Auto,
            split: split.map(String::from),
            keep: keep.iter().map(|k| k.to_string()).collect(),
            out: dir.join("out.jsonl"),
        }
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_provenance_of_model_judgments_in_a_sidecar_travels_into_native_qrels() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        write(dir, "qrels.tsv", "a\td1\t1\na\td2\t2\n");
        write(
            dir,
            "qrels.tsv.judged_by.jsonl",
            "{\"qid\":\"a\",\"doc_id\":\"d2\",\"judge\":\"j\",\"at\":\"2026-12-01T00:00:00Z\"}\n",
        );
        write(
            dir,
            "queries.jsonl",
            "{\"qid\":\"a\",\"query\":\"first\"}\n",
        );
        run(args(dir, Some("queries.jsonl"), None, &[])).unwrap();
        let back = input::load_qrels(&dir.join("out.jsonl"), None, "test", None).unwrap();
        let query = &back.queries()[0];
        assert_eq!(
            query.judged_by.keys().collect::<Vec<_>>(),
            ["d2"],
            "d1 stays a human judgment"
        );
        assert_eq!(query.judged_by["d2"].judge, "j");
        std::fs::remove_file(dir.join("out.jsonl")).unwrap();
        write(
            dir,
            "qrels.tsv.judged_by.jsonl",
            "{\"qid\":\"a\",\"doc_id\":\"d9\",\"judge\":\"j\"}\n",
        );
        let error = run(args(dir, Some("queries.jsonl"), None, &[])).unwrap_err();
        assert!(error.to_string().contains("judged_by.jsonl"), "{error}");
    }

    #[test]
    fn output_follows_the_queries_file_and_reads_back_as_native_qrels() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        write(dir, "qrels.tsv", "a\td2\t1\na\td1\t0\nb\td3\t2\nc\td4\t1\n");
        write(
            dir,
            "queries.jsonl",
            "{\"qid\":\"c\",\"query\":\"third\",\"split\":\"test\",\"type\":\"x\"}\n\
             {\"qid\":\"z\",\"query\":\"unjudged\",\"split\":\"test\",\"type\":\"x\"}\n\
             {\"qid\":\"a\",\"query\":\"first\",\"split\":\"test\",\"type\":\"y\"}\n\
             {\"qid\":\"b\",\"query\":\"second\",\"split\":\"train\",\"type\":\"y\"}\n",
        );
        let run_once = || {
            run(args(dir, Some("queries.jsonl"), Some("test"), &["type"])).unwrap();
            std::fs::read_to_string(dir.join("out.jsonl")).unwrap()
        };
        let text = run_once();
        assert_eq!(
            text,
            "{\"qid\":\"c\",\"query\":\"third\",\"graded_relevance\":{\"d4\":1},\"type\":\"x\"}\n\
             {\"qid\":\"a\",\"query\":\"first\",\"graded_relevance\":{\"d1\":0,\"d2\":1},\"type\":\"y\"}\n"
        );
        assert_eq!(run_once(), text, "deterministic");
        let back = input::load_qrels(&dir.join("out.jsonl"), None, "test", None).unwrap();
        assert_eq!(back.queries()[1].judgments.get("d2").unwrap().grade, 1);
        assert_eq!(back.queries()[0].attributes["type"], "x");
    }

    #[test]
    fn a_kept_field_named_like_a_native_field_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        write(dir, "qrels.tsv", "a\td1\t1\n");
        write(
            dir,
            "queries.jsonl",
            "{\"qid\":\"a\",\"query\":\"x\",\"reference_anwser\":\"y\"}\n",
        );
        for (keep, expected) in [
            ("query", "--keep query: ragate writes this field itself"),
            (
                "reference_anwser",
                "--keep reference_anwser: too close to the native qrels field `reference_answer`",
            ),
        ] {
            let err = run(args(dir, Some("queries.jsonl"), None, &[keep]))
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(expected), "{err}");
        }
        assert!(!dir.join("out.jsonl").exists());
    }

    #[test]
    fn a_missing_text_or_kept_field_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        write(dir, "qrels.tsv", "a\td1\t1\n");
        let err = run(args(dir, None, None, &[])).unwrap_err().to_string();
        assert!(
            err.ends_with("qrels.tsv: query `a` has no text: native qrels need one; pass --queries FILE (TSV `qid<TAB>text` or JSONL with qid and query)"),
            "{err}"
        );
        write(dir, "queries.tsv", "a\tfirst\n");
        let err = run(args(dir, Some("queries.tsv"), None, &["type"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("queries.tsv: query `a` has no field `type` to keep"),
            "{err}"
        );
        let err = run(args(dir, None, Some("test"), &[]))
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("pass --queries FILE"), "{err}");
        write(dir, "queries.tsv", "b\tother\n");
        let err = run(args(dir, Some("queries.tsv"), None, &[]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("out.jsonl: no judged query to write; 1 queries without judgments left out; the judgments of 1 queries not in the queries file ignored"), "{err}");
        assert!(!dir.join("out.jsonl").exists());
    }
}
