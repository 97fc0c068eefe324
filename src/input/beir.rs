//! Reader of a BEIR folder: `queries.jsonl`, `qrels/<split>.tsv` (and `corpus.jsonl` on demand).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::input::corpus::{self, Corpus};
use crate::input::qrels::Qrels;
use crate::input::queries;
use crate::input::text_file::TextFile;
use crate::input::trec_qrels::{self, Layout};

fn required_file(folder: &Path, relative: &str) -> Result<PathBuf> {
    let path = folder.join(relative);
    if path.is_file() {
        Ok(path)
    } else {
        Err(Error::input(
            folder,
            format!("not a BEIR folder: expected a file `{relative}` in it"),
        ))
    }
}

/// The judged queries of one split, with their texts.
pub fn read_qrels(folder: &Path, split: &str) -> Result<Qrels> {
    let qrels_path = required_file(folder, &format!("qrels/{split}.tsv"))?;
    let queries_path = required_file(folder, "queries.jsonl")?;
    let mut qrels = trec_qrels::read(&TextFile::read(&qrels_path)?, Layout::Tsv)?;
    let texts = queries::read(&TextFile::read(&queries_path)?)?;
    queries::attach(&mut qrels, texts);
    Ok(qrels)
}

/// The `corpus.jsonl` of a BEIR folder.
pub fn read_corpus(folder: &Path) -> Result<Corpus> {
    corpus::read(&TextFile::read(&required_file(folder, "corpus.jsonl")?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_beir_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("qrels")).unwrap();
        std::fs::write(
            dir.path().join("qrels/test.tsv"),
            "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("queries.jsonl"),
            "{\"_id\":\"q1\",\"text\":\"hello\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("corpus.jsonl"),
            "{\"_id\":\"d1\",\"title\":\"\",\"text\":\"x\"}\n",
        )
        .unwrap();
        let qrels = read_qrels(dir.path(), "test").unwrap();
        assert_eq!(qrels.queries()[0].text.as_deref(), Some("hello"));
        assert_eq!(read_corpus(dir.path()).unwrap().documents.len(), 1);
        let err = read_qrels(dir.path(), "dev").unwrap_err().to_string();
        assert!(
            err.ends_with("not a BEIR folder: expected a file `qrels/dev.tsv` in it"),
            "{err}"
        );
    }
}
