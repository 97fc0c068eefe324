//! The `command` judge: an external program that speaks JSON lines.
//!
//! ragate starts the program once per run (an argv list, never a shell) and writes one request a
//! line to its stdin: `{"id":"<opaque>","task":"support","claim":"...","context":"..."}` or
//! `{"id":"...","task":"relevance","question":"...","answer":"..."}`. The program answers one line
//! per request, in any order: `{"id":"...","verdict":true|false,"grade":0|1|2}` (`grade` optional:
//! 2 for true, 0 for false). Writing and reading run concurrently, so large batches cannot
//! deadlock. A grade that contradicts the verdict (0 with true, 2 with false), an unknown or
//! repeated id, a malformed line, a missing answer, a non-zero exit or the timeout is an error that
//! names the request.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::error::{Error, Result};
use crate::judge::{Task, Verdict};
use crate::subprocess::{LineProcess, Next};

/// A judge run as a child process.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandJudge {
    pub command: Vec<String>,
    pub timeout: Duration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    id: String,
    verdict: bool,
    grade: Option<u8>,
}

fn request_line(id: usize, task: &Task) -> String {
    let value = match task {
        Task::Support { claim, context } => {
            json!({"id": id.to_string(), "task": "support", "claim": claim, "context": context})
        }
        Task::Relevance { question, answer } => {
            json!({"id": id.to_string(), "task": "relevance", "question": question, "answer": answer})
        }
    };
    format!("{value}\n")
}

impl CommandJudge {
    fn error(&self, name: &str, message: String) -> Error {
        Error::Judge {
            judge: name.to_string(),
            message: format!("`{}`: {message}", self.command.join(" ")),
        }
    }

    /// Judges every task (in order) with one run of the program.
    pub fn judge_all(&self, name: &str, tasks: &[Task]) -> Result<Vec<Verdict>> {
        if tasks.is_empty() {
            return Ok(Vec::new());
        }
        let requests: Vec<String> = tasks
            .iter()
            .enumerate()
            .map(|(id, task)| request_line(id, task))
            .collect();
        let process = LineProcess::start(&self.command, None, requests, self.timeout)
            .map_err(|e| self.error(name, format!("cannot start: {e}")))?;
        let verdicts = match self.collect(name, tasks, &process) {
            Ok(verdicts) => verdicts,
            Err(error) => {
                process.kill();
                return Err(error);
            }
        };
        match process.wait() {
            Ok(Some(status)) if status.success() => Ok(verdicts),
            Ok(Some(status)) => {
                Err(self.error(name, format!("exited with {status}: expected exit code 0")))
            }
            Ok(None) => Err(self.error(
                name,
                format!("did not exit within {:?} after answering", self.timeout),
            )),
            Err(e) => Err(self.error(name, format!("cannot wait for it: {e}"))),
        }
    }

    fn collect(&self, name: &str, tasks: &[Task], process: &LineProcess) -> Result<Vec<Verdict>> {
        let mut verdicts: Vec<Option<Verdict>> = vec![None; tasks.len()];
        let mut answered = 0;
        let mut line_number = 0u64;
        // Read to the end of the output: a stray line after the last answer is an error too.
        loop {
            let line = match process.next() {
                Next::Line(line) => line,
                Next::ReadFailed(e) => {
                    return Err(self.error(name, format!("cannot read its output: {e}")));
                }
                Next::TimedOut => {
                    return Err(self.error(
                        name,
                        format!(
                            "timed out after {:?} with {} of {} requests unanswered",
                            self.timeout,
                            tasks.len() - answered,
                            tasks.len()
                        ),
                    ));
                }
                Next::End if answered == tasks.len() => break,
                Next::End => {
                    let missing = verdicts.iter().position(Option::is_none).unwrap_or(0);
                    return Err(self.error(
                        name,
                        format!(
                            "closed its output without answering request {missing} ({})",
                            tasks[missing].summary()
                        ),
                    ));
                }
            };
            line_number += 1;
            if line.trim().is_empty() {
                continue;
            }
            let reply: Reply = serde_json::from_str(&line).map_err(|e| {
                self.error(name, format!("output line {line_number}: {e}: expected {{\"id\", \"verdict\", \"grade\"?}}"))
            })?;
            let index = reply
                .id
                .parse::<usize>()
                .ok()
                .filter(|&i| i < tasks.len())
                .ok_or_else(|| {
                    self.error(
                        name,
                        format!(
                            "output line {line_number}: unknown request id `{}`",
                            reply.id
                        ),
                    )
                })?;
            let grade = match (reply.verdict, reply.grade) {
                (true, None) => 2,
                (false, None) => 0,
                (true, Some(0)) | (false, Some(2)) | (_, Some(3..)) => {
                    return Err(self.error(
                        name,
                        format!(
                            "output line {line_number}: request {index} ({}): grade {:?} contradicts verdict {}",
                            tasks[index].summary(),
                            reply.grade,
                            reply.verdict
                        ),
                    ));
                }
                (_, Some(grade)) => grade,
            };
            if verdicts[index]
                .replace(Verdict {
                    positive: reply.verdict,
                    grade,
                    score: None,
                })
                .is_some()
            {
                return Err(self.error(
                    name,
                    format!("output line {line_number}: request {index} answered twice"),
                ));
            }
            answered += 1;
        }
        Ok(verdicts
            .into_iter()
            .map(|v| v.expect("every request answered"))
            .collect())
    }
}
