//! The `openai` judge as a generator of drafted questions (`ragate synth`): one chat call per
//! draft, the contract of [`crate::judge::draft`].

use crate::error::Result;
use crate::http::Request;
use crate::judge::draft::{self, Draft, DraftTask};

use super::OpenAiJudge;

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
}
