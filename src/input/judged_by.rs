//! Provenance of model judgments: which judge proposed a judgment that `ragate qrels apply` wrote
//! into the qrels, and when. A judgment without provenance is a human one. Drafted queries
//! (`ragate synth`) carry theirs as [`DraftedBy`].
//!
//! - Native qrels JSONL carry it on the query's line:
//!   `"judged_by": {"d7": {"judge": "<judge identity>", "at": "2026-12-03T10:00:00Z"}}`, one
//!   entry per model-judged document (a document the line judges; `at` optional).
//! - TREC and TSV qrels have no room for it: it goes to the sidecar `<qrels>.judged_by.jsonl`
//!   beside the qrels file, one `{"qid", "doc_id", "judge", "at"}` object a line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::input::text_file::TextFile;

/// Who proposed a model judgment, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelJudgment {
    /// The judge's identity (model, endpoint as written, prompt versions).
    pub judge: String,
    /// When the judgment was applied, UTC RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// Provenance of a drafted query (`ragate synth`): the generator that wrote it and, once a
/// person accepted it into a tier (`ragate qrels accept`), when. A drafted query nobody accepted
/// is refused wherever a tier is evaluated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DraftedBy {
    /// The generator's identity (kind, model or command, drafting prompt version).
    pub generator: String,
    /// The seed of the sample the query was drafted from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The share of the question's content words found in its gold document(s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical_overlap: Option<f64>,
    /// When a person accepted the draft into a tier, UTC RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_at: Option<String>,
}

/// One line of a sidecar file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SidecarLine {
    /// The query.
    pub qid: String,
    /// The model-judged document.
    pub doc_id: String,
    /// Who proposed it.
    pub judge: String,
    /// When it was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// The sidecar of TREC or TSV qrels at `qrels`: `<qrels>.judged_by.jsonl`.
pub fn sidecar_path(qrels: &Path) -> PathBuf {
    let mut name = qrels.file_name().unwrap_or_default().to_os_string();
    name.push(".judged_by.jsonl");
    qrels.with_file_name(name)
}

const EXPECTED: &str = "a JSON object {\"qid\", \"doc_id\", \"judge\", \"at\"?}";

/// The model judgments a sidecar file records, by (qid, doc_id); an absent file records none.
pub fn read_sidecar(path: &Path) -> Result<BTreeMap<(String, String), ModelJudgment>> {
    let mut judged = BTreeMap::new();
    if !path.exists() {
        return Ok(judged);
    }
    let file = TextFile::read(path)?;
    for line in file.lines() {
        if line.text.trim().is_empty() {
            continue;
        }
        let entry: SidecarLine = serde_json::from_str(line.text)
            .map_err(|e| Error::parse(path, line.number, format!("{e}: expected {EXPECTED}")))?;
        let key = (entry.qid, entry.doc_id);
        if judged.contains_key(&key) {
            return Err(Error::parse(
                path,
                line.number,
                format!(
                    "`{}` of query `{}` appears twice: expected each judgment once",
                    crate::error::shorten(&key.1),
                    crate::error::shorten(&key.0)
                ),
            ));
        }
        let judgment = ModelJudgment {
            judge: entry.judge,
            at: entry.at,
        };
        judged.insert(key, judgment);
    }
    Ok(judged)
}

/// The sidecar text of `judged`: one line each, in (qid, doc_id) order.
pub fn sidecar_text(judged: &BTreeMap<(String, String), ModelJudgment>) -> String {
    let mut text = String::new();
    for ((qid, doc_id), judgment) in judged {
        let line = SidecarLine {
            qid: qid.clone(),
            doc_id: doc_id.clone(),
            judge: judgment.judge.clone(),
            at: judgment.at.clone(),
        };
        text.push_str(&crate::json_text::compact(&line));
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sidecar_sits_beside_the_qrels_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let qrels = dir.path().join("qrels.txt");
        let path = sidecar_path(&qrels);
        assert_eq!(path, dir.path().join("qrels.txt.judged_by.jsonl"));
        assert!(read_sidecar(&path).unwrap().is_empty(), "absent: none");
        let mut judged = BTreeMap::new();
        judged.insert(
            ("q1".to_string(), "d2".to_string()),
            ModelJudgment {
                judge: "command `j`".into(),
                at: Some("2026-12-03T00:00:00Z".into()),
            },
        );
        let text = sidecar_text(&judged);
        assert_eq!(
            text,
            "{\"qid\":\"q1\",\"doc_id\":\"d2\",\"judge\":\"command `j`\",\"at\":\"2026-12-03T00:00:00Z\"}\n"
        );
        std::fs::write(&path, format!("{text}{text}")).unwrap();
        let err = read_sidecar(&path).unwrap_err().to_string();
        assert!(
            err.ends_with(":2: `d2` of query `q1` appears twice: expected each judgment once"),
            "{err}"
        );
        std::fs::write(&path, &text).unwrap();
        assert_eq!(read_sidecar(&path).unwrap(), judged);
    }
}
