//! The `command` judge: an external program that speaks JSON lines.
//!
//! ragate starts the program once per run (an argv list, never a shell) and writes one request a
//! line to its stdin: `{"id":"<opaque>","task":"support","claim":"...","context":"..."}` or
//! `{"id":"...","task":"relevance","question":"...","answer":"..."}`. The program answers one line
//! per request, in any order: `{"id":"...","verdict":true|false,"grade":0|1|2}` (`grade` optional:
//! 2 for true, 0 for false). Writing and reading run concurrently, so large batches cannot
//! deadlock. A grade that contradicts the verdict (0 with true, 2 with false), an unknown or
//! repeated id, a malformed line, a missing answer, a non-zero exit or the timeout is an error that
//! names the request. Claim decomposition (`task: claims`) and graded relevance (`task: grade`)
//! have contracts of their own, in [`crate::judge::decompose`] and [`crate::judge::grade`].

use std::time::Duration;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::json;

use crate::error::{Error, Result, shorten};
use crate::judge::backend::{JudgeAt, JudgeBackend, JudgeKind, JudgeSpec, KindSettings};
use crate::judge::cost::Requests;
use crate::judge::decompose;
use crate::judge::draft::{Draft, DraftTask};
use crate::judge::events::{Events, JudgeEvent};
use crate::judge::grade::{self, GradeTask, GradeVerdict};
use crate::judge::task::{ClaimsTask, Task, Verdict};
use crate::settings::yaml;
use crate::subprocess::{LineProcess, Next, describe_exit};

mod draft;

/// `kind: command`, an external program speaking JSON lines.
pub struct Command;

/// `kind: command` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping such as `{ kind: command, command: [program, args...] }`")]
pub struct RawCommandJudge {
    /// The `kind` key, read before this struct (listed so that it is an accepted key; never
    /// read back, hence the allowance).
    #[allow(dead_code)]
    #[serde(rename = "kind")]
    kind_key: IgnoredAny,
    command: Option<Vec<String>>,
    timeout_s: Option<u64>,
}

impl JudgeKind for Command {
    const NAME: &'static str = "command";
    const ARTICLE: &'static str = "a";
    type Raw = RawCommandJudge;

    /// A non-empty argv, a time limit (default 300 s) and the argv as written when it holds a
    /// `${VAR}`.
    fn validate(raw: &RawCommandJudge, at: &JudgeAt<'_>) -> Result<JudgeSpec> {
        let command = raw
            .command
            .clone()
            .filter(|c| !c.is_empty() && !c[0].is_empty())
            .ok_or_else(|| {
                at.error(
                    "",
                    "a command judge needs `command: [program, arg, ...]` (an argv list, no shell)",
                )
            })?;
        let timeout = at.keys.timeout(
            &format!("{}.timeout_s", at.key),
            raw.timeout_s.map(|s| s as f64),
            300.0,
        )?;
        let written_command = at
            .written
            .get("judges")
            .and_then(|judges| judges.get(at.name))
            .and_then(|judge| judge.get("command"))
            .and_then(yaml::Value::as_sequence)
            .filter(|argv| {
                argv.iter()
                    .any(|arg| arg.as_str().is_some_and(|a| a.contains("${")))
            })
            .map(|argv| argv.iter().map(yaml::scalar_text).collect());
        Ok(JudgeSpec::new(CommandSpec {
            command,
            written_command,
            timeout,
        }))
    }
}

/// `kind: command`: the judge program (an argv list, no shell) and its time limit per run.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSpec {
    /// The program and its arguments (run without a shell).
    pub command: Vec<String>,
    /// The argv as written in the config when an argument holds a `${VAR}`: what the judge's
    /// identity records (never an expanded value). None: written literally.
    pub written_command: Option<Vec<String>>,
    /// How long one run of the program may take.
    pub timeout: Duration,
}

impl KindSettings for CommandSpec {
    fn kind(&self) -> &'static str {
        Command::NAME
    }

    fn client(&self) -> Box<dyn JudgeBackend> {
        Box::new(CommandJudge {
            command: self.command.clone(),
            written_command: self.written_command.clone(),
            timeout: self.timeout,
        })
    }

    fn decomposes_claims(&self) -> bool {
        true
    }

    fn program(&self) -> Option<(&str, &str)> {
        let program = self.command.first()?;
        let written = self
            .written_command
            .as_ref()
            .and_then(|argv| argv.first())
            .unwrap_or(program);
        Some((program, written))
    }
}

impl JudgeBackend for CommandJudge {
    fn kind(&self) -> &'static str {
        Command::NAME
    }

    /// `command `ARGV``, with the argv as written.
    fn describe(&self) -> String {
        format!(
            "command `{}`",
            self.written_command
                .as_ref()
                .unwrap_or(&self.command)
                .join(" ")
        )
    }

    /// `command `ARGV``, with every `${VAR}` expanded.
    fn cache_identity(&self) -> String {
        format!("command `{}`", self.command.join(" "))
    }

    fn judge_all(&self, name: &str, tasks: &[Task], events: &Events) -> Result<Vec<Verdict>> {
        CommandJudge::judge_all(self, name, tasks, events)
    }

    fn decompose_all(
        &self,
        name: &str,
        tasks: &[ClaimsTask],
        events: &Events,
    ) -> Result<Vec<Vec<String>>> {
        CommandJudge::decompose_all(self, name, tasks, events)
    }

    fn grade_all(
        &self,
        name: &str,
        tasks: &[GradeTask],
        events: &Events,
    ) -> Result<Vec<GradeVerdict>> {
        CommandJudge::grade_all(self, name, tasks, events)
    }

    fn draft_all(&self, name: &str, tasks: &[DraftTask], events: &Events) -> Result<Vec<Draft>> {
        CommandJudge::draft_all(self, name, tasks, events)
    }

    /// One request line per draft; what the program costs it does not tell.
    fn draft_requests(&self, tasks: &[DraftTask]) -> Option<Requests> {
        Some(Requests {
            calls: tasks.len() as u64,
            tokens: None,
        })
    }

    /// One request line per task; what the program does with it (and costs) it does not tell.
    fn requests(&self, tasks: &[Task]) -> Option<Requests> {
        Some(Requests {
            calls: tasks.len() as u64,
            tokens: None,
        })
    }

    fn decompose_requests(&self, tasks: &[ClaimsTask]) -> Option<Requests> {
        Some(Requests {
            calls: tasks.len() as u64,
            tokens: None,
        })
    }
}

/// How tasks of one kind are sent and named: the inputs of a request line and the summary in
/// errors.
type TaskShape<K> = (fn(&K) -> serde_json::Value, fn(&K) -> String);

/// One JSON request line per task: its inputs and `"id"`, the task's index as a string.
fn request_lines<T>(tasks: &[T], inputs: impl Fn(&T) -> serde_json::Value) -> Vec<String> {
    tasks
        .iter()
        .enumerate()
        .map(|(id, task)| {
            let mut line = inputs(task);
            line["id"] = json!(id.to_string());
            format!("{line}\n")
        })
        .collect()
}

/// How long a program that closed its output early is given to exit, for its exit status.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Why reading the replies stopped early.
enum Stopped {
    /// The program closed its output with requests unanswered.
    Closed(String),
    /// Anything else (a bad line, the timeout): the program is killed.
    Failed(String),
}

/// A judge run as a child process.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandJudge {
    /// The program and its arguments (run without a shell).
    pub command: Vec<String>,
    /// The argv as written in the config, when it holds a `${VAR}` (for the identity).
    pub written_command: Option<Vec<String>>,
    /// How long one run of the program may take.
    pub timeout: Duration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    id: String,
    verdict: bool,
    grade: Option<u8>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
/// A `command` judge's reply to a claims request.
struct CommandClaimsReply {
    id: String,
    claims: Vec<String>,
}

/// A `command` judge's reply to a grade request.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandGradeReply {
    id: String,
    grade: u8,
    confidence: Option<f64>,
    rationale: Option<String>,
}

impl ReplyId for CommandGradeReply {
    fn id(&self) -> &str {
        &self.id
    }
}

impl ReplyId for CommandClaimsReply {
    fn id(&self) -> &str {
        &self.id
    }
}

fn request_line(id: usize, task: &Task) -> String {
    let value = match task {
        Task::Support { claim, context } => {
            json!({"id": id.to_string(), "task": "support", "claim": claim, "context": &**context})
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
        let shown = self.written_command.as_ref().unwrap_or(&self.command);
        Error::judge(name, format!("`{}`: {message}", shown.join(" ")))
    }

    /// Judges every task (in order) with one run of the program.
    pub fn judge_all(&self, name: &str, tasks: &[Task], events: &Events) -> Result<Vec<Verdict>> {
        let requests: Vec<String> = tasks
            .iter()
            .enumerate()
            .map(|(id, task)| request_line(id, task))
            .collect();
        let summary = |index: usize| tasks[index].summary();
        self.exchange(
            name,
            events,
            requests,
            &summary,
            "{\"id\", \"verdict\", \"grade\"?}",
            |index, reply: Reply, line_number| verdict(reply, index, line_number, &summary(index)),
        )
    }

    /// [`Self::exchange`] for tasks of one kind: each task's request line from `inputs`, each
    /// reply turned into a `T` by `check`, whose error is prefixed with the output line and the
    /// request it answers (`summary` of its task).
    pub(crate) fn exchange_tasks<K, R, T>(
        &self,
        name: &str,
        events: &Events,
        tasks: &[K],
        (inputs, summary): TaskShape<K>,
        expected: &str,
        check: impl Fn(R) -> std::result::Result<T, String>,
    ) -> Result<Vec<T>>
    where
        R: serde::de::DeserializeOwned + ReplyId,
    {
        let summary = |index: usize| summary(&tasks[index]);
        self.exchange(
            name,
            events,
            request_lines(tasks, inputs),
            &summary,
            expected,
            |index, reply: R, line_number| {
                check(reply).map_err(|e| {
                    format!(
                        "output line {line_number}: request {index} ({}): {e}",
                        summary(index)
                    )
                })
            },
        )
    }

    /// One run of the program: writes `requests` (one line each, ids 0..n), reads one reply of
    /// type `R` per request, in any order, and turns each into a `T` with `check(index, reply,
    /// output line)`. `summary(index)` describes a request for errors; `expected` the reply line.
    pub(crate) fn exchange<R, T, C>(
        &self,
        name: &str,
        events: &Events,
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
        let count = requests.len();
        let (events, judge) = (events.clone(), name.to_string());
        let stderr = move |line: &str| {
            events.emit(JudgeEvent::ChildStderr {
                judge: judge.clone(),
                line: line.to_string(),
            })
        };
        let process = LineProcess::start(&self.command, None, requests, self.timeout, stderr)
            .map_err(|e| self.error(name, format!("cannot start: {e}")))?;
        let stderr = process.stderr_tail();
        self.finish(name, count, summary, expected, &check, process)
            .map_err(|e| e.with_stderr(stderr.lines()))
    }

    /// Reads the replies of the started `process` (see [`CommandJudge::exchange`]) and waits for
    /// it to exit.
    fn finish<R, T>(
        &self,
        name: &str,
        count: usize,
        summary: &dyn Fn(usize) -> String,
        expected: &str,
        check: &dyn Fn(usize, R, u64) -> std::result::Result<T, String>,
        process: LineProcess,
    ) -> Result<Vec<T>>
    where
        R: serde::de::DeserializeOwned + ReplyId,
    {
        let replies = match self.collect(count, summary, expected, check, &process) {
            Ok(replies) => replies,
            Err(Stopped::Closed(message)) => {
                // The program closed its output early: most likely it exited or was killed,
                // and its exit status says why.
                let ending = match process.exit_status_within(EXIT_GRACE) {
                    Some(status) => describe_exit(status),
                    None => format!(
                        "it was still running {} s later and was killed",
                        EXIT_GRACE.as_secs()
                    ),
                };
                return Err(self.error(name, format!("{message}: {ending}")));
            }
            Err(Stopped::Failed(message)) => {
                process.kill();
                return Err(self.error(name, message));
            }
        };
        match process.wait() {
            Ok(Some(status)) if status.success() => Ok(replies),
            Ok(Some(status)) => Err(self.error(
                name,
                format!("{}: expected exit code 0", describe_exit(status)),
            )),
            Ok(None) => Err(self.error(
                name,
                format!("did not exit within {:?} after answering", self.timeout),
            )),
            Err(e) => Err(self.error(name, format!("cannot wait for it: {e}"))),
        }
    }

    fn collect<R, T>(
        &self,
        count: usize,
        summary: &dyn Fn(usize) -> String,
        expected: &str,
        check: &dyn Fn(usize, R, u64) -> std::result::Result<T, String>,
        process: &LineProcess,
    ) -> std::result::Result<Vec<T>, Stopped>
    where
        R: serde::de::DeserializeOwned + ReplyId,
    {
        let mut replies: Vec<Option<T>> = (0..count).map(|_| None).collect();
        let mut answered = 0;
        let mut line_number = 0u64;
        // Read to the end of the output: a stray line after the last answer is an error too.
        loop {
            let line = match process.next() {
                Next::Line(line) => line,
                Next::ReadFailed(e) => {
                    return Err(Stopped::Failed(format!("cannot read its output: {e}")));
                }
                Next::TimedOut => {
                    return Err(Stopped::Failed(format!(
                        "timed out after {:?} with {} of {count} requests unanswered",
                        self.timeout,
                        count - answered,
                    )));
                }
                Next::End if answered == count => break,
                Next::End => {
                    let missing = replies.iter().position(Option::is_none).unwrap_or(0);
                    return Err(Stopped::Closed(format!(
                        "closed its output without answering request {missing} ({})",
                        summary(missing)
                    )));
                }
            };
            line_number += 1;
            if line.trim().is_empty() {
                continue;
            }
            let reply: R = serde_json::from_str(&line).map_err(|e| {
                Stopped::Failed(format!(
                    "output line {line_number}: {e}: expected {expected} (the line: `{}`)",
                    shorten(&line)
                ))
            })?;
            let index = reply
                .id()
                .parse::<usize>()
                .ok()
                .filter(|&i| i < count)
                .ok_or_else(|| {
                    Stopped::Failed(format!(
                        "output line {line_number}: unknown request id `{}`",
                        shorten(reply.id())
                    ))
                })?;
            if replies[index].is_some() {
                return Err(Stopped::Failed(format!(
                    "output line {line_number}: request {index} answered twice"
                )));
            }
            replies[index] = Some(check(index, reply, line_number).map_err(Stopped::Failed)?);
            answered += 1;
        }
        Ok(replies
            .into_iter()
            .map(|r| r.expect("every request answered"))
            .collect())
    }
}

impl CommandJudge {
    /// Decomposes every answer with one run of the program, in order.
    pub fn decompose_all(
        &self,
        name: &str,
        tasks: &[ClaimsTask],
        events: &Events,
    ) -> Result<Vec<Vec<String>>> {
        self.exchange_tasks(
            name,
            events,
            tasks,
            (decompose::inputs, ClaimsTask::summary),
            "{\"id\", \"claims\": [\"...\"]}",
            |reply: CommandClaimsReply| decompose::checked(reply.claims),
        )
    }
}

impl CommandJudge {
    /// Proposes a relevance grade for every (query, document) with one run of the program, in
    /// order.
    pub fn grade_all(
        &self,
        name: &str,
        tasks: &[GradeTask],
        events: &Events,
    ) -> Result<Vec<GradeVerdict>> {
        self.exchange_tasks(
            name,
            events,
            tasks,
            (grade::inputs, GradeTask::summary),
            "{\"id\", \"grade\": 0-3, \"confidence\"?, \"rationale\"?}",
            |reply: CommandGradeReply| {
                GradeVerdict {
                    grade: reply.grade,
                    score: reply.confidence,
                    rationale: reply.rationale,
                }
                .checked()
            },
        )
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
        (_, Some(grade @ 3..)) => {
            return Err(format!(
                "output line {line_number}: request {index} ({summary}): grade {grade}: expected 0, 1 or 2"
            ));
        }
        (true, Some(grade @ 0)) | (false, Some(grade @ 2)) => {
            return Err(format!(
                "output line {line_number}: request {index} ({summary}): grade {grade} contradicts verdict {}",
                reply.verdict
            ));
        }
        (_, Some(grade)) => grade,
    };
    Ok(Verdict {
        asserts_nothing: false,
        positive: reply.verdict,
        grade,
        score: None,
        reason: None,
    })
}
