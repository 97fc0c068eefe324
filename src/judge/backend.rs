//! What a judge kind is: the [`JudgeKind`] trait each kind implements once, in its own module
//! (its config keys, their validation into settings), the validated settings a kind hands the
//! config ([`KindSettings`], held as a [`JudgeSpec`]) and the client those settings build
//! ([`JudgeBackend`]). The kinds are listed in the registry, `judge::kinds`, nowhere else.

use std::any::Any;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::judge::cost::{CostHints, Requests};
use crate::judge::draft::{Draft, DraftTask};
use crate::judge::events::Events;
use crate::judge::grade::{GradeTask, GradeVerdict};
use crate::judge::task::{ClaimsTask, Task, Verdict};
use crate::settings::keys::Keys;
use crate::settings::yaml;

/// A kind of judge (`kind: lexical`, `openai`, ...): how the config writes one and what it
/// validates into. Implemented once per kind, by a marker type in the kind's module, and listed
/// once in the registry, `judge::kinds`.
pub trait JudgeKind: 'static {
    /// `kind:` as written in the config.
    const NAME: &'static str;
    /// The article messages put before the kind ("a `lexical` judge", "an `openai` judge").
    const ARTICLE: &'static str;
    /// A judge of this kind as written: its keys (with `kind` itself), unknown keys rejected.
    type Raw: serde::de::DeserializeOwned + fmt::Debug + Send + Sync + 'static;

    /// The validated settings of `raw`, the judge at `at`.
    fn validate(raw: &Self::Raw, at: &JudgeAt<'_>) -> Result<JudgeSpec>;
}

/// Where a judge stands in the config being validated, for its errors and relative paths.
pub struct JudgeAt<'a> {
    /// Errors at a key of the config.
    pub keys: &'a Keys<'a>,
    /// The judge's name (`judges.NAME`).
    pub name: &'a str,
    /// `judges.NAME`, the prefix of the judge's keys.
    pub key: String,
    /// The config as written, before `${VAR}` expansion.
    pub written: &'a yaml::Value,
    /// The config's folder, against which relative paths resolve.
    pub base: &'a Path,
}

impl JudgeAt<'_> {
    /// An invalid value at `judges.NAME.field` (`field` empty: at `judges.NAME`).
    pub fn error(&self, field: &str, message: impl Into<String>) -> Error {
        match field {
            "" => self.keys.error(&self.key, message),
            field => self.keys.error(format!("{}.{field}", self.key), message),
        }
    }
}

/// How a judge as written is validated (its kind's [`JudgeKind::validate`] of its raw keys).
type Validate = dyn Fn(&JudgeAt<'_>) -> Result<JudgeSpec> + Send + Sync;

/// A judge as read from the config, before validation: the kind's raw keys.
#[derive(Clone)]
pub struct RawJudge {
    kind: &'static str,
    validate: Arc<Validate>,
}

impl RawJudge {
    /// A judge of kind `K` as written.
    pub fn of<K: JudgeKind>(raw: K::Raw) -> Self {
        RawJudge {
            kind: K::NAME,
            validate: Arc::new(move |at| K::validate(&raw, at)),
        }
    }

    /// Its validated settings (see [`JudgeKind::validate`]).
    pub fn validate(&self, at: &JudgeAt<'_>) -> Result<JudgeSpec> {
        (self.validate)(at)
    }
}

impl fmt::Debug for RawJudge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawJudge({})", self.kind)
    }
}

/// Comparison and downcasting of the judges' trait objects (implemented for every `PartialEq`
/// type).
pub trait DynEq: Any {
    /// `self`, to downcast.
    fn as_any(&self) -> &dyn Any;
    /// Whether `other` is of the same type and equal.
    fn equals(&self, other: &dyn Any) -> bool;
}

impl<T: Any + PartialEq> DynEq for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn equals(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>() == Some(self)
    }
}

/// The validated settings of a judge of one kind: what the config holds (no client).
pub trait KindSettings: DynEq + fmt::Debug + Send + Sync {
    /// The kind's name ([`JudgeKind::NAME`]).
    fn kind(&self) -> &'static str;
    /// A client of these settings, with fresh usage counters.
    fn client(&self) -> Box<dyn JudgeBackend>;
    /// The environment variable of the API key the judge sends, when it names one (checked
    /// before the pipeline runs).
    fn api_key_env(&self) -> Option<&str> {
        None
    }
    /// The OpenAI-compatible endpoint the judge calls, if any (probed before the pipeline runs).
    fn endpoint(&self) -> Option<&crate::http::endpoint::HttpEndpoint> {
        None
    }
    /// The program the judge runs, if any, and that program as written in the config (checked
    /// before the pipeline runs).
    fn program(&self) -> Option<(&str, &str)> {
        None
    }
    /// Whether the judge can decompose answers into claims (`claims: llm`).
    fn decomposes_claims(&self) -> bool {
        false
    }
    /// Whether the judge judges only whether contexts support claims (no relevance).
    fn judges_support_only(&self) -> bool {
        false
    }
    /// Its price per 1k tokens and per-call latency, when configured (a paid judge's).
    fn cost_hints(&self) -> CostHints {
        CostHints::default()
    }
}

/// A judge as configured and validated: the settings of its kind.
#[derive(Debug, Clone)]
pub struct JudgeSpec(Arc<dyn KindSettings>);

impl JudgeSpec {
    /// The spec of `settings`.
    pub fn new(settings: impl KindSettings) -> Self {
        JudgeSpec(Arc::new(settings))
    }

    /// The settings, when they are of kind type `T`.
    pub fn settings<T: KindSettings>(&self) -> Option<&T> {
        (*self.0).as_any().downcast_ref::<T>()
    }
}

impl std::ops::Deref for JudgeSpec {
    type Target = dyn KindSettings;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl PartialEq for JudgeSpec {
    fn eq(&self, other: &Self) -> bool {
        self.0.equals((*other.0).as_any())
    }
}

/// Calls and tokens a judge (and its clones) used so far in this run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct JudgeUsage {
    /// HTTP requests sent, retries included.
    pub calls: u64,
    /// Requests that were retries of an earlier failed one.
    pub retries: u64,
    /// Sum of `usage.prompt_tokens` over the replies.
    pub prompt_tokens: u64,
    /// Sum of `usage.completion_tokens` over the replies.
    pub completion_tokens: u64,
}

/// The client of a judge: what answers tasks. `name` is always the judge's name in the config,
/// for messages.
pub trait JudgeBackend: DynEq + fmt::Debug + Send + Sync {
    /// The kind's name ([`JudgeKind::NAME`]), part of cache keys.
    fn kind(&self) -> &'static str;
    /// What identifies the judge's verdicts, for provenance and cache keys.
    fn describe(&self) -> String;
    /// [`Self::describe`] with every `${VAR}` of the config expanded: what cache keys hash, so
    /// that verdicts of another model or host are never reused. Never shown or recorded.
    fn cache_identity(&self) -> String {
        self.describe()
    }
    /// Whether asking the judge is slow enough (an external judge) to announce how many tasks
    /// it is asked about.
    fn announces_asking(&self) -> bool {
        true
    }
    /// The verdicts on `tasks`, in task order; what the judge tells on the way goes to `events`.
    fn judge_all(&self, name: &str, tasks: &[Task], events: &Events) -> Result<Vec<Verdict>>;
    /// The claims of every answer, in order (`claims: llm`); an error for a kind that cannot
    /// decompose (the config refuses it first).
    fn decompose_all(
        &self,
        name: &str,
        _tasks: &[ClaimsTask],
        _events: &Events,
    ) -> Result<Vec<Vec<String>>> {
        Err(Error::judge(
            name,
            format!(
                "a {} judge cannot decompose answers into claims: expected an openai or command judge for `claims: llm`",
                self.kind()
            ),
        ))
    }
    /// The proposed relevance grade (0-3) of every (query, document), in order (`ragate holes
    /// --judge`); an error for a kind that cannot grade.
    fn grade_all(
        &self,
        name: &str,
        _tasks: &[GradeTask],
        _events: &Events,
    ) -> Result<Vec<GradeVerdict>> {
        Err(Error::judge(
            name,
            format!(
                "a {} judge cannot propose relevance grades: expected an openai or command judge",
                self.kind()
            ),
        ))
    }
    /// A drafted question and answer for every task, in order (`ragate synth --generator`); an
    /// error for a kind that cannot write.
    fn draft_all(&self, name: &str, _tasks: &[DraftTask], _events: &Events) -> Result<Vec<Draft>> {
        Err(Error::judge(
            name,
            format!(
                "a {} judge cannot draft questions: expected an openai or command judge as the generator",
                self.kind()
            ),
        ))
    }
    /// Calls and tokens used so far, for a judge that counts them.
    fn usage(&self) -> Option<JudgeUsage> {
        None
    }
    /// The requests [`Self::judge_all`] would send for `tasks`; None for a judge that runs in
    /// this process (`lexical`, `nli`), which makes no calls.
    fn requests(&self, _tasks: &[Task]) -> Option<Requests> {
        None
    }
    /// The requests [`Self::draft_all`] would send for `tasks` (see [`Self::requests`]); None for
    /// a kind that cannot draft.
    fn draft_requests(&self, _tasks: &[DraftTask]) -> Option<Requests> {
        None
    }
    /// The requests [`Self::decompose_all`] would send for `tasks` (see [`Self::requests`]).
    fn decompose_requests(&self, _tasks: &[ClaimsTask]) -> Option<Requests> {
        None
    }
}
