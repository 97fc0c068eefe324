//! What a judge tells while it works (how many tasks it asks about, the stderr of a command
//! judge), as events: the library never prints, the app decides where they go.

use std::fmt;
use std::sync::Arc;

/// Something a judge tells on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JudgeEvent {
    /// A slow (external) judge is about to be asked about `asked` of `total` tasks (the cache
    /// answered the rest).
    Asking {
        /// The judge's name in the config.
        judge: String,
        /// Tasks put to the judge.
        asked: usize,
        /// Tasks of the batch.
        total: usize,
    },
    /// A line a command judge wrote on its stderr.
    ChildStderr {
        /// The judge's name in the config.
        judge: String,
        /// The line, as written.
        line: String,
    },
}

impl JudgeEvent {
    /// Who tells the event: `judge `NAME``.
    pub fn label(&self) -> String {
        match self {
            JudgeEvent::Asking { judge, .. } | JudgeEvent::ChildStderr { judge, .. } => {
                format!("judge `{judge}`")
            }
        }
    }
}

impl fmt::Display for JudgeEvent {
    /// The event as a line of progress: `ragate: judge `j`: asking about 3 of 5 tasks (the
    /// rest are cached)`, or the stderr line itself.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JudgeEvent::Asking {
                judge,
                asked,
                total,
            } => write!(
                f,
                "ragate: judge `{judge}`: asking about {asked} of {total} tasks (the rest are cached)"
            ),
            JudgeEvent::ChildStderr { line, .. } => f.write_str(line),
        }
    }
}

/// Where a judge's events go; cloned into the threads that read a child's stderr.
#[derive(Clone)]
pub struct Events(Arc<dyn Fn(JudgeEvent) + Send + Sync>);

impl Events {
    /// Events handed to `sink`.
    pub fn to(sink: impl Fn(JudgeEvent) + Send + Sync + 'static) -> Self {
        Events(Arc::new(sink))
    }

    /// Events nobody hears.
    pub fn ignored() -> Self {
        Events::to(|_| {})
    }

    /// Tells `event`.
    pub fn emit(&self, event: JudgeEvent) {
        (self.0)(event)
    }
}

impl Default for Events {
    fn default() -> Self {
        Events::ignored()
    }
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Events")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn events_reach_their_sink_and_read_as_the_progress_line() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&heard);
        let events = Events::to(move |event| sink.lock().unwrap().push(event.to_string()));
        events.emit(JudgeEvent::Asking {
            judge: "llm".into(),
            asked: 2,
            total: 5,
        });
        let line = JudgeEvent::ChildStderr {
            judge: "cmd".into(),
            line: "loading".into(),
        };
        assert_eq!(line.label(), "judge `cmd`");
        events.emit(line);
        assert_eq!(
            *heard.lock().unwrap(),
            [
                "ragate: judge `llm`: asking about 2 of 5 tasks (the rest are cached)",
                "loading"
            ]
        );
    }
}
