//! The `command` judge as a generator of drafted questions (`ragate synth`): one request line
//! per draft, the contract of [`crate::judge::draft`].

use serde::Deserialize;

use crate::error::Result;
use crate::judge::draft::{self, Draft, DraftTask};
use crate::judge::events::Events;

use super::{CommandJudge, ReplyId, request_lines};

/// A `command` judge's reply to a draft request.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandDraftReply {
    id: String,
    question: String,
    answer: String,
}

impl ReplyId for CommandDraftReply {
    fn id(&self) -> &str {
        &self.id
    }
}

impl CommandJudge {
    /// Drafts a question and its answer for every task with one run of the program, in order.
    pub fn draft_all(
        &self,
        name: &str,
        tasks: &[DraftTask],
        events: &Events,
    ) -> Result<Vec<Draft>> {
        let requests = request_lines(tasks, draft::inputs);
        let summary = |index: usize| tasks[index].summary();
        self.exchange(
            name,
            events,
            requests,
            &summary,
            "{\"id\", \"question\", \"answer\"}",
            |index, reply: CommandDraftReply, line_number| {
                Draft {
                    question: reply.question,
                    answer: reply.answer,
                }
                .checked()
                .map_err(|e| {
                    format!(
                        "output line {line_number}: request {index} ({}): {e}",
                        summary(index)
                    )
                })
            },
        )
    }
}
