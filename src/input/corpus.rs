//! Reader of a document corpus (JSONL `{doc_id|_id, title?, text}`), used to turn ids into text.

use rustc_hash::FxHashMap;
use serde::Deserialize;

use crate::error::Result;
use crate::input::native_qrels::parse_json_line;
use crate::input::text_file::{FirstLines, TextFile};

/// One document of a corpus.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Document {
    /// The document's id (BEIR's `_id` is accepted).
    #[serde(alias = "_id")]
    pub doc_id: String,
    /// Its title (empty when absent).
    #[serde(default)]
    pub title: String,
    /// Its text.
    pub text: String,
}

/// Documents in file order, indexed by id.
#[derive(Debug, Default)]
pub struct Corpus {
    /// The documents in file order.
    pub documents: Vec<Document>,
    index: FxHashMap<String, usize>,
}

impl Corpus {
    /// The document with id `doc_id`, if any.
    pub fn get(&self, doc_id: &str) -> Option<&Document> {
        self.index.get(doc_id).map(|&i| &self.documents[i])
    }
}

const EXPECTED: &str = "a JSON object {\"doc_id\" (or BEIR \"_id\"), \"title\", \"text\"}";

/// The corpus at `path`, when one is configured.
pub fn read_optional(path: Option<&std::path::Path>) -> Result<Option<Corpus>> {
    path.map(|path| read(&TextFile::read(path)?)).transpose()
}

/// Reads a corpus JSONL file: one `{doc_id, title, text}` object a line, ids unique.
pub fn read(file: &TextFile) -> Result<Corpus> {
    file.require_data("corpus JSONL (one document object a line)")?;
    let mut corpus = Corpus::default();
    let mut lines = FirstLines::default();
    for line in file.lines() {
        let doc: Document = parse_json_line(file, line.number, line.text, EXPECTED)?;
        lines.record(
            file,
            "doc_id",
            &doc.doc_id,
            line.number,
            "each document once",
        )?;
        corpus
            .index
            .insert(doc.doc_id.clone(), corpus.documents.len());
        corpus.documents.push(doc);
    }
    Ok(corpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_native_and_beir_ids() {
        let file = TextFile::from_bytes("corpus.jsonl", b"{\"doc_id\":\"d1\",\"title\":\"T\",\"text\":\"x\"}\n{\"_id\":\"d2\",\"text\":\"y\"}\n".to_vec()).unwrap();
        let corpus = read(&file).unwrap();
        assert_eq!(corpus.get("d2").unwrap().text, "y");
        assert_eq!(corpus.get("d1").unwrap().title, "T");
    }

    #[test]
    fn duplicate_ids_name_both_lines() {
        let file = TextFile::from_bytes(
            "corpus.jsonl",
            b"{\"doc_id\":\"d1\",\"text\":\"x\"}\n{\"doc_id\":\"d1\",\"text\":\"y\"}\n".to_vec(),
        )
        .unwrap();
        assert_eq!(
            read(&file).unwrap_err().to_string(),
            "corpus.jsonl:2: doc_id `d1` appears twice (lines 1 and 2): expected each document once"
        );
    }
}
