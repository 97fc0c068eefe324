//! Judges: verdicts on whether claims are supported by contexts and answers address questions.
//!
//! Each kind of judge is a module of its own, listed in the registry [`kinds`]; [`backend`]
//! says what a kind implements. [`Judge`] is a configured judge's client as the rest of ragate
//! uses it: through the cache, telling what it does as [`events`] (it never prints).

pub mod backend;
pub mod cache;
pub mod command;
pub mod cost;
pub mod decompose;
pub mod draft;
pub mod embeddings;
pub mod events;
pub mod grade;
pub mod kinds;
pub mod lexical;
pub mod lexical2;
pub mod lexical3;
pub mod nli;
pub mod openai;
pub mod stop_words;
pub mod task;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::Result;
use backend::{JudgeBackend, JudgeSpec, JudgeUsage};
use cache::{CacheKey, JudgeCache};
use draft::{DRAFT_PROMPT_VERSION, Draft, DraftTask};
use embeddings::{EmbeddingClient, EmbeddingsSpec};
use events::{Events, JudgeEvent};
use grade::{GRADE_PROMPT_VERSION, GradeTask, GradeVerdict};
pub use task::{ClaimsTask, Task, Verdict};

/// A configured judge's client; clones share it (and its usage counters).
#[derive(Debug, Clone)]
pub struct Judge {
    backend: Arc<dyn JudgeBackend>,
    events: Events,
}

impl PartialEq for Judge {
    /// Judges with the same settings are equal, whatever they used or tell.
    fn eq(&self, other: &Self) -> bool {
        self.backend.equals((*other.backend).as_any())
    }
}

/// The client of a judge spec, with fresh usage counters (shared by clones), telling nothing.
pub fn build(spec: &JudgeSpec) -> Judge {
    Judge {
        backend: Arc::from(spec.client()),
        events: Events::ignored(),
    }
}

/// The clients of a config's judges and embeddings endpoint. Built once for a run and cloned
/// into what judges, so that the usage (calls, tokens) of the whole run adds up in them.
#[derive(Debug, Clone)]
pub struct Clients {
    /// By name, as in the config.
    pub judges: BTreeMap<String, Judge>,
    /// The client of the embeddings endpoint, when one is configured.
    pub embeddings: Option<EmbeddingClient>,
}

impl Clients {
    /// The clients of `judges` (telling `events`) and of the `embeddings` endpoint.
    pub fn build(
        judges: &BTreeMap<String, JudgeSpec>,
        embeddings: Option<&EmbeddingsSpec>,
        events: &Events,
    ) -> Clients {
        Clients {
            judges: judges
                .iter()
                .map(|(name, spec)| (name.clone(), build(spec).reporting_to(events.clone())))
                .collect(),
            embeddings: embeddings.map(EmbeddingClient::from_spec),
        }
    }
}

impl cache::Cached for Vec<String> {
    /// Claims as a judge's reply gives them after `checked`: trimmed, none blank.
    fn check(&self) -> std::result::Result<(), String> {
        match self
            .iter()
            .position(|c| c.trim().is_empty() || c.trim() != c)
        {
            Some(i) => Err(format!("claim {i} is blank or not trimmed")),
            None => Ok(()),
        }
    }
}

impl cache::Cached for Verdict {
    /// A grade of 0, 1 or 2 that does not contradict `positive` (0 is never positive, 2 always),
    /// and a score in [0, 1] when there is one: what every judge gives.
    fn check(&self) -> std::result::Result<(), String> {
        match (self.positive, self.grade) {
            (_, 3..) => return Err(format!("grade {}: expected 0, 1 or 2", self.grade)),
            (true, 0) | (false, 2) => {
                return Err(format!(
                    "grade {} contradicts positive {}",
                    self.grade, self.positive
                ));
            }
            _ => {}
        }
        match self.score {
            Some(score) if !(0.0..=1.0).contains(&score) => {
                Err(format!("score {score}: expected a number in [0, 1]"))
            }
            _ => Ok(()),
        }
    }
}

impl cache::Cached for GradeVerdict {
    /// A proposed grade as a judge's reply must be ([`GradeVerdict::checked`]).
    fn check(&self) -> std::result::Result<(), String> {
        self.clone().checked().map(|_| ())
    }
}

impl cache::Cached for Draft {
    /// A draft as a generator's reply must be ([`Draft::checked`]).
    fn check(&self) -> std::result::Result<(), String> {
        match self.clone().checked() {
            Ok(checked) if checked == *self => Ok(()),
            Ok(_) => Err("question or answer not trimmed".to_string()),
            Err(e) => Err(e),
        }
    }
}

/// The tasks whose key the cache holds no `V` for (every task without a cache), looked up
/// read-only: what a plan counts as calls.
fn uncached<T: Clone, V: cache::Cached>(
    tasks: &[T],
    keys: Vec<CacheKey>,
    cache: Option<&JudgeCache>,
) -> Result<Vec<T>> {
    let mut missing = Vec::new();
    for (task, key) in tasks.iter().zip(keys) {
        let cached = match cache {
            Some(cache) => cache.peek::<V>(&key)?.is_some(),
            None => false,
        };
        if !cached {
            missing.push(task.clone());
        }
    }
    Ok(missing)
}

impl Judge {
    /// The judge `backend`, telling nothing.
    pub fn new(backend: impl JudgeBackend + 'static) -> Self {
        Judge {
            backend: Arc::new(backend),
            events: Events::ignored(),
        }
    }

    /// The same judge, telling `events` what it does.
    pub fn reporting_to(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    /// The client, when it is of type `T`.
    pub fn backend<T: JudgeBackend + 'static>(&self) -> Option<&T> {
        (*self.backend).as_any().downcast_ref::<T>()
    }

    /// What identifies the judge's verdicts, for provenance and cache keys.
    pub fn describe(&self) -> String {
        self.backend.describe()
    }

    /// The kind of judge, for cache keys.
    pub fn kind(&self) -> &'static str {
        self.backend.kind()
    }

    /// Calls and tokens used so far, for a judge that counts them (`openai`).
    pub fn usage(&self) -> Option<JudgeUsage> {
        self.backend.usage()
    }

    /// The cache key of one request: the judge kind, its description (with `extra`, e.g. a
    /// prompt version) and the inputs.
    fn cache_key(&self, extra: &str, inputs: &impl serde::Serialize) -> CacheKey {
        let inputs = serde_json::to_value(inputs).expect("tasks serialise");
        let version = format!("{}{extra}", self.backend.cache_identity());
        CacheKey::new(
            self.kind(),
            "",
            "",
            &version,
            &serde_json::Value::Null,
            &inputs,
        )
    }

    /// Judges every task, in order, answering from `cache` where it can and storing new verdicts
    /// there. Returns the verdicts and how many tasks went to the judge. `repeat` is which asking
    /// this is: from the second on, the verdicts are cached apart (the key adds ` repeat N`), so a
    /// judge is really asked again and each asking stays reproducible.
    pub fn judge_cached(
        &self,
        name: &str,
        tasks: &[Task],
        cache: Option<&JudgeCache>,
        repeat: usize,
    ) -> Result<(Vec<Verdict>, usize)> {
        if cache.is_none() {
            self.announce(name, tasks.len(), tasks.len());
            return Ok((self.judge_all(name, tasks)?, tasks.len()));
        }
        let keys = self.task_keys(tasks, repeat);
        let what = |i: usize| format!("judge `{name}`: {}", tasks[i].summary());
        cache::through(cache, &keys, what, |missing| {
            self.announce(name, missing.len(), tasks.len());
            let asked: Vec<Task> = missing.iter().map(|&i| tasks[i].clone()).collect();
            self.judge_all(name, &asked)
        })
    }

    /// Decomposes every answer into claims (`claims: llm`), in order, through the cache (the
    /// key adds the decomposition prompt version). Returns the claims and how many answers went
    /// to the judge. Only `openai` and `command` judges decompose.
    pub fn decompose_cached(
        &self,
        name: &str,
        tasks: &[ClaimsTask],
        cache: Option<&JudgeCache>,
    ) -> Result<(Vec<Vec<String>>, usize)> {
        let keys = self.claims_keys(tasks);
        let what = |i: usize| format!("judge `{name}`: {}", tasks[i].summary());
        cache::through(cache, &keys, what, |missing| {
            let asked: Vec<ClaimsTask> = missing.iter().map(|&i| tasks[i].clone()).collect();
            self.backend.decompose_all(name, &asked, &self.events)
        })
    }

    /// The judge's identity as recorded with its graded-relevance proposals: [`Self::describe`]
    /// and the graded-relevance prompt version.
    pub fn grade_identity(&self) -> String {
        format!("{} grade-prompt {GRADE_PROMPT_VERSION}", self.describe())
    }

    /// The generator's identity as recorded with every drafted query: [`Self::describe`] and the
    /// drafting prompt version.
    pub fn draft_identity(&self) -> String {
        format!("{} draft-prompt {DRAFT_PROMPT_VERSION}", self.describe())
    }

    /// What [`Self::draft_cached`] would do with `tasks`, asking nothing: the drafts the cache
    /// holds (looked up read-only, by the same keys) and the requests for the others (None: a
    /// kind that cannot draft).
    pub fn plan_drafts(
        &self,
        tasks: &[DraftTask],
        cache: Option<&JudgeCache>,
    ) -> Result<cost::Planned> {
        let missing = uncached::<_, Draft>(tasks, self.draft_keys(tasks), cache)?;
        Ok(cost::Planned {
            tasks: tasks.len(),
            cached: tasks.len() - missing.len(),
            requests: self.backend.draft_requests(&missing),
        })
    }

    /// The cache keys of drafts: the key adds the drafting prompt version.
    fn draft_keys(&self, tasks: &[DraftTask]) -> Vec<CacheKey> {
        let extra = format!(" draft {DRAFT_PROMPT_VERSION}");
        tasks.iter().map(|t| self.cache_key(&extra, t)).collect()
    }

    /// Drafts a question and its answer for every task, in order, through the cache (the key
    /// adds the drafting prompt version). Returns the drafts and how many went to the generator.
    /// Only `openai` and `command` judges draft.
    pub fn draft_cached(
        &self,
        name: &str,
        tasks: &[DraftTask],
        cache: Option<&JudgeCache>,
    ) -> Result<(Vec<Draft>, usize)> {
        let keys = self.draft_keys(tasks);
        let what = |i: usize| format!("generator `{name}`: {}", tasks[i].summary());
        cache::through(cache, &keys, what, |missing| {
            self.announce(name, missing.len(), tasks.len());
            let asked: Vec<DraftTask> = missing.iter().map(|&i| tasks[i].clone()).collect();
            self.backend.draft_all(name, &asked, &self.events)
        })
    }

    /// Proposes a relevance grade for every (query, document), in order, through the cache (the
    /// key adds the graded-relevance prompt version). Returns the verdicts and how many went to
    /// the judge. Only `openai` and `command` judges grade.
    pub fn grade_cached(
        &self,
        name: &str,
        tasks: &[GradeTask],
        cache: Option<&JudgeCache>,
    ) -> Result<(Vec<GradeVerdict>, usize)> {
        let extra = format!(" grade {GRADE_PROMPT_VERSION}");
        let keys: Vec<CacheKey> = tasks.iter().map(|t| self.cache_key(&extra, t)).collect();
        let what = |i: usize| format!("judge `{name}`: {}", tasks[i].summary());
        cache::through(cache, &keys, what, |missing| {
            self.announce(name, missing.len(), tasks.len());
            let asked: Vec<GradeTask> = missing.iter().map(|&i| tasks[i].clone()).collect();
            self.backend.grade_all(name, &asked, &self.events)
        })
    }

    /// The cache keys of `tasks` at asking `repeat`: from the second on, the key adds
    /// ` repeat N`.
    fn task_keys(&self, tasks: &[Task], repeat: usize) -> Vec<CacheKey> {
        let extra = match repeat {
            0 | 1 => String::new(),
            n => format!(" repeat {n}"),
        };
        tasks.iter().map(|t| self.cache_key(&extra, t)).collect()
    }

    /// The cache keys of decompositions: the key adds the decomposition prompt version.
    fn claims_keys(&self, tasks: &[ClaimsTask]) -> Vec<CacheKey> {
        let extra = format!(" claims {}", decompose::CLAIMS_PROMPT_VERSION);
        tasks.iter().map(|t| self.cache_key(&extra, t)).collect()
    }

    /// What [`Self::judge_cached`] would do with `tasks`, asking nothing: the tasks the cache
    /// answers (looked up read-only, by the same keys) and the requests for the others.
    pub fn plan_cached(
        &self,
        tasks: &[Task],
        cache: Option<&JudgeCache>,
        repeat: usize,
    ) -> Result<cost::Planned> {
        let missing = uncached::<_, Verdict>(tasks, self.task_keys(tasks, repeat), cache)?;
        Ok(cost::Planned {
            tasks: tasks.len(),
            cached: tasks.len() - missing.len(),
            requests: self.backend.requests(&missing),
        })
    }

    /// The claims the cache holds for each of `tasks` (None: the judge would be asked), looked
    /// up read-only by the keys of [`Self::decompose_cached`].
    pub fn cached_claims(
        &self,
        tasks: &[ClaimsTask],
        cache: Option<&JudgeCache>,
    ) -> Result<Vec<Option<Vec<String>>>> {
        let Some(cache) = cache else {
            return Ok(vec![None; tasks.len()]);
        };
        self.claims_keys(tasks)
            .iter()
            .map(|key| cache.peek::<Vec<String>>(key))
            .collect()
    }

    /// The requests [`Self::decompose_cached`] would send for the answers the cache does not
    /// hold (None: a judge that makes no calls).
    pub fn decompose_requests(&self, missing: &[ClaimsTask]) -> Option<cost::Requests> {
        self.backend.decompose_requests(missing)
    }

    /// Before a slow (external) judge is asked: how much of the work the cache did not answer,
    /// as an event.
    fn announce(&self, name: &str, asked: usize, total: usize) {
        if asked > 0 && self.backend.announces_asking() {
            self.events.emit(JudgeEvent::Asking {
                judge: name.to_string(),
                asked,
                total,
            });
        }
    }

    /// The judge's verdicts on `tasks`, in task order; `name` is the judge's config name, for
    /// messages.
    pub fn judge_all(&self, name: &str, tasks: &[Task]) -> Result<Vec<Verdict>> {
        self.backend.judge_all(name, tasks, &self.events)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::{EmbeddingsSpec, HttpEndpoint};
    use command::{CommandJudge, CommandSpec};
    use lexical::{LexicalJudge, LexicalSpec};
    use openai::{OpenAiJudge, OpenAiSpec};

    #[test]
    fn a_client_carries_every_setting_of_its_spec() {
        for version in [1, 2] {
            let lexical = build(&JudgeSpec::new(LexicalSpec {
                threshold: 0.7,
                stem: false,
                version,
            }));
            assert_eq!(
                lexical,
                Judge::new(LexicalJudge {
                    threshold: 0.7,
                    stem: false,
                    version,
                })
            );
        }
        let command = build(&JudgeSpec::new(CommandSpec {
            command: vec!["judge".into(), "-v".into()],
            written_command: None,
            timeout: Duration::from_secs(3),
        }));
        assert_eq!(
            command,
            Judge::new(CommandJudge {
                command: vec!["judge".into(), "-v".into()],
                written_command: None,
                timeout: Duration::from_secs(3),
            })
        );
        let spec = OpenAiSpec {
            endpoint: HttpEndpoint {
                base_url: "http://h/v1".into(),
                shown_base_url: Some("judges.j.base_url (from ${URL})".into()),
                written_base_url: Some("${URL}".into()),
                model: "m".into(),
                written_model: None,
                api_key_env: Some("KEY".into()),
                concurrency: 3,
                timeout: Duration::from_secs(9),
                max_retries: 1,
            },
            max_calls: 77,
            cost: Default::default(),
        };
        let judge = build(&JudgeSpec::new(spec.clone()));
        let openai = judge
            .backend::<OpenAiJudge>()
            .expect("an openai spec builds an openai judge");
        assert_eq!(openai.spec, spec, "the client carries every setting");
        assert_eq!(openai.usage(), Default::default(), "fresh counters");
        let spec = EmbeddingsSpec {
            endpoint: HttpEndpoint {
                base_url: "http://e/v1".into(),
                shown_base_url: None,
                written_base_url: None,
                model: "e5".into(),
                written_model: None,
                api_key_env: Some("EKEY".into()),
                concurrency: 2,
                timeout: Duration::from_secs(4),
                max_retries: 0,
            },
            cost: Default::default(),
        };
        let client = EmbeddingClient::from_spec(&spec);
        assert_eq!(client.spec, spec, "the client carries every setting");
    }

    #[cfg(feature = "cache")]
    #[test]
    fn a_plan_finds_in_the_cache_what_judging_stored_without_counting_or_writing() {
        use crate::config::CacheMode;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.sqlite");
        let judge = build(&kinds::default_judge());
        let tasks: Vec<Task> = ["Backups stay.", "Backups move."]
            .iter()
            .map(|claim| Task::Support {
                claim: claim.to_string(),
                context: "Backups stay in Frankfurt.".into(),
            })
            .collect();
        let cache = JudgeCache::open(&path, CacheMode::ReadWrite).unwrap();
        judge
            .judge_cached("default", &tasks[..1], Some(&cache), 1)
            .unwrap();
        drop(cache);
        let cache = JudgeCache::open(&path, CacheMode::Replay).unwrap();
        let planned = judge.plan_cached(&tasks, Some(&cache), 1).unwrap();
        assert_eq!((planned.tasks, planned.cached), (2, 1));
        assert_eq!(planned.requests, None, "an in-process judge makes no calls");
        let again = judge.plan_cached(&tasks, Some(&cache), 2).unwrap();
        assert_eq!(again.cached, 0, "a second asking has keys of its own");
        assert_eq!(judge.plan_cached(&tasks, None, 1).unwrap().cached, 0);
        assert_eq!(cache.stats(), Default::default(), "peeks are not lookups");
        let claims = ClaimsTask {
            question: "q".into(),
            answer: "a".into(),
        };
        assert_eq!(
            judge.cached_claims(&[claims], Some(&cache)).unwrap(),
            vec![None]
        );
    }

    #[test]
    fn the_clients_defaults_are_the_configs() {
        assert_eq!(
            LexicalJudge::default(),
            LexicalJudge::from_spec(&LexicalSpec::default())
        );
        let judge = OpenAiJudge::new("http://h/v1", "m");
        assert_eq!(
            judge,
            OpenAiJudge::from_spec(&OpenAiSpec::new("http://h/v1", "m"))
        );
        assert_eq!(
            (judge.spec.endpoint.concurrency, judge.spec.max_calls),
            (8, 20_000)
        );
    }
}
