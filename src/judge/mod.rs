//! Judges: verdicts on whether claims are supported by contexts and answers address questions.

pub mod cache;
pub mod command;
pub mod lexical;

use crate::error::Result;
use command::CommandJudge;
use lexical::LexicalJudge;

/// A configured judge.
#[derive(Debug, Clone, PartialEq)]
pub enum Judge {
    Lexical(LexicalJudge),
    Command(CommandJudge),
}

/// One question put to a judge.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Task {
    /// Is `claim` supported by `context`?
    Support { claim: String, context: String },
    /// Does `answer` address `question`?
    Relevance { question: String, answer: String },
}

impl Task {
    /// A short description for error messages.
    pub fn summary(&self) -> String {
        let short = |text: &str| text.chars().take(60).collect::<String>();
        match self {
            Task::Support { claim, .. } => format!("support of \"{}\"", short(claim)),
            Task::Relevance { question, .. } => format!("relevance to \"{}\"", short(question)),
        }
    }
}

/// A judge's answer to a task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// Supported (support tasks) or relevant (relevance tasks).
    pub positive: bool,
    /// 0 unsupported, 1 partly, 2 fully supported (relevance: 2 or 0).
    pub grade: u8,
    /// The judge's score in [0, 1] when it has one (the lexical judge's token share).
    pub score: Option<f64>,
}

impl Judge {
    /// What identifies the judge's verdicts, for provenance and cache keys.
    pub fn describe(&self) -> String {
        match self {
            Judge::Lexical(judge) => judge.describe(),
            Judge::Command(judge) => format!("command `{}`", judge.command.join(" ")),
        }
    }

    /// Judges every task, in order. `name` is the judge's name in the config, for errors.
    pub fn judge_all(&self, name: &str, tasks: &[Task]) -> Result<Vec<Verdict>> {
        match self {
            Judge::Lexical(judge) => Ok(tasks.iter().map(|task| judge.verdict(task)).collect()),
            Judge::Command(judge) => judge.judge_all(name, tasks),
        }
    }
}
