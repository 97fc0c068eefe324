//! Where the judges' events go in the CLI: progress and a command judge's stderr lines on
//! stderr, as the judges used to print them.

use crate::judge::events::{Events, JudgeEvent};
use crate::term;

/// Events printed on stderr: `ragate: judge `j`: asking about ...` as information, a command
/// judge's stderr lines under its label.
pub(crate) fn printed() -> Events {
    Events::to(|event| match &event {
        JudgeEvent::Asking { .. } => term::info(&event),
        JudgeEvent::ChildStderr { line, .. } => term::child_line(&event.label(), line),
    })
}
