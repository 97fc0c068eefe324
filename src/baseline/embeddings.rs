//! `embeddings.jsonl`, written beside `results.json` when answer_relevance is embedding-based:
//! one line per query with a non-empty answer, in qid order,
//! `{"qid":"...","question":[f32, ...],"answer":[f32, ...]}`.
//!
//! The normalisation of embedding relevance depends on every answer of the tier, so the
//! per-query parts stored in results cannot be combined across shards on their own. A merge
//! reads the shards' `embeddings.jsonl`, and [`renormalise`] over the union recomputes every
//! query's parts, its `answer_relevance` and the summaries: the same function over the same
//! vectors as an unsharded run, hence the same bytes.

use std::path::Path;

use crate::baseline::collect::summarise;
use crate::baseline::results::Results;
use crate::error::{Error, Result};
use crate::input::text_file::TextFile;
use crate::metrics::embedding_relevance::{self, EmbeddedQuery};

/// The file's text: one line per query, in the given (qid) order.
pub fn to_jsonl(embedded: &[EmbeddedQuery]) -> String {
    let mut text = String::new();
    for query in embedded {
        text.push_str(&crate::json_text::compact(query));
        text.push('\n');
    }
    text
}

/// Reads an `embeddings.jsonl`.
pub fn read(path: &Path) -> Result<Vec<EmbeddedQuery>> {
    let file = TextFile::read(path)?;
    let mut queries = Vec::new();
    for line in file.lines() {
        let query: EmbeddedQuery = serde_json::from_str(line.text).map_err(|e| {
            Error::parse(
                path,
                line.number,
                format!(
                    "{e}: expected {{\"qid\", \"question\": [numbers], \"answer\": [numbers]}}"
                ),
            )
        })?;
        queries.push(query);
    }
    Ok(queries)
}

/// Recomputes the embedding relevance of `results` from `embedded` (every query of the tier
/// with an answer, e.g. the union of the shards' files): each listed query's
/// `answer_relevance_embedding` and `answer_relevance`, then the summaries. A listed query that
/// is not in the results is an error.
pub fn renormalise(results: &mut Results, embedded: &[EmbeddedQuery]) -> Result<()> {
    let parts = embedding_relevance::normalise(embedded).map_err(Error::Usage)?;
    for (qid, part) in parts {
        let record = results.queries.get_mut(&qid).ok_or_else(|| {
            Error::Usage(format!(
                "embeddings of query `{qid}`, which the results of tier `{}` do not have",
                results.tier
            ))
        })?;
        record
            .metrics
            .insert("answer_relevance".to_string(), part.score());
        record.answer_relevance_embedding = Some(part);
    }
    results.summary = summarise(&results.metrics, &results.queries);
    Ok(())
}
