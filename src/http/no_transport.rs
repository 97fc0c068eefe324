//! The HTTP transport in a build without the `llm` feature: no HTTP client is compiled in, and
//! a batch fails before its first request with an error naming the feature.

use std::time::Duration;

use super::{Failure, NoReply, RetryPolicy};

/// What a request needs in this build.
fn missing() -> String {
    crate::features::missing(
        "llm",
        "an HTTP request (an `openai` judge, `embeddings:` or the `http` pipeline)",
        "or use a `lexical` or `command` judge and a `command` or `run_file` pipeline",
    )
}

/// Always an error: this build has no HTTP client.
pub(super) fn get_once(
    _target: (&str, &str),
    _authorization: Option<&str>,
    _timeouts: (Duration, Duration),
    _wants_body: impl Fn(u16) -> bool,
) -> Result<(u16, String), NoReply> {
    Err(NoReply::NoClient(missing()))
}

/// No agent can exist in this build: the type has no values.
pub(super) enum Agent {}

impl Agent {
    /// Always an error: this build has no HTTP client.
    pub(super) fn new(_policy: &RetryPolicy) -> Result<Agent, String> {
        Err(missing())
    }

    pub(super) fn send_once(
        &self,
        _endpoint: &str,
        _shown: &str,
        _authorization: Option<&str>,
        _body: &str,
    ) -> Result<String, Failure> {
        match *self {}
    }
}
