//! The probe of an OpenAI-compatible endpoint before a run depends on it: one `GET
//! {base_url}/models`, a short connect timeout, no retry. Any HTTP reply shows the endpoint is
//! up (many gateways answer 404 or 405 there) except 401 and 403, which refuse the key; no reply
//! (refused, reset, DNS, TLS, timeout) fails.

use std::time::Duration;

use super::endpoint::HttpEndpoint;
use super::{NoReply, authorization, snippet, transport};

/// How long the probe waits for a connection.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the whole exchange may take.
pub(crate) const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// What a reply's status says of the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reply {
    /// It answered: it is up (whatever it thinks of `/models`).
    Up,
    /// It refused the key (or the lack of one): 401 or 403.
    KeyRefused,
}

/// The meaning of a reply with `status`.
pub(crate) fn classify(status: u16) -> Reply {
    match status {
        401 | 403 => Reply::KeyRefused,
        _ => Reply::Up,
    }
}

/// Why a probe failed; the URL as written in the config, no secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ProbeFailure {
    /// No HTTP reply: refused, reset, DNS, TLS or a timeout (a retry later may succeed).
    #[error("GET {url} got no reply: {reason}")]
    Unreachable { url: String, reason: String },
    /// The endpoint refused the key: 401 or 403.
    #[error("GET {url} answered HTTP {status}, which refuses {key}: {body}")]
    KeyRefused {
        url: String,
        status: u16,
        /// `the key in VAR`, or `a request without a key`.
        key: String,
        body: String,
    },
    /// The key's variable is unset, or this build has no HTTP client.
    #[error("GET {url} was not sent: {reason}")]
    NotSent { url: String, reason: String },
}

impl ProbeFailure {
    /// Whether probing again later may succeed (the endpoint did not answer).
    pub(crate) fn may_pass_later(&self) -> bool {
        matches!(self, ProbeFailure::Unreachable { .. })
    }
}

/// The probed URL as messages show it: as written in the config, or, when `base_url` holds a
/// `${VAR}`, `/models at judges.j.base_url (from http://h/${VAR})` (as every message names it).
pub(crate) fn written_url(endpoint: &HttpEndpoint) -> String {
    endpoint.shown_url("/models")
}

/// Probes `endpoint`: the status it answered, or why it failed (secrets redacted).
pub(crate) fn probe(endpoint: &HttpEndpoint) -> Result<u16, ProbeFailure> {
    let shown = written_url(endpoint);
    let redacted = |text: &str| crate::secrets::redact(text).into_owned();
    let key = endpoint.api_key_env.as_deref();
    let header = authorization(key).map_err(|reason| ProbeFailure::NotSent {
        url: shown.clone(),
        reason: redacted(&reason),
    })?;
    let (status, body) = transport::get_once(
        (&endpoint.url("/models"), &shown),
        header.as_deref(),
        (CONNECT_TIMEOUT, REPLY_TIMEOUT),
        |status| classify(status) == Reply::KeyRefused,
    )
    .map_err(|no_reply| match no_reply {
        NoReply::NoClient(reason) => ProbeFailure::NotSent {
            url: shown.clone(),
            reason: redacted(&reason),
        },
        NoReply::Failed(reason) => ProbeFailure::Unreachable {
            url: shown.clone(),
            reason: redacted(&reason),
        },
    })?;
    match classify(status) {
        Reply::Up => Ok(status),
        Reply::KeyRefused => Err(ProbeFailure::KeyRefused {
            url: shown,
            status,
            key: key.map_or("a request without a key".to_string(), |var| {
                format!("the key in {var}")
            }),
            body: snippet(&body),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_reply_but_401_and_403_shows_the_endpoint_up() {
        for status in [200, 204, 301, 400, 404, 405, 429, 500, 501, 503] {
            assert_eq!(classify(status), Reply::Up, "{status}");
        }
        for status in [401, 403] {
            assert_eq!(classify(status), Reply::KeyRefused, "{status}");
        }
    }

    #[test]
    fn the_url_is_the_root_with_models_shown_as_written() {
        let mut endpoint = HttpEndpoint::new("http://h:8000/v1/", "m", 1);
        assert_eq!(written_url(&endpoint), "http://h:8000/v1/models");
        assert_eq!(endpoint.url("/models"), "http://h:8000/v1/models");
        endpoint.shown_base_url = Some("judges.j.base_url (from http://h/${TENANT}/v1)".into());
        assert_eq!(
            written_url(&endpoint),
            "/models at judges.j.base_url (from http://h/${TENANT}/v1)"
        );
    }

    #[test]
    fn only_an_endpoint_that_did_not_answer_may_pass_later() {
        let url = "http://h/v1/models".to_string();
        let unreachable = ProbeFailure::Unreachable {
            url: url.clone(),
            reason: "io: Connection refused (os error 111)".to_string(),
        };
        assert!(unreachable.may_pass_later());
        let refused = ProbeFailure::KeyRefused {
            url,
            status: 401,
            key: "the key in K".to_string(),
            body: String::new(),
        };
        assert!(!refused.may_pass_later());
        assert_eq!(
            refused.to_string(),
            "GET http://h/v1/models answered HTTP 401, which refuses the key in K: "
        );
    }

    #[cfg(all(feature = "llm", unix))]
    #[test]
    fn a_closed_port_fails_at_once_and_a_404_passes() {
        use std::io::{Read, Write};
        // Port 1 (tcpmux): nothing listens there, and no concurrent test can be given it.
        let started = std::time::Instant::now();
        let failure = probe(&HttpEndpoint::new("http://127.0.0.1:1/v1", "m", 1)).unwrap_err();
        assert!(failure.may_pass_later(), "{failure}");
        assert!(failure.to_string().contains("refused"), "{failure}");
        assert!(started.elapsed() < Duration::from_secs(3));

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = [0u8; 1024];
            let read = stream.read(&mut request).unwrap();
            let line = String::from_utf8_lossy(&request[..read]).to_string();
            let reply = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            stream.write_all(reply.as_bytes()).unwrap();
            line
        });
        assert_eq!(probe(&HttpEndpoint::new(url.as_str(), "m", 1)), Ok(404));
        let request = server.join().unwrap();
        assert!(request.starts_with("GET /v1/models HTTP/1.1"), "{request}");
    }
}
