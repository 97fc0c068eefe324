//! The `command` judge as a generator of drafted questions (`ragate synth`): one request line
//! per draft, the contract of [`crate::judge::draft`].

use serde::Deserialize;

use crate::error::Result;
use crate::judge::draft::{self, Draft, DraftTask};
use crate::judge::events::Events;

use super::{CommandJudge, ReplyId};

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
        self.exchange_tasks(
            name,
            events,
            tasks,
            (draft::inputs, DraftTask::summary),
            "{\"id\", \"question\", \"answer\"}",
            |reply: CommandDraftReply| {
                Draft {
                    question: reply.question,
                    answer: reply.answer,
                }
                .checked()
            },
        )
    }
}
