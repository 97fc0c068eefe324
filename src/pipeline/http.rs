//! The `http` pipeline adapter: one `POST {"qid","query"}` per query to `url`, a native run
//! object back, `concurrency` requests in flight. 5xx replies, 429, timeouts and connection
//! errors are retried up to `max_retries` times with exponential backoff (250 ms doubling, capped
//! at 10 s); any other non-2xx reply is an error. A query's `latency_ms` is the duration of its
//! successful request, unless the endpoint reports its own.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::pipeline::{Collector, ProducedRun, Request, bare_message};
use crate::progress::Progress;

const BACKOFF_BASE: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq)]
pub struct HttpPipeline {
    pub url: String,
    pub concurrency: usize,
    /// Per request.
    pub timeout: Duration,
    pub max_retries: u32,
}

/// Why one attempt failed.
enum Attempt {
    Retry(String),
    Fail(String),
}

impl HttpPipeline {
    fn error(&self, message: String) -> Error {
        Error::Pipeline {
            adapter: "http".to_string(),
            message: format!("{}: {message}", self.url),
        }
    }

    pub fn produce(&self, requests: &[Request], progress: &Progress) -> Result<ProducedRun> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            .max_idle_connections_per_host(self.concurrency.max(1))
            .build()
            .into();
        let collector = Mutex::new(Collector::new("http", requests));
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let failures: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..self.concurrency.clamp(1, requests.len().max(1)) {
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(request) = requests.get(index) else {
                            break;
                        };
                        let outcome = self.query(&agent, request).and_then(|(body, latency)| {
                            let mut collector = collector.lock().expect("no worker panics");
                            let whence = format!("reply to qid `{}`", request.qid);
                            let answered = collector
                                .accept(&whence, &body)
                                .map_err(|e| bare_message(&e))?;
                            if requests[answered].qid != request.qid {
                                return Err(format!(
                                    "{whence}: carries qid `{}`",
                                    requests[answered].qid
                                ));
                            }
                            collector.set_latency(&request.qid, latency);
                            Ok(())
                        });
                        match outcome {
                            Ok(()) => progress.inc(),
                            Err(message) => {
                                stop.store(true, Ordering::Relaxed);
                                failures
                                    .lock()
                                    .expect("no worker panics")
                                    .push((index, message));
                            }
                        }
                    }
                });
            }
        });
        // Report the failure of the first query in tier order, for a deterministic message.
        let mut failures = failures.into_inner().expect("no worker panics");
        failures.sort();
        if let Some((_, message)) = failures.into_iter().next() {
            return Err(self.error(message));
        }
        collector
            .into_inner()
            .expect("no worker panics")
            .finish(requests)
            .map_err(|e| self.error(bare_message(&e)))
    }

    /// The reply body for one query and how long the successful request took, after retries.
    fn query(
        &self,
        agent: &ureq::Agent,
        request: &Request,
    ) -> std::result::Result<(String, Duration), String> {
        let body = request.to_json();
        let mut attempt = 0u32;
        loop {
            let started = Instant::now();
            let reason = match self.attempt(agent, &body) {
                Ok(reply) => return Ok((reply, started.elapsed())),
                Err(Attempt::Fail(reason)) => {
                    return Err(format!("qid `{}`: {reason}", request.qid));
                }
                Err(Attempt::Retry(reason)) => reason,
            };
            if attempt >= self.max_retries {
                return Err(format!(
                    "qid `{}`: failed after {} attempts (max_retries {}): {reason}",
                    request.qid,
                    attempt + 1,
                    self.max_retries
                ));
            }
            std::thread::sleep(
                BACKOFF_BASE
                    .saturating_mul(1 << attempt.min(10))
                    .min(BACKOFF_MAX),
            );
            attempt += 1;
        }
    }

    fn attempt(&self, agent: &ureq::Agent, body: &str) -> std::result::Result<String, Attempt> {
        let transport = |e: ureq::Error| match e {
            ureq::Error::Timeout(_)
            | ureq::Error::Io(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::Protocol(_)
            | ureq::Error::BodyStalled => Attempt::Retry(e.to_string()),
            other => Attempt::Fail(other.to_string()),
        };
        let mut response = agent
            .post(&self.url)
            .content_type("application/json")
            .send(body)
            .map_err(transport)?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().map_err(transport)?;
        let excerpt: String = text.chars().take(200).collect();
        match status {
            200..=299 => Ok(text),
            429 | 500..=599 => Err(Attempt::Retry(format!("HTTP {status}: {excerpt}"))),
            _ => Err(Attempt::Fail(format!("HTTP {status}: {excerpt}"))),
        }
    }
}
