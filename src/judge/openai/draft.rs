//! The `openai` judge as a generator of drafted questions (`ragate synth`): one chat call per
//! draft, the contract of [`crate::judge::draft`].

use crate::error::Result;
use crate::http::Request;
use crate::judge::cost::{Requests, Tokens};
use crate::judge::draft::{self, Draft, DraftTask};

use super::OpenAiJudge;

/// The characters a draft reply is assumed to take, `{"question":"...","answer":"..."}` with a
/// question of about 100 characters and an answer of about 300: an assumption, not a limit.
const DRAFT_REPLY_CHARS: u64 = 430;

impl OpenAiJudge {
    /// Drafts a question and its answer for every task, one call each, in order.
    pub fn draft_all(&self, name: &str, tasks: &[DraftTask]) -> Result<Vec<Draft>> {
        let requests: Vec<Request> = tasks
            .iter()
            .map(|task| Request {
                body: self.body(draft::DRAFT_INSTRUCTIONS, &draft::inputs(task)),
                what: task.summary(),
            })
            .collect();
        self.chat_all(name, &requests, |_, content| draft::parse_draft(content))
    }

    /// The calls [`Self::draft_all`] sends for `tasks` (one each), with tokens estimated from
    /// the bodies and a reply of [`DRAFT_REPLY_CHARS`].
    pub fn draft_requests(&self, tasks: &[DraftTask]) -> Requests {
        let input = tasks
            .iter()
            .map(|task| {
                let body = self.body(draft::DRAFT_INSTRUCTIONS, &draft::inputs(task));
                body.len() as u64
            })
            .sum();
        Requests {
            calls: tasks.len() as u64,
            tokens: Some(Tokens::of_chars(
                input,
                DRAFT_REPLY_CHARS * tasks.len() as u64,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::draft::{DraftDocument, QuestionClass};

    #[test]
    fn a_draft_costs_one_call_its_body_and_the_assumed_reply() {
        let judge = OpenAiJudge::new("http://127.0.0.1:1/v1/", "m");
        let task = |text: &str| DraftTask {
            class: QuestionClass::Literal,
            documents: vec![DraftDocument {
                doc_id: "d".into(),
                text: text.into(),
            }],
        };
        let tasks = [task("short"), task(&"long text ".repeat(100))];
        let requests = judge.draft_requests(&tasks);
        assert_eq!(requests.calls, 2);
        let bodies: u64 = tasks
            .iter()
            .map(|t| {
                judge
                    .body(draft::DRAFT_INSTRUCTIONS, &draft::inputs(t))
                    .len() as u64
            })
            .sum();
        assert_eq!(
            requests.tokens,
            Some(Tokens::of_chars(bodies, 2 * DRAFT_REPLY_CHARS))
        );
        assert!(bodies > 1_000, "the longer document is in its body");
    }
}
