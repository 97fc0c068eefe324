//! The `http` pipeline adapter: one `POST {"qid","query"}` per query to `url`, a native run
//! object back, `concurrency` requests in flight, through [`crate::http::send_all`]: 5xx, 429,
//! timeouts and connection errors are retried up to `max_retries` times (after `Retry-After`, or
//! 250 ms doubling with jitter); any other non-2xx reply, or a reply that is not a native run
//! object for the query asked, is an error naming the qid. A query's `latency_ms` is the duration
//! of its successful request, unless the endpoint reports its own.

use std::sync::Mutex;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::http::{self, Failure, RetryPolicy};
use crate::pipeline::{Collector, ProducedRun, Request, bare_message};
use crate::progress::Progress;

const BACKOFF_BASE: Duration = Duration::from_millis(250);

#[derive(Debug, Clone, PartialEq)]
pub struct HttpPipeline {
    pub url: String,
    /// The URL as written in the config, before `${VAR}` expansion: what errors print.
    pub shown_url: String,
    pub concurrency: usize,
    /// Per request.
    pub timeout: Duration,
    pub max_retries: u32,
}

impl HttpPipeline {
    fn error(&self, message: String) -> Error {
        Error::pipeline("http", format!("{}: {message}", self.shown_url))
    }

    pub fn produce(&self, requests: &[Request], progress: &Progress) -> Result<ProducedRun> {
        let policy = RetryPolicy {
            concurrency: self.concurrency,
            timeout: self.timeout,
            max_retries: self.max_retries,
            backoff_base: BACKOFF_BASE,
        };
        let bodies: Vec<http::Request> = requests
            .iter()
            .map(|r| http::Request {
                body: r.to_json(),
                what: format!("qid `{}`", r.qid),
            })
            .collect();
        let collector = Mutex::new(Collector::new("http", requests));
        let record = |index: usize, body: &str, took: Duration| {
            let mut collector = collector.lock().expect("no worker panics");
            let answered = collector
                .accept("its reply", body)
                .map_err(|e| Failure::Fatal(bare_message(&e)))?;
            if answered != index {
                return Err(Failure::Fatal(format!(
                    "its reply carries qid `{}`",
                    requests[answered].qid
                )));
            }
            collector.set_latency(&requests[index].qid, took);
            progress.inc();
            Ok(())
        };
        http::send_all(
            &policy,
            &self.url,
            &self.shown_url,
            None,
            &bodies,
            |_| Ok(()),
            record,
        )
        .map_err(|error| self.error(error.to_string()).caused_by(error))?;
        collector
            .into_inner()
            .expect("no worker panics")
            .finish(requests)
            .map_err(|e| self.error(bare_message(&e)))
    }
}
