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

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

use crate::error::{Error, Result};
use crate::judge::{Task, Verdict};

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

/// A reply line's request id, for the generic reader.
pub(crate) trait ReplyId {
    fn id(&self) -> &str;
}

impl ReplyId for Reply {
    fn id(&self) -> &str {
        &self.id
    }
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
        let requests: Vec<String> = tasks
            .iter()
            .enumerate()
            .map(|(id, task)| request_line(id, task))
            .collect();
        let summary = |index: usize| tasks[index].summary();
        self.exchange(
            name,
            requests,
            &summary,
            "{\"id\", \"verdict\", \"grade\"?}",
            |index, reply: Reply, line_number| verdict(reply, index, line_number, &summary(index)),
        )
    }

    /// One run of the program: writes `requests` (one line each, ids 0..n), reads one reply of
    /// type `R` per request, in any order, and turns each into a `T` with `check(index, reply,
    /// output line)`. `summary(index)` describes a request for errors; `expected` the reply line.
    pub(crate) fn exchange<R, T, C>(
        &self,
        name: &str,
        requests: Vec<String>,
        summary: &dyn Fn(usize) -> String,
        expected: &str,
        check: C,
    ) -> Result<Vec<T>>
    where
        R: serde::de::DeserializeOwned + ReplyId,
        C: Fn(usize, R, u64) -> std::result::Result<T, String>,
    {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let (program, args) = self
            .command
            .split_first()
            .ok_or_else(|| self.error(name, "empty command".into()))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| self.error(name, format!("cannot start: {e}")))?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let count = requests.len();
        let writer = std::thread::spawn(move || {
            for line in &requests {
                if stdin.write_all(line.as_bytes()).is_err() {
                    break; // the program exited early; its exit status tells why
                }
            }
        });
        let (lines_tx, lines_rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + self.timeout;
        let result = self
            .collect(count, summary, expected, &check, &lines_rx, deadline)
            .map_err(|message| self.error(name, message));
        if result.is_err() {
            let _ = child.kill();
        }
        let _ = writer.join();
        let status = child
            .wait()
            .map_err(|e| self.error(name, format!("cannot wait for it: {e}")))?;
        let replies = result?;
        if !status.success() {
            return Err(self.error(name, format!("exited with {status}: expected exit code 0")));
        }
        Ok(replies)
    }

    fn collect<R, T>(
        &self,
        count: usize,
        summary: &dyn Fn(usize) -> String,
        expected: &str,
        check: &dyn Fn(usize, R, u64) -> std::result::Result<T, String>,
        lines: &mpsc::Receiver<std::io::Result<String>>,
        deadline: Instant,
    ) -> std::result::Result<Vec<T>, String>
    where
        R: serde::de::DeserializeOwned + ReplyId,
    {
        let mut replies: Vec<Option<T>> = (0..count).map(|_| None).collect();
        let mut answered = 0;
        let mut line_number = 0u64;
        // Read to the end of the output: a stray line after the last answer is an error too.
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            let line = match lines.recv_timeout(wait) {
                Ok(Ok(line)) => line,
                Ok(Err(e)) => return Err(format!("cannot read its output: {e}")),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "timed out after {:?} with {} of {count} requests unanswered",
                        self.timeout,
                        count - answered,
                    ));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) if answered == count => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let missing = replies.iter().position(Option::is_none).unwrap_or(0);
                    return Err(format!(
                        "closed its output without answering request {missing} ({})",
                        summary(missing)
                    ));
                }
            };
            line_number += 1;
            if line.trim().is_empty() {
                continue;
            }
            let reply: R = serde_json::from_str(&line)
                .map_err(|e| format!("output line {line_number}: {e}: expected {expected}"))?;
            let index = reply
                .id()
                .parse::<usize>()
                .ok()
                .filter(|&i| i < count)
                .ok_or_else(|| {
                    format!(
                        "output line {line_number}: unknown request id `{}`",
                        reply.id()
                    )
                })?;
            if replies[index].is_some() {
                return Err(format!(
                    "output line {line_number}: request {index} answered twice"
                ));
            }
            replies[index] = Some(check(index, reply, line_number)?);
            answered += 1;
        }
        Ok(replies
            .into_iter()
            .map(|r| r.expect("every request answered"))
            .collect())
    }
}

/// A verdict reply checked: a grade must not contradict the verdict.
fn verdict(
    reply: Reply,
    index: usize,
    line_number: u64,
    summary: &str,
) -> std::result::Result<Verdict, String> {
    let grade = match (reply.verdict, reply.grade) {
        (true, None) => 2,
        (false, None) => 0,
        (true, Some(0)) | (false, Some(2)) | (_, Some(3..)) => {
            return Err(format!(
                "output line {line_number}: request {index} ({summary}): grade {:?} contradicts verdict {}",
                reply.grade, reply.verdict
            ));
        }
        (_, Some(grade)) => grade,
    };
    Ok(Verdict {
        positive: reply.verdict,
        grade,
        score: None,
    })
}
