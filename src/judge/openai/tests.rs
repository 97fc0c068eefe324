//! Tests of the OpenAI-compatible judge against a loopback server.

use super::*;

fn support(claim: &str, context: &str) -> Task {
    Task::Support {
        claim: claim.into(),
        context: context.into(),
    }
}

#[test]
fn consecutive_claims_with_one_context_make_one_call() {
    let judge = OpenAiJudge::new("http://127.0.0.1:1/v1/", "m");
    let tasks = vec![
        support("a", "ctx1"),
        support("b", "ctx1"),
        support("c", "ctx2"),
        Task::Relevance {
            question: "q".into(),
            answer: "a".into(),
        },
        support("d", "ctx2"),
    ];
    let calls = judge.plan(&tasks);
    let shape: Vec<(usize, usize)> = calls.iter().map(|c| (c.first, c.len)).collect();
    assert_eq!(shape, vec![(0, 2), (2, 1), (3, 1), (4, 1)]);
    let body: serde_json::Value = serde_json::from_str(&calls[0].body).unwrap();
    let user = body["messages"][1]["content"].as_str().unwrap();
    let last: serde_json::Value = serde_json::from_str(user.lines().last().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"task": "support", "claims": ["a", "b"], "context": "ctx1"})
    );
    assert_eq!(body["temperature"], 0);
    assert_eq!(
        judge.describe(),
        "openai m @ http://127.0.0.1:1/v1 prompt support-relevance-1"
    );
}

#[cfg(feature = "llm")]
#[test]
fn an_http_failure_keeps_its_cause_as_the_error_source() {
    use std::error::Error as _;

    use crate::http::{AttemptFailure, RequestFailure, SendError};

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut spec = OpenAiSpec::new(format!("http://127.0.0.1:{port}/v1"), "m");
    spec.endpoint.max_retries = 0;
    let judge = OpenAiJudge::from_spec(&spec);
    let error = judge
        .judge_all("llm", &[support("a", "c")])
        .expect_err("nothing listens on the port");
    let send = error
        .source()
        .and_then(|cause| cause.downcast_ref::<SendError>())
        .expect("the judge's error is caused by the batch's");
    assert!(
        matches!(send, SendError::Request { index: 0, .. }),
        "{send:?}"
    );
    let failure = send
        .source()
        .and_then(|cause| cause.downcast_ref::<RequestFailure>())
        .expect("the batch's error is caused by the request's");
    assert!(
        matches!(failure, RequestFailure::RetriesUsedUp { attempts: 1, .. }),
        "{failure:?}"
    );
    let attempt = failure
        .source()
        .and_then(|cause| cause.downcast_ref::<AttemptFailure>())
        .expect("the request's error is caused by what its attempt met");
    assert!(!attempt.0.is_empty());
    // The message users see tells the whole chain, so printers add nothing to it.
    let text = error.to_string();
    assert!(
        text.starts_with("judge `llm`: openai m @ http://127.0.0.1:"),
        "{text}"
    );
    assert!(text.ends_with(&attempt.to_string()), "{text}");
    assert!(crate::error::untold_causes(&error).is_empty(), "{text}");
}

#[test]
fn replies_are_parsed_strictly() {
    let tasks = vec![support("a", "c"), support("b", "c")];
    let ok = parse_content(
        "```json\n{\"verdicts\":[{\"index\":1,\"supported\":false,\"grade\":0},{\"index\":0,\"supported\":true,\"grade\":1}]}\n```",
        &tasks,
    )
    .unwrap();
    assert_eq!((ok[0].positive, ok[0].grade), (true, 1));
    assert_eq!((ok[1].positive, ok[1].grade), (false, 0));
    for bad in [
        "{\"verdicts\":[{\"index\":0,\"supported\":true,\"grade\":2}]}",
        "{\"verdicts\":[{\"index\":0,\"supported\":true},{\"index\":0,\"supported\":true}]}",
        "{\"verdicts\":[{\"index\":0,\"supported\":true},{\"index\":2,\"supported\":true}]}",
        "{\"verdicts\":[{\"index\":0,\"supported\":true,\"grade\":0},{\"index\":1,\"supported\":true}]}",
        "{\"verdicts\":[{\"index\":0,\"supported\":false,\"grade\":2},{\"index\":1,\"supported\":true}]}",
        "{\"verdicts\":[],\"note\":1}",
        "Sure! {\"verdicts\":[]}",
    ] {
        assert!(parse_content(bad, &tasks).is_err(), "{bad}");
    }
    let relevance = vec![Task::Relevance {
        question: "q".into(),
        answer: "a".into(),
    }];
    assert!(parse_content(" {\"relevant\": true} ", &relevance).unwrap()[0].positive);
    assert!(parse_content("{\"relevant\": \"yes\"}", &relevance).is_err());
}
