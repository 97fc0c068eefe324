//! The HTTP transport (the `llm` feature): one ureq agent per batch, one POST per attempt; and
//! the single GET of an endpoint's probe ([`get_once`]).

use std::time::{Duration, SystemTime};

use super::{Failure, NoReply, RetryPolicy, hide_endpoint, retry_after, snippet};

/// A connection pool sized for a batch's workers.
pub(super) struct Agent(ureq::Agent);

impl Agent {
    /// An agent with `policy`'s timeout, keeping one idle connection per worker.
    pub(super) fn new(policy: &RetryPolicy) -> Result<Agent, String> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(policy.timeout))
            .http_status_as_error(false)
            .max_idle_connections_per_host(policy.concurrency.max(1))
            .max_idle_connections(policy.concurrency.max(1))
            .build()
            .into();
        Ok(Agent(agent))
    }

    /// One POST of `body`: the body of a 2xx reply, or why not (naming the endpoint as `shown`).
    pub(super) fn send_once(
        &self,
        endpoint: &str,
        shown: &str,
        authorization: Option<&str>,
        body: &str,
    ) -> Result<String, Failure> {
        let mut request = self.0.post(endpoint).content_type("application/json");
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        let transport = |error| transport_failure(error, endpoint, shown);
        let mut response = request.send(body).map_err(transport)?;
        let status = response.status().as_u16();
        let wait = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, SystemTime::now()));
        let text = response.body_mut().read_to_string().map_err(transport)?;
        if status == 429 || status >= 500 {
            return Err(Failure::Transient {
                reason: format!("HTTP {status}: {}", snippet(&text)),
                retry_after: wait,
            });
        }
        if !(200..300).contains(&status) {
            return Err(Failure::Fatal(format!(
                "HTTP {status} from {shown}: {}",
                snippet(&text)
            )));
        }
        Ok(text)
    }
}

/// One GET of `url` with at most `connect` to connect and `total` for the whole exchange, no
/// retry: the reply's status, and its body (at most 64 KiB; empty when unreadable) when
/// `wants_body(status)`; or why no reply came (naming the endpoint as `shown`).
pub(super) fn get_once(
    (url, shown): (&str, &str),
    authorization: Option<&str>,
    (connect, total): (Duration, Duration),
    wants_body: impl Fn(u16) -> bool,
) -> Result<(u16, String), NoReply> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(connect))
        .timeout_global(Some(total))
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent.get(url);
    if let Some(value) = authorization {
        request = request.header("Authorization", value);
    }
    let mut response = request
        .call()
        .map_err(|error| NoReply::Failed(hide_endpoint(&error.to_string(), url, shown)))?;
    let status = response.status().as_u16();
    let body = if wants_body(status) {
        response
            .body_mut()
            .with_config()
            .limit(64 * 1024)
            .read_to_string()
            .unwrap_or_default()
    } else {
        String::new()
    };
    Ok((status, body))
}

/// Classifies a transport error: timeouts and connection trouble are worth retrying. Should the
/// error's text quote the endpoint, it is shown as `shown`.
fn transport_failure(error: ureq::Error, endpoint: &str, shown: &str) -> Failure {
    let transient = matches!(
        error,
        ureq::Error::Timeout(_)
            | ureq::Error::Io(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::Protocol(_)
            | ureq::Error::BodyStalled
    );
    let reason = hide_endpoint(&error.to_string(), endpoint, shown);
    if transient {
        Failure::Transient {
            reason,
            retry_after: None,
        }
    } else {
        Failure::Fatal(reason)
    }
}
