//! What is put to a judge and what it answers: [`Task`]s and their [`Verdict`]s, and the
//! [`ClaimsTask`]s of claim decomposition (`claims: llm`).

use std::sync::Arc;

use serde::Serialize;

/// One question put to a judge.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(tag = "task", rename_all = "lowercase")]
pub enum Task {
    /// Is `claim` supported by `context`?
    Support {
        /// One claim of an answer.
        claim: String,
        /// The contexts the answer was generated from, joined with blank lines: one text shared
        /// by every claim of the answer (serialised as the string, so cache keys are unchanged).
        #[serde(serialize_with = "shared_text")]
        context: Arc<str>,
    },
    /// Does `answer` address `question`?
    Relevance {
        /// The query text.
        question: String,
        /// The system's answer.
        answer: String,
    },
}

/// A shared text serialised as the string it holds (serde's `rc` feature would do the same for
/// every `Arc` of the build).
fn shared_text<S: serde::Serializer>(text: &Arc<str>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(text)
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
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Verdict {
    /// Supported (support tasks) or relevant (relevance tasks).
    pub positive: bool,
    /// 0 unsupported, 1 partly, 2 fully supported (relevance: 2 or 0).
    pub grade: u8,
    /// The judge's score in [0, 1] when it has one (the lexical judge's token share).
    pub score: Option<f64>,
    /// Why a claim is not supported, when the judge says (`lexical-2`: `unsupported: number
    /// 1228 not in the context`); on a claim that asserts nothing, why (`lexical-3`: `nothing
    /// checkable: a bare yes or no ...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The claim asserts nothing checkable (`lexical-3`: a bare `yes` / `no`, a meta sentence):
    /// binary faithfulness leaves it out of its claim count. Only a judge of ragate's own sets it;
    /// no text of a judge's reply does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub asserts_nothing: bool,
}

/// One answer to decompose.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ClaimsTask {
    /// The question asked.
    pub question: String,
    /// The answer to split into claims.
    pub answer: String,
}

impl ClaimsTask {
    /// A short description for error messages.
    pub fn summary(&self) -> String {
        let short: String = self.answer.chars().take(60).collect();
        format!("claims of \"{short}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_support_task_serialises_its_shared_context_as_the_text() {
        let context: Arc<str> = "The sky is blue.".into();
        let task = Task::Support {
            claim: "sky blue".to_string(),
            context: Arc::clone(&context),
        };
        // The cache key's input: the same JSON as when the context was a String.
        assert_eq!(
            serde_json::to_string(&task).unwrap(),
            r#"{"task":"support","claim":"sky blue","context":"The sky is blue."}"#
        );
        assert_eq!(Arc::strong_count(&context), 2, "shared, not copied");
    }
}
