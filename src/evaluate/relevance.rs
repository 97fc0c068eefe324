//! Embedding-based `answer_relevance` of an evaluation: embeds the question and the answer of
//! every scored query with a non-empty answer (through the cache), then normalises the cosines
//! over those queries ([`crate::metrics::embedding_relevance`]). Queries missing from the run
//! keep their 0, empty answers their `empty_answer` outcome.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{JudgeUsage, Scored};
use crate::error::{Error, Result};
use crate::input::qrels::Qrels;
use crate::judge::cache::JudgeCache;
use crate::judge::embeddings::EmbeddingClient;
use crate::metrics::embedding_relevance::{self, EmbeddedQuery};

/// The vector as its JSON text reads back: the cache and `embeddings.jsonl` store `f32` as
/// text, so computing from the read-back value makes a fresh, a cached and a merged run agree.
fn canonical(vector: Vec<f32>) -> Vec<f32> {
    let text = serde_json::to_string(&vector).expect("finite floats serialise");
    serde_json::from_str(&text).expect("serialised floats read back")
}

/// The text of the query at `position`, which embedding-based relevance embeds.
pub(super) fn question(qrels: &Qrels, position: usize) -> Result<String> {
    let query = &qrels.queries()[position];
    query
        .text
        .clone()
        .filter(|q| !q.trim().is_empty())
        .ok_or_else(|| {
            Error::input(
                qrels.path(),
                format!(
                    "query `{}` has no text: embedding-based answer_relevance needs the question (native qrels `query`, or --queries)",
                    query.qid
                ),
            )
        })
}

/// The distinct texts of (question, answer) pairs, sorted: what is embedded.
pub(super) fn texts<'p>(pairs: impl Iterator<Item = (&'p str, &'p str)>) -> Vec<String> {
    pairs
        .flat_map(|(q, a)| [q, a])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Sets the value at `index` (answer_relevance) and the parts of every eligible query in
/// `slots` (qrels order); returns the embeddings by qid and the texts embedded / asked.
pub(super) fn apply(
    qrels: &Qrels,
    run_path: &Path,
    slots: &mut [Option<Scored>],
    index: usize,
    client: &EmbeddingClient,
    cache: Option<&JudgeCache>,
) -> Result<(Vec<EmbeddedQuery>, JudgeUsage)> {
    let mut pairs: Vec<(usize, String, String)> = Vec::new();
    for (position, slot) in slots.iter().enumerate() {
        let Some(scored) = slot else { continue };
        let Some(answer) = scored.answer.as_deref().filter(|a| !a.trim().is_empty()) else {
            continue;
        };
        pairs.push((position, question(qrels, position)?, answer.to_string()));
    }
    let texts = texts(pairs.iter().map(|(_, q, a)| (q.as_str(), a.as_str())));
    let (vectors, asked) = client.embed_cached(&texts, cache)?;
    let by_text: BTreeMap<&str, Vec<f32>> = texts
        .iter()
        .map(String::as_str)
        .zip(vectors.into_iter().map(canonical))
        .collect();
    let embedded: Vec<EmbeddedQuery> = pairs
        .iter()
        .map(|(position, question, answer)| EmbeddedQuery {
            qid: qrels.queries()[*position].qid.clone(),
            question: by_text[question.as_str()].clone(),
            answer: by_text[answer.as_str()].clone(),
        })
        .collect();
    let parts = embedding_relevance::normalise(&embedded)
        .map_err(|message| Error::input(run_path, message))?;
    for (position, _, _) in &pairs {
        let qid = &qrels.queries()[*position].qid;
        let scored = slots[*position]
            .as_mut()
            .expect("eligible queries are scored");
        let part = parts[qid];
        scored.values[index] = Some(part.score());
        scored.relevance = Some(part);
    }
    let mut embedded = embedded;
    embedded.sort_by(|a, b| a.qid.cmp(&b.qid));
    let usage = JudgeUsage {
        tasks: texts.len(),
        judged: asked,
    };
    Ok((embedded, usage))
}
