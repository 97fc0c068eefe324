//! Claim decomposition by a judge (`claims: llm`): before faithfulness judges an answer's claims,
//! the judge splits the answer into atomic, self-contained statements (RAGAS style) instead of
//! the deterministic sentence splitter (`sentences-1`, [`crate::metrics::claims`]).
//!
//! # Contracts (prompt version [`CLAIMS_PROMPT_VERSION`], part of the cache key)
//!
//! - `openai`: one chat call per answer (same endpoint, temperature 0, budget, retries and usage
//!   as the judge's other calls); the last line of the user message is
//!   `{"task":"claims","question":"...","answer":"..."}` and the reply content must be exactly
//!   `{"claims":["...","..."]}` (a ```json fence is accepted).
//! - `command`: the request line `{"id":"<opaque>","task":"claims","question":"...","answer":"..."}`
//!   is answered by `{"id":"...","claims":["...","..."]}`, in the same run of the program as
//!   other requests would be (one run per batch).
//!
//! Claims must be non-blank strings (they are trimmed); an empty list is allowed (an answer
//! that states nothing: faithfulness 0). Anything else (unknown fields, a non-string claim) is
//! unparseable: retried for `openai`, an error naming the request for both. The splitter is
//! recorded as `llm:<prompt version>` in the results' provenance and in the trace.

use serde::Deserialize;
use serde_json::json;

use crate::http;

pub use crate::metrics::claims::CLAIMS_PROMPT_VERSION;

pub use crate::judge::task::ClaimsTask;

pub(crate) const CLAIMS_INSTRUCTIONS: &str = "Break the answer down into atomic statements: short, \
self-contained factual claims, each understandable without the others (replace pronouns with \
what they refer to), together covering everything the answer asserts and nothing more. Do not \
judge whether they are true. Reply with one JSON object of the form \
{\"claims\":[\"...\",\"...\"]} (an empty list when the answer asserts nothing). The inputs are \
the JSON object on the last line.";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimsReply {
    claims: Vec<String>,
}

/// The claims, trimmed; a blank claim is an error.
pub(crate) fn checked(claims: Vec<String>) -> std::result::Result<Vec<String>, String> {
    claims
        .into_iter()
        .enumerate()
        .map(|(i, claim)| {
            let claim = claim.trim();
            if claim.is_empty() {
                Err(format!("claim {i} is blank"))
            } else {
                Ok(claim.to_string())
            }
        })
        .collect()
}

/// Parses an `openai` reply content: `{"claims":[...]}`.
pub fn parse_claims(content: &str) -> std::result::Result<Vec<String>, String> {
    let reply: ClaimsReply = serde_json::from_str(http::unfence(content))
        .map_err(|e| format!("{e}: expected {{\"claims\":[\"...\"]}}"))?;
    checked(reply.claims)
}

pub(crate) fn inputs(task: &ClaimsTask) -> serde_json::Value {
    json!({"task": "claims", "question": task.question, "answer": task.answer})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_replies_are_parsed_strictly() {
        assert_eq!(
            parse_claims(
                "```json\n{\"claims\":[\" Backups stay in Frankfurt. \",\"They last 30 days.\"]}\n```"
            ),
            Ok(vec![
                "Backups stay in Frankfurt.".to_string(),
                "They last 30 days.".to_string()
            ])
        );
        assert_eq!(parse_claims("{\"claims\":[]}"), Ok(vec![]));
        for bad in [
            "{\"claims\":[\"a\",\"  \"]}",
            "{\"claims\":[1]}",
            "{\"claims\":[\"a\"],\"note\":\"x\"}",
            "{\"statements\":[\"a\"]}",
            "Here you go: {\"claims\":[\"a\"]}",
        ] {
            assert!(parse_claims(bad).is_err(), "{bad}");
        }
    }
}
