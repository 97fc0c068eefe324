//! Tests of the HTTP client: retries, deadlines, replies and errors, on a loopback server.

use super::*;
/// A judge's error caused by request 0 failing as `failure` (as `http::send_all` reports it).
fn judge_request(failure: RequestFailure) -> crate::error::Error {
    let cause = SendError::Request {
        index: 0,
        what: "claim 1".into(),
        failure,
    };
    crate::error::Error::judge("llm", format!("the endpoint failed: {cause}")).caused_by(cause)
}

#[test]
fn only_endpoints_that_failed_every_retry_are_retryable() {
    use crate::error::Error;
    use std::path::Path;
    let attempt = |text: &str| AttemptFailure(text.into());
    let down = [
        "HTTP 503: overloaded",
        "HTTP 429: slow down",
        "connection refused",
        "timed out after 30 s",
    ]
    .map(|last| {
        judge_request(RequestFailure::RetriesUsedUp {
            attempts: 3,
            max_retries: 2,
            last: attempt(last),
        })
    });
    let abandoned = judge_request(RequestFailure::Abandoned {
        last: attempt("HTTP 500"),
    });
    let pipeline_down = Error::pipeline("http", "request 4 failed").caused_by(SendError::Request {
        index: 4,
        what: "query q4".into(),
        failure: RequestFailure::RetriesUsedUp {
            attempts: 4,
            max_retries: 3,
            last: attempt("HTTP 502"),
        },
    });
    let child = Error::judge("nli", "crashed").with_stderr(vec!["Traceback".into()]);
    let refused = judge_request(RequestFailure::Fatal(attempt("HTTP 401: bad key")));
    let budget = judge_request(RequestFailure::Refused("max_calls 10 reached".into()));
    let no_client = Error::judge("llm", "no HTTP client")
        .caused_by(SendError::NoClient("built without `llm`".into()));
    let path = Path::new("eval-config.yaml");
    for error in down.into_iter().chain([abandoned, pipeline_down]) {
        assert!(retryable(&error), "{error}");
        // With the last lines of a child's stderr, as a failed child reports it.
        let with_stderr = Error::Child {
            error: Box::new(error),
            stderr: vec!["Traceback".into()],
        };
        assert!(retryable(&with_stderr), "{with_stderr}");
    }
    let would_recur = [
        refused,
        budget,
        no_client,
        child,
        Error::judge("llm", "unparseable reply"),
        Error::pipeline("command", "timed out after timeout_s (60 s)"),
        Error::config(path, "gate.rules[0].metric", "unknown metric"),
        Error::parse(path, 3, "expected a mapping"),
        Error::missing(path, "no such file"),
        Error::input(path, "empty"),
        Error::io(path, std::io::Error::from(std::io::ErrorKind::TimedOut)),
        Error::write(path, std::io::Error::from(std::io::ErrorKind::Interrupted)),
        Error::Usage("unknown metric `ndgc@10`".into()),
        Error::Chart {
            chart: "trend".into(),
            message: "no data".into(),
        },
    ];
    for error in &would_recur {
        assert!(!retryable(error), "{error}");
    }
}

#[test]
fn an_endpoint_shown_otherwise_is_hidden_with_its_host() {
    let endpoint = "http://judge.internal:8443/v1/chat/completions";
    let shown = "/chat/completions at judges.j.base_url (from ${URL})";
    let hidden = hide_endpoint(
        "POST http://judge.internal:8443/v1/chat/completions: dns judge.internal:8443 failed",
        endpoint,
        shown,
    );
    assert!(!hidden.contains("judge.internal"), "{hidden}");
    assert_eq!(hidden.matches(shown).count(), 2, "{hidden}");
    // shown as it is: nothing to hide
    let text = format!("HTTP 500 from {endpoint}");
    assert_eq!(hide_endpoint(&text, endpoint, endpoint), text);
}

fn policy() -> RetryPolicy {
    RetryPolicy {
        concurrency: 1,
        timeout: Duration::from_secs(1),
        max_retries: 3,
        backoff_base: Duration::from_millis(500),
    }
}

#[test]
fn backoff_grows_with_jitter_and_is_deterministic() {
    let policy = policy();
    let first = policy.backoff(3, 0);
    assert!(first >= Duration::from_millis(250) && first <= Duration::from_millis(500));
    let third = policy.backoff(3, 2);
    assert!(third >= Duration::from_millis(1000) && third <= Duration::from_millis(2000));
    assert_eq!(policy.backoff(3, 2), third);
    assert!(policy.backoff(40, 30) <= MAX_BACKOFF);
}

#[test]
fn retry_after_takes_seconds_and_http_dates_capped() {
    // 1994-11-06 08:49:37 UTC, the RFC's example date.
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
    assert_eq!(retry_after(" 7 ", now), Some(Duration::from_secs(7)));
    assert_eq!(retry_after("100000", now), Some(MAX_RETRY_AFTER));
    let date = |s: &str| retry_after(s, now);
    assert_eq!(
        date("Sun, 06 Nov 1994 08:50:07 GMT"),
        Some(Duration::from_secs(30))
    );
    // The obsolete forms a recipient must accept.
    assert_eq!(
        date("Sunday, 06-Nov-94 08:50:07 GMT"),
        Some(Duration::from_secs(30))
    );
    assert_eq!(
        date("Sun Nov  6 08:50:07 1994"),
        Some(Duration::from_secs(30))
    );
    assert_eq!(
        date("Sun, 06 Nov 1994 08:49:00 GMT"),
        Some(Duration::ZERO),
        "a past date: at once"
    );
    assert_eq!(date("Mon, 07 Nov 1994 08:49:37 GMT"), Some(MAX_RETRY_AFTER));
    assert_eq!(date("soon"), None);
    assert_eq!(date("-5"), None);
}

#[test]
fn a_named_but_unset_key_variable_is_an_error_naming_it() {
    assert_eq!(authorization(None), Ok(None));
    let error = authorization(Some("RAGATE_TEST_HTTP_KEY_NEVER_SET")).unwrap_err();
    assert!(error.contains("RAGATE_TEST_HTTP_KEY_NEVER_SET"), "{error}");
}

#[test]
fn the_error_is_the_root_cause_not_a_request_abandoned_for_it() {
    let policy = RetryPolicy {
        backoff_base: Duration::ZERO,
        ..policy()
    };
    let transient = || -> Result<(), Failure> {
        Err(Failure::Transient {
            reason: "HTTP 500".into(),
            retry_after: None,
        })
    };
    let allow = |_attempt: u32| Ok(());
    // Its own retries used up: a failure, whatever the other requests did.
    let stop = AtomicBool::new(false);
    let used_up = with_retries(&policy, 0, &stop, &allow, transient).unwrap_err();
    assert_eq!(
        used_up,
        RequestFailure::RetriesUsedUp {
            attempts: 4,
            max_retries: 3,
            last: AttemptFailure("HTTP 500".into()),
        }
    );
    assert_eq!(
        used_up.to_string(),
        "failed after 4 attempts (max_retries 3): HTTP 500"
    );
    // Another request failed first: this one stops retrying, abandoned.
    let stop = AtomicBool::new(true);
    let abandoned = with_retries(&policy, 0, &stop, &allow, transient).unwrap_err();
    assert!(matches!(abandoned, RequestFailure::Abandoned { .. }));
    assert_eq!(
        abandoned.to_string(),
        "abandoned after another request failed: HTTP 500"
    );
    // Request 0 abandoned for request 1's failure: request 1's error is the one reported.
    let request = |index: usize, failure: RequestFailure| SendError::Request {
        index,
        what: "q".into(),
        failure,
    };
    let http_500 = || AttemptFailure("HTTP 500".into());
    let results: Vec<Option<Result<(), SendError>>> = vec![
        Some(Err(request(
            0,
            RequestFailure::Abandoned { last: http_500() },
        ))),
        Some(Err(request(1, RequestFailure::Fatal(http_500())))),
        Some(Err(request(2, RequestFailure::Fatal(http_500())))),
    ];
    assert_eq!(
        collect(results).map_err(|e| e.to_string()),
        Err("request 1 (q): HTTP 500".to_string())
    );
    let replies: Vec<Option<Result<u8, SendError>>> = vec![Some(Ok(1)), Some(Ok(2))];
    assert_eq!(collect(replies), Ok(vec![1, 2]));
}

#[test]
fn fences_are_removed() {
    assert_eq!(unfence("```json\n{\"a\":1}\n```"), "{\"a\":1}");
    assert_eq!(unfence(" {\"a\":1} "), "{\"a\":1}");
    assert_eq!(unfence("```\n[]\n```"), "[]");
}
