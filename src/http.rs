//! HTTP plumbing shared by ragate's HTTP clients (the `openai` judge's `/chat/completions`, the
//! `/embeddings` client, the `http` pipeline adapter): bounded concurrency, per-request timeouts,
//! retries with exponential backoff and a deterministic jitter, and `Retry-After`.
//!
//! [`send_all`] sends a list of JSON requests with `concurrency` worker threads pulling from a
//! shared queue. 429, 5xx, timeouts, connection errors and replies the caller's parser rejects
//! as [`Failure::Transient`] are retried up to `max_retries` times, after the `Retry-After` the
//! server asks for (delay-seconds or an HTTP date, RFC 7231 section 7.1.3; capped at
//! [`MAX_RETRY_AFTER`]) or else after `backoff_base` × 2^attempt (capped at [`MAX_BACKOFF`])
//! scaled by a jitter in [50%, 100%] hashed from the request index and attempt. Other HTTP
//! statuses fail at once. Once a request has failed, the others stop retrying; the error
//! reported is the first failed request in request order, so messages are deterministic, and a
//! failed batch never returns partial replies. A request abandoned because another one failed is
//! never the error reported: the message names the root cause (`HTTP 500` after `max_retries`).

// Without the `llm` feature nothing is ever sent, so the helpers of replies go unused.
#![cfg_attr(not(feature = "llm"), allow(dead_code))]

pub(crate) mod endpoint;
pub(crate) mod probe;

#[cfg(not(feature = "llm"))]
#[path = "http/no_transport.rs"]
mod transport;
#[cfg(feature = "llm")]
mod transport;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// The longest wait a `Retry-After` header can ask for.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// The longest exponential backoff.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Calls, retries and tokens a client has used in this run, shared by the client's clones. Not
/// part of a client's identity: clients with the same settings are equal whatever they used.
#[derive(Debug, Default)]
pub(crate) struct UsageCounters {
    pub calls: AtomicU64,
    pub retries: AtomicU64,
    pub prompt_tokens: AtomicU64,
    pub completion_tokens: AtomicU64,
}

impl UsageCounters {
    /// Adds `tokens` (as an endpoint's `usage` reported them) to `counter`, saturating at
    /// `u64::MAX`: a hostile or broken endpoint's counts are only reported, never wrap around.
    pub(crate) fn add_tokens(counter: &AtomicU64, tokens: u64) {
        let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |sum| {
            Some(sum.saturating_add(tokens))
        });
    }
}

impl PartialEq for UsageCounters {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// Why an attempt failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// Worth another attempt, after `retry_after` if the server said so.
    Transient {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// Final.
    Fatal(String),
}

impl Failure {
    /// A reply that does not follow the contract: retried, as a model may answer better next time.
    pub(crate) fn unparseable(reason: impl std::fmt::Display) -> Failure {
        Failure::Transient {
            reason: format!("unparseable reply: {reason}"),
            retry_after: None,
        }
    }
}

/// Why a batch of requests failed; what it says names the endpoint as shown and no secret.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum SendError {
    /// Nothing could be sent: this build has no HTTP client (or it could not be made).
    #[error("{0}")]
    NoClient(String),
    /// Request `index` (which asked `what`) failed.
    #[error("request {index} ({what}): {failure}")]
    Request {
        /// The request's position in the batch.
        index: usize,
        /// What it asked, for messages.
        what: String,
        /// How it failed.
        #[source]
        failure: RequestFailure,
    },
}

/// How one request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum RequestFailure {
    /// An attempt was refused before it was sent (the call budget).
    #[error("{0}")]
    Refused(String),
    /// A failure that another attempt would not mend (HTTP 4xx, say).
    #[error("{0}")]
    Fatal(#[source] AttemptFailure),
    /// Every attempt failed, the last as `last`.
    #[error("failed after {attempts} attempts (max_retries {max_retries}): {last}")]
    RetriesUsedUp {
        /// Attempts made.
        attempts: u32,
        /// Retries allowed.
        max_retries: u32,
        /// What the last attempt met.
        #[source]
        last: AttemptFailure,
    },
    /// It stopped retrying because another request had failed: not a cause of its own.
    #[error("abandoned after another request failed: {last}")]
    Abandoned {
        /// What its last attempt met.
        #[source]
        last: AttemptFailure,
    },
}

/// What one attempt met (`HTTP 500: ...`, a connection error, an unparseable reply), as told:
/// the endpoint as shown, secrets redacted. The transport's own error is not kept, as its text
/// would print the endpoint that messages hide.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct AttemptFailure(pub String);

impl SendError {
    /// Whether the request was only abandoned for another one's failure.
    fn is_abandoned(&self) -> bool {
        matches!(
            self,
            SendError::Request {
                failure: RequestFailure::Abandoned { .. },
                ..
            }
        )
    }

    /// The error with every secret ragate knows of redacted from what it says (an endpoint's
    /// reply may echo a key).
    fn redacted(self) -> Self {
        let redact = |text: String| crate::secrets::redact(&text).into_owned();
        let attempt = |AttemptFailure(text)| AttemptFailure(redact(text));
        match self {
            SendError::NoClient(message) => SendError::NoClient(redact(message)),
            SendError::Request {
                index,
                what,
                failure,
            } => SendError::Request {
                index,
                what: redact(what),
                failure: match failure {
                    RequestFailure::Refused(message) => RequestFailure::Refused(redact(message)),
                    RequestFailure::Fatal(last) => RequestFailure::Fatal(attempt(last)),
                    RequestFailure::RetriesUsedUp {
                        attempts,
                        max_retries,
                        last,
                    } => RequestFailure::RetriesUsedUp {
                        attempts,
                        max_retries,
                        last: attempt(last),
                    },
                    RequestFailure::Abandoned { last } => RequestFailure::Abandoned {
                        last: attempt(last),
                    },
                },
            },
        }
    }
}

/// How requests are sent and retried.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RetryPolicy {
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Per HTTP request.
    pub timeout: Duration,
    /// Retries after the first attempt of a request.
    pub max_retries: u32,
    /// The first backoff; doubles with each retry.
    pub backoff_base: Duration,
}

impl RetryPolicy {
    /// How `endpoint` is called, with `backoff_base` as the first backoff.
    pub(crate) fn of(
        endpoint: &crate::http::endpoint::HttpEndpoint,
        backoff_base: Duration,
    ) -> Self {
        RetryPolicy {
            concurrency: endpoint.concurrency,
            timeout: endpoint.timeout,
            max_retries: endpoint.max_retries,
            backoff_base,
        }
    }

    /// Exponential backoff with a deterministic jitter in [50%, 100%] of the step.
    pub(crate) fn backoff(&self, index: usize, attempt: u32) -> Duration {
        let step = self
            .backoff_base
            .saturating_mul(1u32 << attempt.min(16))
            .min(MAX_BACKOFF);
        let hash = splitmix64(((index as u64) << 20) ^ u64::from(attempt) ^ 0x5eed);
        let fraction = 0.5 + 0.5 * (hash >> 11) as f64 / (1u64 << 53) as f64;
        step.mul_f64(fraction)
    }
}

/// Why a probe's GET ([`probe`]) got no reply.
#[derive(Debug)]
pub(crate) enum NoReply {
    /// This build has no HTTP client (never made with the `llm` feature).
    #[cfg_attr(feature = "llm", allow(dead_code))]
    NoClient(String),
    /// Refused, reset, DNS, TLS or a timeout: the transport's error.
    Failed(String),
}

/// One request: its JSON body and what it asks, for error messages.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub body: String,
    pub what: String,
}

/// The `Authorization` header value when `api_key_env` names a variable; an error naming the
/// variable when it is unset or empty. The key itself is never part of a message.
pub(crate) fn authorization(api_key_env: Option<&str>) -> Result<Option<String>, String> {
    let Some(var) = api_key_env else {
        return Ok(None);
    };
    match std::env::var(var) {
        Ok(key) if !key.is_empty() => {
            crate::secrets::register(&key);
            Ok(Some(format!("Bearer {key}")))
        }
        _ => Err(format!(
            "api_key_env names `{var}`, which is not set (or empty, or not UTF-8)"
        )),
    }
}

/// How long a `Retry-After` header value asks to wait at `now`: delay-seconds, or an HTTP date
/// (IMF-fixdate, and the obsolete RFC 850 and asctime forms; a date in the past means at once),
/// capped at [`MAX_RETRY_AFTER`]. None when the value is neither.
pub(crate) fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => {
            let at = httpdate::parse_http_date(value).ok()?;
            at.duration_since(now).unwrap_or(Duration::ZERO)
        }
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// Sends every request to `endpoint` and parses each 2xx body with `parse(index, body, took)`
/// (`took`: how long that successful attempt took); messages name the endpoint as `shown` (the
/// URL may come from the environment: a secret or an internal host, never printed);
/// replies come back in request order. `before_attempt(attempt)` runs before every attempt
/// (0 for the first) and may refuse it (a call budget). The error names the request:
/// `request {index} ({what}): ...`.
pub(crate) fn send_all<T, B, P>(
    policy: &RetryPolicy,
    endpoint: &str,
    shown: &str,
    authorization: Option<&str>,
    requests: &[Request],
    before_attempt: B,
    parse: P,
) -> Result<Vec<T>, SendError>
where
    T: Send,
    B: Fn(u32) -> Result<(), String> + Sync,
    P: Fn(usize, &str, Duration) -> Result<T, Failure> + Sync,
{
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let agent = transport::Agent::new(policy).map_err(SendError::NoClient)?;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<T, SendError>>>> =
        Mutex::new((0..requests.len()).map(|_| None).collect());
    let workers = policy.concurrency.clamp(1, requests.len());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(request) = requests.get(index) else {
                        break;
                    };
                    let attempt = || {
                        let started = Instant::now();
                        agent
                            .send_once(endpoint, shown, authorization, &request.body)
                            .and_then(|body| parse(index, &body, started.elapsed()))
                    };
                    let outcome = with_retries(policy, index, &stop, &before_attempt, attempt)
                        .map_err(|failure| SendError::Request {
                            index,
                            what: request.what.clone(),
                            failure,
                        });
                    if outcome.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    results.lock().expect("no worker panics")[index] = Some(outcome);
                }
            });
        }
    });
    let results = results.into_inner().expect("no worker panics");
    let replies = collect(results)?;
    assert_eq!(replies.len(), requests.len(), "every request ran");
    Ok(replies)
}

/// The replies in request order, or the error of the first request that failed (in request
/// order), never one that was abandoned because another failed, with every secret redacted.
fn collect<T>(results: Vec<Option<Result<T, SendError>>>) -> Result<Vec<T>, SendError> {
    let mut replies = Vec::with_capacity(results.len());
    let (mut first_failure, mut first_abandoned) = (None, None);
    for result in results.into_iter().flatten() {
        match result {
            Ok(reply) => replies.push(reply),
            Err(error) if error.is_abandoned() => {
                first_abandoned.get_or_insert(error);
            }
            Err(error) => {
                first_failure.get_or_insert(error);
            }
        }
    }
    // A request is abandoned only after another one failed (and that failure is stored), so the
    // root cause is always there; the abandoned error is a fallback that cannot be reached.
    match first_failure.or(first_abandoned) {
        // Whatever an endpoint's reply put in the message, no key it echoed goes further.
        Some(error) => Err(error.redacted()),
        None => Ok(replies),
    }
}

/// One request with its retries.
fn with_retries<T>(
    policy: &RetryPolicy,
    index: usize,
    stop: &AtomicBool,
    before_attempt: &(impl Fn(u32) -> Result<(), String> + Sync),
    attempt_once: impl Fn() -> Result<T, Failure>,
) -> Result<T, RequestFailure> {
    let mut attempt = 0u32;
    loop {
        before_attempt(attempt).map_err(RequestFailure::Refused)?;
        let (reason, retry_after) = match attempt_once() {
            Ok(reply) => return Ok(reply),
            Err(Failure::Fatal(message)) => {
                return Err(RequestFailure::Fatal(AttemptFailure(message)));
            }
            Err(Failure::Transient {
                reason,
                retry_after,
            }) => (reason, retry_after),
        };
        if attempt >= policy.max_retries {
            return Err(RequestFailure::RetriesUsedUp {
                attempts: attempt + 1,
                max_retries: policy.max_retries,
                last: AttemptFailure(reason),
            });
        }
        if stop.load(Ordering::Relaxed) {
            return Err(RequestFailure::Abandoned {
                last: AttemptFailure(reason),
            });
        }
        let wait = retry_after.unwrap_or_else(|| policy.backoff(index, attempt));
        std::thread::sleep(wait);
        attempt += 1;
    }
}

/// `text` with the endpoint, and its host, written as `shown` (when they differ).
fn hide_endpoint(text: &str, endpoint: &str, shown: &str) -> String {
    if endpoint == shown {
        return text.to_string();
    }
    let host = endpoint
        .split_once("://")
        .map_or(endpoint, |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let text = text.replace(endpoint, shown);
    if host.is_empty() {
        text
    } else {
        text.replace(host, shown)
    }
}

/// The first 200 characters of a body, for messages, with every secret ragate knows of redacted
/// first (an error body may echo the `Authorization` header; a cut must not leave half a key).
pub(crate) fn snippet(text: &str) -> String {
    let text = crate::secrets::redact(text);
    let short: String = text.chars().take(200).collect();
    if short.len() < text.len() {
        format!("{short}...")
    } else {
        short
    }
}

/// The content without a surrounding Markdown code fence (```json ... ``` or ``` ... ```).
pub(crate) fn unfence(content: &str) -> &str {
    let text = content.trim();
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(inner) = rest.strip_suffix("```") else {
        return text;
    };
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    inner.trim()
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Whether a retry of the same run may succeed: the error is a judge's or the pipeline's
/// request that failed with every retry used up on failures that pass (an endpoint that did
/// not answer, timed out or answered 429 or 5xx), or a probe before the run that got no reply. Configuration and input errors, and an
/// endpoint that refused the request (4xx), are not.
pub(crate) fn retryable(error: &crate::error::Error) -> bool {
    if let crate::error::Error::Child { error, .. } = error {
        return retryable(error);
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if let Some(failure) = error.downcast_ref::<RequestFailure>() {
            return matches!(
                failure,
                RequestFailure::RetriesUsedUp { .. } | RequestFailure::Abandoned { .. }
            );
        }
        if let Some(failure) = error.downcast_ref::<probe::ProbeFailure>() {
            return failure.may_pass_later();
        }
        cause = error.source();
    }
    false
}

#[cfg(test)]
mod tests;
