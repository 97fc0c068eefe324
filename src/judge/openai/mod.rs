//! The `openai` judge: any OpenAI-compatible `/chat/completions` endpoint.
//!
//! # Contract
//!
//! The contract is stable and versioned by [`PROMPT_VERSION`], so proxies and test doubles can be
//! put in front of the judge:
//!
//! - Each call is `POST {base_url}/chat/completions` with the JSON body
//!   `{"model": "<model>", "temperature": 0, "messages": [{"role":"system",...},{"role":"user",...}]}`
//!   and `Authorization: Bearer <key>` when `api_key_env` names an environment variable (the key is
//!   never printed or stored; a named but unset variable is an error naming the variable).
//! - All claims of one answer are judged in ONE call (RAGAS style): consecutive support tasks that
//!   share the same context form one call. The last line of the user message is one JSON object of
//!   the inputs, `{"task":"support","claims":["...","..."],"context":"..."}`, and the reply content
//!   must be one JSON object with one entry per claim,
//!   `{"verdicts":[{"index":0,"supported":true,"grade":2},...]}`, where `grade` is 0 unsupported,
//!   1 partially, 2 fully supported (optional: 2 when supported, 0 when not).
//! - A relevance task is one call whose user message ends with
//!   `{"task":"relevance","question":"...","answer":"..."}`; the reply content is `{"relevant":true}`.
//! - The reply content may be wrapped in a Markdown code fence (` ```json ... ``` `). Anything else
//!   is unparseable: unknown fields, a missing, repeated or out-of-range index, a grade above 2 or
//!   contradicting `supported` (0 with true, 2 with false). An unparseable reply is retried, then
//!   it is an error naming the request.
//!
//! # Running the calls
//!
//! Calls go through `crate::http::send_all`: `concurrency` worker threads, a `timeout`
//! per HTTP request, 429, 5xx, timeouts, connection errors and unparseable replies retried up to
//! `max_retries` times with exponential backoff and jitter or after the `Retry-After` (seconds or
//! an HTTP date) the server asks for; other HTTP statuses (400, 401, 404, ...) fail at once.
//! Claim decomposition (`claims: llm`) and graded relevance (`ragate holes --judge`) use the
//! same plumbing; their contracts are in [`crate::judge::decompose`] and [`crate::judge::grade`]. Every HTTP request,
//! retries included, counts against `max_calls`, a budget for the whole run (shared by clones of
//! the judge): a run whose calls cannot fit in what is left fails before any call, and a run that
//! would exceed the budget through retries fails when it would; a failed run never returns partial
//! verdicts. Calls and `usage` tokens are summed in [`OpenAiUsage`]. Verdicts are returned in task
//! order.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::error::{Error, Result};
use crate::http::{self, Failure, Request, RetryPolicy, UsageCounters};
use crate::judge::backend::{JudgeBackend, JudgeKind, JudgeUsage};
use crate::judge::cost::Requests;
use crate::judge::decompose;
use crate::judge::draft::{Draft, DraftTask};
use crate::judge::events::Events;
use crate::judge::grade::{self, GradeTask, GradeVerdict};
use crate::judge::task::{ClaimsTask, Task, Verdict};

mod draft;
mod estimate;
mod settings;
pub use settings::{OpenAi, OpenAiSpec, RawOpenAiJudge};

/// The version of the prompts and of the reply contract; part of `describe()` and so of the
/// cache key and the provenance.
pub const PROMPT_VERSION: &str = "support-relevance-1";

const SYSTEM_PROMPT: &str = "You are a strict, careful evaluation judge for a retrieval-augmented \
generation system. You reply with exactly one JSON object and nothing else: no prose, no \
explanation.";

const SUPPORT_INSTRUCTIONS: &str = "Judge each claim ONLY against the context below, never \
against outside knowledge. For each claim give `supported` (true when the context states or \
directly implies it) and `grade`: 2 = fully supported, 1 = partially supported (some of it is in \
the context, some is not), 0 = not supported or contradicted. `grade` 2 requires `supported` \
true; `grade` 0 requires `supported` false. Reply with one JSON object of the form \
{\"verdicts\":[{\"index\":0,\"supported\":true,\"grade\":2}]} with exactly one entry per claim, \
`index` being the claim's 0-based position in `claims`. The inputs are the JSON object on the \
last line.";

const RELEVANCE_INSTRUCTIONS: &str = "Decide whether the answer addresses the question (it \
responds to what was asked, whether or not it is correct). Reply with one JSON object of the \
form {\"relevant\":true} or {\"relevant\":false}. The inputs are the JSON object on the last \
line.";

/// Calls and tokens an [`OpenAiJudge`] (and its clones) used so far in this run.
pub type OpenAiUsage = JudgeUsage;

/// A judge backed by an OpenAI-compatible chat completions endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiJudge {
    /// The validated settings: endpoint, model, key, limits.
    pub spec: OpenAiSpec,
    /// The first backoff; doubles with each retry.
    pub backoff_base: Duration,
    counters: Arc<UsageCounters>,
}

/// One HTTP call: a run of support tasks sharing a context, or one relevance task.
struct Call {
    /// The index of the first task of the call.
    first: usize,
    /// How many tasks it answers.
    len: usize,
    body: String,
    what: String,
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SupportReply {
    verdicts: Vec<SupportEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SupportEntry {
    index: usize,
    supported: bool,
    grade: Option<u8>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RelevanceReply {
    relevant: bool,
}

impl OpenAiJudge {
    /// A judge with the defaults of the config: concurrency 8, timeout 60 s, 5 retries, a budget
    /// of 20,000 calls, backoff from 500 ms.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self::from_spec(&OpenAiSpec::new(base_url, model))
    }

    /// The client of a validated spec, with fresh usage counters (shared by its clones).
    pub fn from_spec(spec: &OpenAiSpec) -> Self {
        OpenAiJudge {
            spec: spec.clone(),
            backoff_base: Duration::from_millis(500),
            counters: Arc::default(),
        }
    }

    /// What identifies the judge's verdicts, for provenance: `base_url` and `model` as written
    /// in the config (see [`crate::http::endpoint::HttpEndpoint::identity`]).
    pub fn describe(&self) -> String {
        self.spec
            .endpoint
            .identity("openai", &format!("prompt {PROMPT_VERSION}"))
    }

    /// [`Self::describe`] with `${VAR}` values expanded, for cache keys only (never shown).
    pub(crate) fn expanded_describe(&self) -> String {
        self.spec
            .endpoint
            .expanded_identity("openai", &format!("prompt {PROMPT_VERSION}"))
    }

    /// Calls and tokens used so far by this judge and its clones.
    pub fn usage(&self) -> OpenAiUsage {
        OpenAiUsage {
            calls: self.counters.calls.load(Ordering::Relaxed),
            retries: self.counters.retries.load(Ordering::Relaxed),
            prompt_tokens: self.counters.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.counters.completion_tokens.load(Ordering::Relaxed),
        }
    }

    fn error(&self, name: &str, message: String) -> Error {
        Error::judge(name, format!("{}: {message}", self.shown_describe()))
    }

    fn endpoint(&self) -> String {
        self.spec.endpoint.url("/chat/completions")
    }

    /// The endpoint as messages name it (an API root from the environment is not printed).
    fn shown_endpoint(&self) -> String {
        self.spec.endpoint.shown_url("/chat/completions")
    }

    /// [`Self::describe`] as messages print it (see [`Self::shown_endpoint`]).
    fn shown_describe(&self) -> String {
        self.spec
            .endpoint
            .shown_identity("openai", &format!("prompt {PROMPT_VERSION}"))
    }

    /// The calls for `tasks`: consecutive support tasks with one context form one call.
    fn plan(&self, tasks: &[Task]) -> Vec<Call> {
        let mut calls = Vec::new();
        let mut i = 0;
        while i < tasks.len() {
            match &tasks[i] {
                Task::Support { context, .. } => {
                    let mut claims = Vec::new();
                    let first = i;
                    while let Some(Task::Support { claim, context: c }) = tasks.get(i) {
                        if c != context {
                            break;
                        }
                        claims.push(claim.as_str());
                        i += 1;
                    }
                    let inputs =
                        json!({"task": "support", "claims": claims, "context": &**context});
                    let what = if claims.len() == 1 {
                        tasks[first].summary()
                    } else {
                        format!(
                            "{} and {} more claims",
                            tasks[first].summary(),
                            claims.len() - 1
                        )
                    };
                    calls.push(Call {
                        first,
                        len: claims.len(),
                        body: self.body(SUPPORT_INSTRUCTIONS, &inputs),
                        what,
                    });
                }
                Task::Relevance { question, answer } => {
                    let inputs =
                        json!({"task": "relevance", "question": question, "answer": answer});
                    calls.push(Call {
                        first: i,
                        len: 1,
                        body: self.body(RELEVANCE_INSTRUCTIONS, &inputs),
                        what: tasks[i].summary(),
                    });
                    i += 1;
                }
            }
        }
        calls
    }

    pub(crate) fn body(&self, instructions: &str, inputs: &serde_json::Value) -> String {
        json!({
            "model": self.spec.endpoint.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": format!("{instructions}\n{inputs}")},
            ],
        })
        .to_string()
    }

    /// Reserves one HTTP request from the budget.
    fn reserve(&self) -> std::result::Result<(), String> {
        let used = self.counters.calls.fetch_add(1, Ordering::Relaxed);
        if used >= self.spec.max_calls {
            self.counters.calls.fetch_sub(1, Ordering::Relaxed);
            return Err(format!(
                "the call budget (max_calls {}) is spent: the run needs more calls",
                self.spec.max_calls
            ));
        }
        Ok(())
    }

    /// How requests are sent and retried.
    fn policy(&self) -> RetryPolicy {
        RetryPolicy::of(&self.spec.endpoint, self.backoff_base)
    }

    /// Sends chat requests within the budget, counting calls, retries and tokens, and parses
    /// each reply's content with `parse(request index, content)`; replies in request order.
    pub(crate) fn chat_all<T, P>(
        &self,
        name: &str,
        requests: &[Request],
        parse: P,
    ) -> Result<Vec<T>>
    where
        T: Send,
        P: Fn(usize, &str) -> std::result::Result<T, String> + Sync,
    {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let authorization = http::authorization(self.spec.endpoint.api_key_env.as_deref())
            .map_err(|m| self.error(name, m))?;
        let used = self.counters.calls.load(Ordering::Relaxed);
        let left = self.spec.max_calls.saturating_sub(used);
        if requests.len() as u64 > left {
            return Err(self.error(
                name,
                format!(
                    "the run needs at least {} calls but the budget has {left} left (max_calls {}, {used} used)",
                    requests.len(),
                    self.spec.max_calls
                ),
            ));
        }
        let before_attempt = |attempt: u32| -> std::result::Result<(), String> {
            self.reserve()?;
            if attempt > 0 {
                self.counters.retries.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        };
        let parse_reply =
            |index: usize, text: &str, _took: Duration| -> std::result::Result<T, Failure> {
                let completion: Completion = serde_json::from_str(text).map_err(|e| {
                    Failure::unparseable(format!("{e}: expected a chat completion object"))
                })?;
                if let Some(usage) = &completion.usage {
                    let counters = &self.counters;
                    let prompt = usage.prompt_tokens.unwrap_or(0);
                    UsageCounters::add_tokens(&counters.prompt_tokens, prompt);
                    let completion = usage.completion_tokens.unwrap_or(0);
                    UsageCounters::add_tokens(&counters.completion_tokens, completion);
                }
                let content = completion
                    .choices
                    .first()
                    .and_then(|c| c.message.content.as_deref())
                    .ok_or_else(|| Failure::unparseable("no choices[0].message.content"))?;
                parse(index, content).map_err(Failure::unparseable)
            };
        http::send_all(
            &self.policy(),
            &self.endpoint(),
            &self.shown_endpoint(),
            authorization.as_deref(),
            requests,
            before_attempt,
            parse_reply,
        )
        .map_err(|error| self.error(name, error.to_string()).caused_by(error))
    }

    /// Judges every task, in order, with bounded concurrency.
    pub fn judge_all(&self, name: &str, tasks: &[Task]) -> Result<Vec<Verdict>> {
        let calls = self.plan(tasks);
        let requests: Vec<Request> = calls
            .iter()
            .map(|call| Request {
                body: call.body.clone(),
                what: call.what.clone(),
            })
            .collect();
        let batches = self.chat_all(name, &requests, |index, content| {
            let call = &calls[index];
            parse_content(content, &tasks[call.first..call.first + call.len])
        })?;
        Ok(batches.into_iter().flatten().collect())
    }
}

impl OpenAiJudge {
    fn claims_body(&self, task: &ClaimsTask) -> String {
        self.body(decompose::CLAIMS_INSTRUCTIONS, &decompose::inputs(task))
    }

    /// Decomposes every answer, one call each, in order.
    pub fn decompose_all(&self, name: &str, tasks: &[ClaimsTask]) -> Result<Vec<Vec<String>>> {
        let requests: Vec<Request> = tasks
            .iter()
            .map(|task| Request {
                body: self.claims_body(task),
                what: task.summary(),
            })
            .collect();
        self.chat_all(name, &requests, |_, content| {
            decompose::parse_claims(content)
        })
    }
}

impl OpenAiJudge {
    /// Proposes a relevance grade for every (query, document), one call each, in order.
    pub fn grade_all(&self, name: &str, tasks: &[GradeTask]) -> Result<Vec<GradeVerdict>> {
        let requests: Vec<Request> = tasks
            .iter()
            .map(|task| Request {
                body: self.body(grade::GRADE_INSTRUCTIONS, &grade::inputs(task)),
                what: task.summary(),
            })
            .collect();
        self.chat_all(name, &requests, |_, content| grade::parse_grade(content))
    }
}

impl JudgeBackend for OpenAiJudge {
    fn kind(&self) -> &'static str {
        OpenAi::NAME
    }

    fn describe(&self) -> String {
        OpenAiJudge::describe(self)
    }

    fn cache_identity(&self) -> String {
        self.expanded_describe()
    }

    fn judge_all(&self, name: &str, tasks: &[Task], _events: &Events) -> Result<Vec<Verdict>> {
        OpenAiJudge::judge_all(self, name, tasks)
    }

    fn decompose_all(
        &self,
        name: &str,
        tasks: &[ClaimsTask],
        _events: &Events,
    ) -> Result<Vec<Vec<String>>> {
        OpenAiJudge::decompose_all(self, name, tasks)
    }

    fn grade_all(
        &self,
        name: &str,
        tasks: &[GradeTask],
        _events: &Events,
    ) -> Result<Vec<GradeVerdict>> {
        OpenAiJudge::grade_all(self, name, tasks)
    }

    fn draft_all(&self, name: &str, tasks: &[DraftTask], _events: &Events) -> Result<Vec<Draft>> {
        OpenAiJudge::draft_all(self, name, tasks)
    }

    fn usage(&self) -> Option<JudgeUsage> {
        Some(OpenAiJudge::usage(self))
    }

    fn requests(&self, tasks: &[Task]) -> Option<Requests> {
        Some(OpenAiJudge::requests(self, tasks))
    }

    fn decompose_requests(&self, tasks: &[ClaimsTask]) -> Option<Requests> {
        Some(OpenAiJudge::decompose_requests(self, tasks))
    }

    fn draft_requests(&self, tasks: &[DraftTask]) -> Option<Requests> {
        Some(OpenAiJudge::draft_requests(self, tasks))
    }
}

/// Parses the reply content for the tasks of one call (all support, or one relevance task).
fn parse_content(content: &str, tasks: &[Task]) -> std::result::Result<Vec<Verdict>, String> {
    let text = http::unfence(content);
    match tasks.first() {
        Some(Task::Relevance { .. }) => {
            let reply: RelevanceReply = serde_json::from_str(text)
                .map_err(|e| format!("{e}: expected {{\"relevant\":true|false}}"))?;
            Ok(vec![Verdict {
                asserts_nothing: false,
                positive: reply.relevant,
                grade: if reply.relevant { 2 } else { 0 },
                score: None,
                reason: None,
            }])
        }
        _ => {
            let reply: SupportReply = serde_json::from_str(text).map_err(|e| {
                format!("{e}: expected {{\"verdicts\":[{{\"index\",\"supported\",\"grade\"}}]}}")
            })?;
            let mut verdicts: Vec<Option<Verdict>> = vec![None; tasks.len()];
            for entry in reply.verdicts {
                let slot = verdicts.get_mut(entry.index).ok_or_else(|| {
                    format!(
                        "verdict index {} is out of range for {} claims",
                        entry.index,
                        tasks.len()
                    )
                })?;
                let grade = match (entry.supported, entry.grade) {
                    (true, None) => 2,
                    (false, None) => 0,
                    (_, Some(grade @ 3..)) => {
                        return Err(format!(
                            "claim {}: grade {grade}: expected 0, 1 or 2",
                            entry.index
                        ));
                    }
                    (true, Some(grade @ 0)) | (false, Some(grade @ 2)) => {
                        return Err(format!(
                            "claim {}: grade {grade} contradicts supported {}",
                            entry.index, entry.supported
                        ));
                    }
                    (_, Some(grade)) => grade,
                };
                let verdict = Verdict {
                    asserts_nothing: false,
                    positive: entry.supported,
                    grade,
                    score: None,
                    reason: None,
                };
                if slot.replace(verdict).is_some() {
                    return Err(format!("claim {} has two verdicts", entry.index));
                }
            }
            verdicts
                .iter()
                .position(Option::is_none)
                .map_or(Ok(()), |i| Err(format!("claim {i} has no verdict")))?;
            Ok(verdicts.into_iter().flatten().collect())
        }
    }
}

#[cfg(test)]
mod tests;
