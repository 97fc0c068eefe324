//! What the `openai` judge's calls would be, asking nothing: the same batching as
//! [`OpenAiJudge::judge_all`], tokens estimated from the request bodies and from the size of the
//! replies the contract asks for (`crate::judge::cost`).

use super::OpenAiJudge;
use crate::judge::cost::{Requests, Tokens};
use crate::judge::task::{ClaimsTask, Task};

/// The characters of a support reply (`{"verdicts":[...]}`) around its entries.
const SUPPORT_REPLY_CHARS: u64 = 15;
/// The characters of one support entry, `{"index":10,"supported":false,"grade":0},`.
const SUPPORT_ENTRY_CHARS: u64 = 42;
/// The characters of a relevance reply, `{"relevant":false}`.
const RELEVANCE_REPLY_CHARS: u64 = 18;
/// The characters of a claims reply (`{"claims":[...]}`) besides the answer's own text.
const CLAIMS_REPLY_CHARS: u64 = 16;

impl OpenAiJudge {
    /// The calls [`Self::judge_all`] sends for `tasks` (their batching too), with tokens
    /// estimated from the request bodies and from the size of the replies the contract asks for.
    pub fn requests(&self, tasks: &[Task]) -> Requests {
        let calls = self.plan(tasks);
        let input = calls.iter().map(|call| call.body.len() as u64).sum();
        let output = calls
            .iter()
            .map(|call| match tasks[call.first] {
                Task::Relevance { .. } => RELEVANCE_REPLY_CHARS,
                Task::Support { .. } => SUPPORT_REPLY_CHARS + SUPPORT_ENTRY_CHARS * call.len as u64,
            })
            .sum();
        Requests {
            calls: calls.len() as u64,
            tokens: Some(Tokens::of_chars(input, output)),
        }
    }

    /// The calls [`Self::decompose_all`] sends for `tasks` (one per answer), with tokens
    /// estimated from the bodies and a reply as long as the answer.
    pub fn decompose_requests(&self, tasks: &[ClaimsTask]) -> Requests {
        let input = tasks
            .iter()
            .map(|task| self.claims_body(task).len() as u64)
            .sum();
        let output = tasks
            .iter()
            .map(|task| task.answer.len() as u64 + CLAIMS_REPLY_CHARS)
            .sum();
        Requests {
            calls: tasks.len() as u64,
            tokens: Some(Tokens::of_chars(input, output)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_the_batched_calls_with_their_bodies_and_replies_in_tokens() {
        let judge = OpenAiJudge::new("http://127.0.0.1:1/v1/", "m");
        let support = |claim: &str, context: &str| Task::Support {
            claim: claim.into(),
            context: context.into(),
        };
        let tasks = vec![
            support("a", "ctx1"),
            support("b", "ctx1"),
            support("c", "ctx2"),
            Task::Relevance {
                question: "q".into(),
                answer: "a".into(),
            },
        ];
        let requests = judge.requests(&tasks);
        assert_eq!(requests.calls, 3, "the two claims of ctx1 go in one call");
        let bodies: u64 = judge.plan(&tasks).iter().map(|c| c.body.len() as u64).sum();
        let replies = (SUPPORT_REPLY_CHARS + 2 * SUPPORT_ENTRY_CHARS)
            + (SUPPORT_REPLY_CHARS + SUPPORT_ENTRY_CHARS)
            + RELEVANCE_REPLY_CHARS;
        assert_eq!(requests.tokens, Some(Tokens::of_chars(bodies, replies)));
        assert_eq!(
            judge.requests(&[]),
            Requests {
                calls: 0,
                tokens: Some(Tokens::default())
            }
        );
        let answer = ClaimsTask {
            question: "q".into(),
            answer: "It is. It was.".into(),
        };
        let decompose = judge.decompose_requests(std::slice::from_ref(&answer));
        assert_eq!(decompose.calls, 1);
        let body = judge.claims_body(&answer).len() as u64;
        assert_eq!(
            decompose.tokens,
            Some(Tokens::of_chars(
                body,
                answer.answer.len() as u64 + CLAIMS_REPLY_CHARS
            ))
        );
    }
}
