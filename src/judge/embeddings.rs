//! The embeddings client behind embedding-based `answer_relevance` (config `embeddings:`): any
//! OpenAI-compatible `/embeddings` endpoint.
//!
//! # Contract
//!
//! `POST {base_url}/embeddings` with `{"model":"<model>","input":["text", ...]}` (at most
//! [`BATCH`] texts a request) and `Authorization: Bearer <key>` when `api_key_env` is set; the
//! reply must hold `{"data":[{"index":0,"embedding":[0.1, ...]}, ...]}` with exactly one entry per
//! input (`index` is the input's position; other fields such as `object`, `model` and `usage` are
//! allowed, `usage.prompt_tokens` is summed). Every embedding of a reply must be non-empty and
//! finite as `f32`; a reply that is not so is retried, then an error naming the request. HTTP
//! retries, backoff and `Retry-After` are the `openai` judge's (`crate::http`).
//!
//! Embeddings are kept as `f32` and cached in the judge cache, one text a key: kind
//! `embeddings`, the model, the endpoint, [`EMBEDDINGS_VERSION`] and the text. A re-run with the
//! same texts makes no call.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::error::{Error, Result};
use crate::http::endpoint::HttpEndpoint;
use crate::http::{self, Failure, Request, RetryPolicy, UsageCounters};
use crate::judge::cache::{self, CacheKey, JudgeCache};
use crate::judge::cost::{CostHints, Planned, Requests, Tokens};

/// An OpenAI-compatible embeddings endpoint and how it is called, as configured and validated
/// ([`EmbeddingClient`] is its client).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingsSpec {
    /// Where and how `/embeddings` is called.
    pub endpoint: HttpEndpoint,
    /// Price and latency, for plans and budgets (not part of the endpoint's identity).
    pub cost: CostHints,
}

impl EmbeddingsSpec {
    /// `model` at `base_url` with the defaults: concurrency 4, timeout 60 s, 5 retries, no API
    /// key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        EmbeddingsSpec {
            endpoint: HttpEndpoint::new(base_url, model, 4),
            cost: CostHints::default(),
        }
    }
}

/// The version of the request and reply contract; part of the cache key.
pub const EMBEDDINGS_VERSION: &str = "embeddings-1";
/// Texts per request at most.
pub const BATCH: usize = 64;

/// Requests, retries and tokens an [`EmbeddingClient`] (and its clones) used in this run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct EmbeddingUsage {
    /// Successful requests.
    pub calls: u64,
    /// Requests retried (429, 5xx, timeouts).
    pub retries: u64,
    /// Prompt tokens the endpoint reported.
    pub prompt_tokens: u64,
}

/// A client of an OpenAI-compatible embeddings endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingClient {
    /// The validated settings: endpoint, model, key, limits.
    pub spec: EmbeddingsSpec,
    /// The first backoff; doubles with each retry.
    pub backoff_base: Duration,
    counters: Arc<UsageCounters>,
}

#[derive(Deserialize)]
struct Reply {
    data: Vec<Entry>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Entry {
    index: usize,
    embedding: Vec<f64>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
}

impl EmbeddingClient {
    /// A client with the config's defaults: concurrency 4, timeout 60 s, 5 retries, backoff
    /// from 500 ms.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self::from_spec(&EmbeddingsSpec::new(base_url, model))
    }

    /// The client of a validated spec, with fresh usage counters (shared by its clones).
    pub fn from_spec(spec: &EmbeddingsSpec) -> Self {
        EmbeddingClient {
            spec: spec.clone(),
            backoff_base: Duration::from_millis(500),
            counters: Arc::default(),
        }
    }

    /// What identifies the embeddings, for provenance.
    pub fn describe(&self) -> String {
        self.spec
            .endpoint
            .identity("embeddings", EMBEDDINGS_VERSION)
    }

    fn endpoint(&self) -> String {
        self.spec.endpoint.url("/embeddings")
    }

    /// The endpoint as messages name it (an API root from the environment is not printed).
    fn shown_endpoint(&self) -> String {
        self.spec.endpoint.shown_url("/embeddings")
    }

    /// [`Self::describe`] as messages print it (see [`Self::shown_endpoint`]).
    fn shown_describe(&self) -> String {
        self.spec
            .endpoint
            .shown_identity("embeddings", EMBEDDINGS_VERSION)
    }

    /// Requests and tokens used so far by this client and its clones.
    pub fn usage(&self) -> EmbeddingUsage {
        EmbeddingUsage {
            calls: self.counters.calls.load(Ordering::Relaxed),
            retries: self.counters.retries.load(Ordering::Relaxed),
            prompt_tokens: self.counters.prompt_tokens.load(Ordering::Relaxed),
        }
    }

    fn error(&self, message: String) -> Error {
        Error::judge(
            "embeddings",
            format!("{}: {message}", self.shown_describe()),
        )
    }

    /// The embedding of every text, in order, asking the endpoint in batches of [`BATCH`].
    pub fn embed_all(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let authorization = http::authorization(self.spec.endpoint.api_key_env.as_deref())
            .map_err(|m| self.error(m))?;
        let batches: Vec<&[String]> = texts.chunks(BATCH).collect();
        let requests: Vec<Request> = batches
            .iter()
            .map(|batch| Request {
                body: json!({"model": self.spec.endpoint.model, "input": batch}).to_string(),
                what: format!(
                    "{} texts from \"{}\"",
                    batch.len(),
                    batch[0].chars().take(40).collect::<String>()
                ),
            })
            .collect();
        let policy = RetryPolicy::of(&self.spec.endpoint, self.backoff_base);
        let before_attempt = |attempt: u32| -> std::result::Result<(), String> {
            self.counters.calls.fetch_add(1, Ordering::Relaxed);
            if attempt > 0 {
                self.counters.retries.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        };
        let parse = |index: usize,
                     text: &str,
                     _took: Duration|
         -> std::result::Result<Vec<Vec<f32>>, Failure> {
            let reply: Reply = serde_json::from_str(text).map_err(|e| {
                Failure::unparseable(format!(
                    "{e}: expected {{\"data\":[{{\"index\",\"embedding\"}}]}}"
                ))
            })?;
            if let Some(tokens) = reply.usage.and_then(|u| u.prompt_tokens) {
                UsageCounters::add_tokens(&self.counters.prompt_tokens, tokens);
            }
            parse_entries(reply.data, batches[index].len()).map_err(Failure::unparseable)
        };
        let replies = http::send_all(
            &policy,
            &self.endpoint(),
            &self.shown_endpoint(),
            authorization.as_deref(),
            &requests,
            before_attempt,
            parse,
        )
        .map_err(|error| self.error(error.to_string()).caused_by(error))?;
        Ok(replies.into_iter().flatten().collect())
    }

    /// The embedding of every text, in order, from `cache` where it can and storing new ones
    /// there; also how many texts went to the endpoint.
    pub fn embed_cached(
        &self,
        texts: &[String],
        cache: Option<&JudgeCache>,
    ) -> Result<(Vec<Vec<f32>>, usize)> {
        let keys = self.cache_keys(texts);
        let what = |i: usize| {
            let short: String = texts[i].chars().take(60).collect();
            format!("the embedding of \"{short}\" ({})", self.shown_describe())
        };
        cache::through(cache, &keys, what, |missing| {
            let asked: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            self.embed_all(&asked)
        })
    }
}

impl EmbeddingClient {
    /// The cache keys of the embeddings of `texts`.
    fn cache_keys(&self, texts: &[String]) -> Vec<CacheKey> {
        let endpoint = self.endpoint();
        texts
            .iter()
            .map(|text| {
                CacheKey::new(
                    "embeddings",
                    &self.spec.endpoint.model,
                    &endpoint,
                    EMBEDDINGS_VERSION,
                    &serde_json::Value::Null,
                    &json!({ "text": text }),
                )
            })
            .collect()
    }

    /// What [`Self::embed_cached`] would do with `texts`, asking nothing: the texts the cache
    /// holds (read-only, by the same keys) and the requests, of [`BATCH`] texts, for the
    /// others (input tokens estimated from their length; an embedding has no output tokens).
    pub fn plan_cached(&self, texts: &[String], cache: Option<&JudgeCache>) -> Result<Planned> {
        let mut missing_chars = 0u64;
        let mut missing = 0usize;
        for (text, key) in texts.iter().zip(self.cache_keys(texts)) {
            let cached = match cache {
                Some(cache) => cache.peek::<Vec<f32>>(&key)?.is_some(),
                None => false,
            };
            if !cached {
                missing += 1;
                missing_chars += text.len() as u64;
            }
        }
        Ok(Planned {
            tasks: texts.len(),
            cached: texts.len() - missing,
            requests: Some(Requests {
                calls: missing.div_ceil(BATCH) as u64,
                tokens: Some(Tokens::of_chars(missing_chars, 0)),
            }),
        })
    }
}

impl cache::Cached for Vec<f32> {
    /// Non-empty and finite, as `parse_entries` accepts a reply (JSON numbers beyond `f32`
    /// read as infinite).
    fn check(&self) -> std::result::Result<(), String> {
        if self.is_empty() {
            return Err("the embedding is empty".to_string());
        }
        match self.iter().position(|x| !x.is_finite()) {
            Some(i) => Err(format!("value {i} of the embedding is not a finite f32")),
            None => Ok(()),
        }
    }
}

/// The embeddings of one reply in input order: one finite, non-empty vector per input.
fn parse_entries(entries: Vec<Entry>, inputs: usize) -> std::result::Result<Vec<Vec<f32>>, String> {
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; inputs];
    for entry in entries {
        let slot = slots.get_mut(entry.index).ok_or_else(|| {
            format!(
                "embedding index {} is out of range for {inputs} inputs",
                entry.index
            )
        })?;
        if entry.embedding.is_empty() {
            return Err(format!("embedding {} is empty", entry.index));
        }
        let vector: Vec<f32> = entry.embedding.iter().map(|&x| x as f32).collect();
        if vector.iter().any(|x| !x.is_finite()) {
            return Err(format!(
                "embedding {} has a value that is not a finite f32",
                entry.index
            ));
        }
        if slot.replace(vector).is_some() {
            return Err(format!("embedding index {} appears twice", entry.index));
        }
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, slot)| slot.ok_or_else(|| format!("no embedding for input {i}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(index: usize, embedding: &[f64]) -> Entry {
        Entry {
            index,
            embedding: embedding.to_vec(),
        }
    }

    #[test]
    fn a_plan_embeds_what_the_cache_lacks_in_batches() {
        let client = EmbeddingClient::new("http://127.0.0.1:1/v1", "e5");
        let texts: Vec<String> = (0..130).map(|i| format!("text {i:03}")).collect();
        let planned = client.plan_cached(&texts, None).unwrap();
        assert_eq!((planned.tasks, planned.cached), (130, 0));
        let requests = planned.requests.unwrap();
        assert_eq!(requests.calls, 3, "64 texts a request");
        assert_eq!(requests.tokens, Some(Tokens::of_chars(130 * 8, 0)));
        let none = client.plan_cached(&[], None).unwrap();
        assert_eq!(none.requests.map(|r| r.calls), Some(0));
    }

    #[test]
    fn replies_map_by_index_and_are_checked() {
        let parsed = parse_entries(vec![entry(1, &[0.5, 1.0]), entry(0, &[1.0, 0.0])], 2);
        assert_eq!(parsed, Ok(vec![vec![1.0, 0.0], vec![0.5, 1.0]]));
        for (bad, expected) in [
            (vec![entry(0, &[1.0])], "no embedding for input 1"),
            (
                vec![entry(0, &[1.0]), entry(0, &[1.0]), entry(1, &[1.0])],
                "appears twice",
            ),
            (vec![entry(0, &[1.0]), entry(2, &[1.0])], "out of range"),
            (vec![entry(0, &[]), entry(1, &[1.0])], "is empty"),
            (vec![entry(0, &[1e300]), entry(1, &[1.0])], "finite"),
        ] {
            let error = parse_entries(bad, 2).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn describe_names_model_endpoint_and_version() {
        let client = EmbeddingClient::new("http://127.0.0.1:1/v1/", "e5");
        assert_eq!(
            client.describe(),
            "embeddings e5 @ http://127.0.0.1:1/v1 embeddings-1"
        );
        assert_eq!(client.endpoint(), "http://127.0.0.1:1/v1/embeddings");
    }
}
