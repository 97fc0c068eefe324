//! The lexical judge: a deterministic, offline token-overlap judge (kind `lexical`). This
//! module is `lexical-1` (`version: 1`); `lexical-2`, the default, is [`crate::judge::lexical2`];
//! `lexical-3` (`version: 3`) is [`crate::judge::lexical3`].
//!
//! Tokenizer (versioned by [`LEXICAL_JUDGE_VERSION`] together with [`STOP_WORDS`](crate::judge::stop_words::STOP_WORDS); any change
//! to either bumps the version, which is part of the judge cache key):
//! 1. words are the UAX #29 words of the text (`unicode_words`: punctuation and whitespace
//!    are not words; `3.5`, `v1.2.3` and `don't` are one word each);
//! 2. each word is lowercased and `’` becomes `'`;
//! 3. words in [`STOP_WORDS`](crate::judge::stop_words::STOP_WORDS) are removed (English function words; negations such as `not`,
//!    `no`, `never` and quantifiers such as `all`, `only` are kept, since they change what a
//!    sentence asserts);
//! 4. a word containing a numeric character is kept verbatim, so `3.5`, `3.50` and `3` are
//!    three different tokens;
//! 5. any other word is stemmed with Snowball English (`rust-stemmers`) when `stem` is on:
//!    `fail`, `failed`, `failing` -> `fail`, but `failure`, `failures` -> `failur`.
//!
//! Tokens are compared as sets. Support of a claim by a context: `score` = share of the
//! claim's distinct tokens that occur in the context's tokens; grade 2 when `score >=
//! threshold`, 1 when `score >= threshold / 2`, else 0; supported when the grade is 2.
//! A claim without tokens (only stop words, e.g. "It is what it is.") asserts nothing that can
//! be checked: it scores 1.0, grade 2, supported, and reports `claim_tokens: 0`.
//! Relevance of an answer to a question: `score` = share of the question's distinct tokens
//! that occur in the answer's tokens; relevant when `score >= threshold`. A question without
//! tokens gives no evidence that any answer addresses it: score 0.0, not relevant, and
//! `question_tokens: 0`.
//! The threshold is expected in (0, 1] (the configuration validates it).

use std::collections::BTreeSet;

use rust_stemmers::{Algorithm, Stemmer};

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::error::Result;
use crate::judge::backend::{JudgeAt, JudgeBackend, JudgeKind, JudgeSpec, KindSettings};
use crate::judge::events::Events;
use crate::judge::lexical2::{LEXICAL2_JUDGE_VERSION, Prepared2, Support2};
use crate::judge::lexical3::{LEXICAL3_JUDGE_VERSION, Prepared3};
use crate::judge::stop_words::STOP_WORDS;
use crate::judge::task::{Task, Verdict};
use unicode_segmentation::UnicodeSegmentation;

/// Version of the tokenizer and the stop-word list; part of the judge cache key.
pub const LEXICAL_JUDGE_VERSION: &str = "lexical-1";

/// The lexical judge and its parameters (configured as `{ kind: lexical, threshold, stem,
/// version }`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalJudge {
    /// Minimum share of matched tokens for full support / relevance; expected in (0, 1].
    pub threshold: f64,
    /// Snowball-stem non-numeric tokens.
    pub stem: bool,
    /// 1: `lexical-1` (this module); 2: `lexical-2` ([`crate::judge::lexical2`]); 3:
    /// `lexical-3` ([`crate::judge::lexical3`]).
    pub version: u8,
}

/// A context analysed once by `lexical-2` or `lexical-3`.
enum Prepared {
    Two(Prepared2),
    Three(Prepared3),
}

impl Prepared {
    fn new(judge: &LexicalJudge, context: &str) -> Prepared {
        if judge.version >= 3 {
            Prepared::Three(Prepared3::new(context, judge.threshold, judge.stem))
        } else {
            Prepared::Two(Prepared2::new(context, judge.threshold, judge.stem))
        }
    }

    fn support(&self, claim: &str) -> Support2 {
        match self {
            Prepared::Two(prepared) => prepared.support(claim),
            Prepared::Three(prepared) => prepared.support(claim),
        }
    }
}

fn verdict_of(support: Support2) -> Verdict {
    Verdict {
        positive: support.supported,
        grade: support.grade,
        score: Some(support.score),
        reason: support.reason,
        asserts_nothing: support.asserts_nothing,
    }
}

impl LexicalJudge {
    /// The verdicts on `tasks`, in order; a context is analysed once for the run of
    /// consecutive support tasks that share it (the claims of one answer).
    pub fn verdicts(&self, tasks: &[Task]) -> Vec<Verdict> {
        let mut prepared: Option<(&str, Prepared)> = None;
        tasks
            .iter()
            .map(|task| match task {
                Task::Support { claim, context } if self.version >= 2 => {
                    let reuse = prepared.as_ref().is_some_and(|(c, _)| *c == &**context);
                    if !reuse {
                        prepared = Some((&**context, Prepared::new(self, context)));
                    }
                    verdict_of(prepared.as_ref().expect("prepared above").1.support(claim))
                }
                task => self.verdict(task),
            })
            .collect()
    }

    /// The verdict on one task.
    pub fn verdict(&self, task: &Task) -> Verdict {
        match task {
            Task::Support { claim, context } if self.version >= 2 => {
                verdict_of(Prepared::new(self, context).support(claim))
            }
            Task::Support { claim, context } => {
                let support = self.support(claim, context);
                Verdict {
                    asserts_nothing: false,
                    positive: support.supported,
                    grade: support.grade,
                    score: Some(support.score),
                    reason: None,
                }
            }
            Task::Relevance { question, answer } => {
                let relevance = self.relevance(question, answer);
                Verdict {
                    asserts_nothing: false,
                    positive: relevance.relevant,
                    grade: if relevance.relevant { 2 } else { 0 },
                    score: Some(relevance.score),
                    reason: None,
                }
            }
        }
    }

    /// What identifies this judge's verdicts, recorded in provenance: a change of any part can
    /// change verdicts, so baselines judged otherwise are not comparable.
    pub fn describe(&self) -> String {
        let version = match self.version {
            1 => LEXICAL_JUDGE_VERSION,
            2 => LEXICAL2_JUDGE_VERSION,
            _ => LEXICAL3_JUDGE_VERSION,
        };
        // lexical-3's rules changed before it became the default: its revision keeps a cache
        // written by an earlier revision from answering for this one.
        let revision = if self.version >= 3 {
            format!(" rules={}", crate::judge::lexical3::LEXICAL3_RULES_REVISION)
        } else {
            String::new()
        };
        format!(
            "{version} threshold={} stem={} claims={}{revision}",
            self.threshold,
            self.stem,
            crate::metrics::claims::CLAIM_SPLITTER_VERSION
        )
    }
}

impl Default for LexicalJudge {
    /// The configuration's defaults ([`LexicalSpec::default`]).
    fn default() -> Self {
        Self::from_spec(&LexicalSpec::default())
    }
}

impl LexicalJudge {
    /// The judge a validated spec describes.
    pub fn from_spec(spec: &LexicalSpec) -> Self {
        LexicalJudge {
            threshold: spec.threshold,
            stem: spec.stem,
            version: spec.version,
        }
    }
}

/// `kind: lexical`, the offline token-overlap judges (`lexical-1`, `lexical-2` and `lexical-3`).
pub struct Lexical;

/// `kind: lexical` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping such as `{ kind: lexical }`")]
pub struct RawLexicalJudge {
    /// The `kind` key, read before this struct (listed so that it is an accepted key; never
    /// read back, hence the allowance).
    #[allow(dead_code)]
    #[serde(rename = "kind")]
    kind_key: IgnoredAny,
    threshold: Option<f64>,
    stem: Option<bool>,
    /// 1 (`lexical-1`, token overlap only), 2 (`lexical-2`, the default) or 3 (`lexical-3`).
    version: Option<u64>,
}

impl JudgeKind for Lexical {
    const NAME: &'static str = "lexical";
    const ARTICLE: &'static str = "a";
    type Raw = RawLexicalJudge;

    /// A threshold in (0, 1] and a version of 1, 2 or 3.
    fn validate(raw: &RawLexicalJudge, at: &JudgeAt<'_>) -> Result<JudgeSpec> {
        let defaults = LexicalSpec::default();
        let threshold = raw.threshold.unwrap_or(defaults.threshold);
        if !(threshold > 0.0 && threshold <= 1.0) {
            return Err(at.error("threshold", format!("{threshold} is outside (0, 1]")));
        }
        let version = match raw.version {
            None => defaults.version,
            Some(version @ (1..=3)) => version as u8,
            Some(other) => {
                return Err(at.error(
                    "version",
                    format!("{other}: expected 1 (lexical-1), 2 (lexical-2) or 3 (lexical-3)"),
                ));
            }
        };
        Ok(JudgeSpec::new(LexicalSpec {
            threshold,
            stem: raw.stem.unwrap_or(defaults.stem),
            version,
        }))
    }
}

/// `kind: lexical`: the offline token-overlap judge's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalSpec {
    /// Minimum share of matched tokens for full support / relevance, in (0, 1].
    pub threshold: f64,
    /// Snowball-stem non-numeric tokens.
    pub stem: bool,
    /// Which lexical judge: 1 (`lexical-1`: token overlap with the whole context), 2
    /// (`lexical-2`: hard checks of numbers, polarity and names, and the share of the best
    /// context window) or 3 (`lexical-3`: `lexical-2` with joins mended, yes/no alike, names
    /// with negation words, meta sentences and short claims; see [`crate::judge::lexical3`]).
    pub version: u8,
}

/// The lexical judge a config gets when it names no version.
pub const DEFAULT_LEXICAL_VERSION: u8 = 2;

impl Default for LexicalSpec {
    /// Threshold 0.4, stemming on, `lexical-2`.
    fn default() -> Self {
        LexicalSpec {
            threshold: 0.4,
            stem: true,
            version: DEFAULT_LEXICAL_VERSION,
        }
    }
}

impl KindSettings for LexicalSpec {
    fn kind(&self) -> &'static str {
        Lexical::NAME
    }

    fn client(&self) -> Box<dyn JudgeBackend> {
        Box::new(LexicalJudge::from_spec(self))
    }
}

impl JudgeBackend for LexicalJudge {
    fn kind(&self) -> &'static str {
        Lexical::NAME
    }

    fn describe(&self) -> String {
        LexicalJudge::describe(self)
    }

    /// Instant: nothing to announce.
    fn announces_asking(&self) -> bool {
        false
    }

    fn judge_all(&self, _name: &str, tasks: &[Task], _events: &Events) -> Result<Vec<Verdict>> {
        Ok(self.verdicts(tasks))
    }
}

/// The lexical verdict on one claim.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Support {
    /// Share of the claim's distinct tokens present in the context (1.0 without tokens).
    pub score: f64,
    /// 2 when `score >= threshold`, 1 when `score >= threshold / 2`, else 0.
    pub grade: u8,
    /// `grade == 2`.
    pub supported: bool,
    /// Number of distinct tokens of the claim (0: the claim asserts nothing checkable).
    pub claim_tokens: usize,
}

/// The lexical verdict on whether an answer addresses a question.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Relevance {
    /// Share of the question's distinct tokens present in the answer (0.0 without tokens).
    pub score: f64,
    /// `score >= threshold`.
    pub relevant: bool,
    /// Number of distinct tokens of the question.
    pub question_tokens: usize,
}

/// A context tokenised once, to judge many claims against it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedContext {
    judge: LexicalJudge,
    tokens: BTreeSet<String>,
}

impl PreparedContext {
    /// The context's distinct tokens.
    pub fn tokens(&self) -> &BTreeSet<String> {
        &self.tokens
    }

    /// Judges one claim against this context with the judge that prepared it.
    pub fn support(&self, claim: &str) -> Support {
        let claim = self.judge.tokens(claim);
        // Without tokens the claim asserts nothing checkable: vacuously supported.
        let score = overlap(&claim, &self.tokens).unwrap_or(1.0);
        let threshold = self.judge.threshold;
        let grade = match score {
            _ if claim.is_empty() || score >= threshold => 2,
            _ if score >= threshold / 2.0 => 1,
            _ => 0,
        };
        Support {
            score,
            grade,
            supported: grade == 2,
            claim_tokens: claim.len(),
        }
    }
}

impl LexicalJudge {
    /// The distinct tokens of `text` (see the module documentation).
    pub fn tokens(&self, text: &str) -> BTreeSet<String> {
        let stemmer = self.stem.then(|| Stemmer::create(Algorithm::English));
        text.unicode_words()
            .filter_map(|word| {
                let word = word.to_lowercase().replace('’', "'");
                if STOP_WORDS.binary_search(&word.as_str()).is_ok() {
                    return None;
                }
                match &stemmer {
                    Some(stemmer) if !word.chars().any(char::is_numeric) => {
                        Some(stemmer.stem(&word).into_owned())
                    }
                    _ => Some(word),
                }
            })
            .collect()
    }

    /// Tokenises a context once for [`PreparedContext::support`].
    pub fn prepare(&self, context: &str) -> PreparedContext {
        PreparedContext {
            judge: *self,
            tokens: self.tokens(context),
        }
    }

    /// Judges whether `context` supports `claim`.
    pub fn support(&self, claim: &str, context: &str) -> Support {
        self.prepare(context).support(claim)
    }

    /// Judges whether `answer` addresses `question`.
    pub fn relevance(&self, question: &str, answer: &str) -> Relevance {
        let question = self.tokens(question);
        let score = overlap(&question, &self.tokens(answer)).unwrap_or(0.0);
        Relevance {
            score,
            relevant: !question.is_empty() && score >= self.threshold,
            question_tokens: question.len(),
        }
    }
}

/// Share of `needles` found in `haystack`; `None` when there are no needles.
fn overlap(needles: &BTreeSet<String>, haystack: &BTreeSet<String>) -> Option<f64> {
    if needles.is_empty() {
        return None;
    }
    let found = needles.intersection(haystack).count();
    Some(found as f64 / needles.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(words: &[&str]) -> BTreeSet<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_tokenizer_version_is_lexical_1() {
        // Any change to the tokenizer or to `STOP_WORDS` bumps it.
        assert_eq!(LEXICAL_JUDGE_VERSION, "lexical-1");
    }

    /// (score, grade, supported, claim_tokens) of a claim against a context.
    fn verdict(threshold: f64, stem: bool, claim: &str, context: &str) -> (f64, u8, bool, usize) {
        let s = LexicalJudge {
            threshold,
            stem,
            version: 1,
        }
        .support(claim, context);
        (s.score, s.grade, s.supported, s.claim_tokens)
    }

    #[test]
    fn seed_vocabulary_gap_is_partial_support() {
        let claim = "the upload is dropped after three failures";
        let context = "a multipart upload is aborted after three failed parts";
        let tokens = LexicalJudge::default().tokens(claim);
        assert_eq!(tokens, set(&["upload", "drop", "three", "failur"]));
        // dropped/aborted and failures/failed do not meet: only upload and three match.
        assert_eq!(verdict(0.4, true, claim, context), (0.5, 2, true, 4));
        assert_eq!(verdict(0.75, true, claim, context), (0.5, 1, false, 4));
        assert_eq!(verdict(0.4, false, claim, context), (0.5, 2, true, 4));
    }

    #[test]
    fn snowball_stemming_conflates_inflections_not_derivations() {
        let stemmed = LexicalJudge::default();
        assert_eq!(stemmed.tokens("fail failed failing"), set(&["fail"]));
        assert_eq!(stemmed.tokens("failure Failures"), set(&["failur"]));
        assert_eq!(verdict(0.4, true, "parts failed", "a failing part").0, 1.0);
        let plain = LexicalJudge {
            threshold: 0.4,
            stem: false,
            version: 1,
        };
        assert_eq!(plain.tokens("fail failed"), set(&["fail", "failed"]));
        assert_eq!(verdict(0.4, false, "parts failed", "a failing part").0, 0.0);
    }

    #[test]
    fn numbers_are_kept_verbatim() {
        let tokens = LexicalJudge::default().tokens("Runs 1990s v1.2.3 at 3.5");
        assert_eq!(tokens, set(&["run", "1990s", "v1.2.3", "3.5"]));
        assert_eq!(verdict(0.4, true, "version 3.5", "version 3").0, 0.5);
        assert_eq!(verdict(0.4, true, "costs 3.50", "costs 3.5").0, 0.5);
        assert_eq!(verdict(0.4, true, "costs 3.5", "it costs 3.5 euros").0, 1.0);
    }

    #[test]
    fn threshold_boundaries_give_graded_levels() {
        let claim = "alpha bravo charlie delta echo";
        let at = |context: &str| verdict(0.4, true, claim, context);
        assert_eq!(at("alpha bravo charlie delta echo"), (1.0, 2, true, 5));
        assert_eq!(at("alpha bravo"), (0.4, 2, true, 5)); // exactly the threshold
        assert_eq!(at("alpha"), (0.2, 1, false, 5)); // exactly threshold / 2
        assert_eq!(at("zulu"), (0.0, 0, false, 5));
        assert_eq!(at(""), (0.0, 0, false, 5));
    }

    #[test]
    fn claims_without_content_tokens_are_vacuously_supported() {
        let claim = "It is what it is.";
        assert_eq!(verdict(0.4, true, claim, "unrelated"), (1.0, 2, true, 0));
        assert_eq!(verdict(1.0, false, claim, ""), (1.0, 2, true, 0));
    }

    #[test]
    fn negation_is_content() {
        let (score, grade, _, tokens) = verdict(0.4, true, "It is not aborted", "It is aborted");
        assert_eq!((score, grade, tokens), (0.5, 2, 2));
    }

    #[test]
    fn matching_is_case_insensitive_and_apostrophe_neutral() {
        assert_eq!(
            verdict(0.4, true, "UPLOAD Aborted", "the upload was aborted").0,
            1.0
        );
        let judge = LexicalJudge::default();
        assert_eq!(
            judge.tokens("the upload’s state"),
            judge.tokens("The UPLOAD's state")
        );
    }

    #[test]
    fn relevance_is_question_coverage() {
        let judge = LexicalJudge::default();
        let question = "what is the threshold before a multipart upload is dropped";
        let answer = "A multipart upload is aborted after three failed parts.";
        let on_topic = judge.relevance(question, answer);
        assert_eq!(
            (on_topic.score, on_topic.relevant, on_topic.question_tokens),
            (0.5, true, 4)
        );
        let off_topic = judge.relevance(question, "Paris is the capital of France.");
        assert_eq!((off_topic.score, off_topic.relevant), (0.0, false));
        let vacuous = judge.relevance("What is it?", "It is a cat.");
        assert_eq!(
            (vacuous.score, vacuous.relevant, vacuous.question_tokens),
            (0.0, false, 0)
        );
        assert!(!judge.relevance(question, "").relevant);
    }

    #[test]
    fn prepared_context_matches_direct_support_and_is_deterministic() {
        let judge = LexicalJudge::default();
        let context = "A multipart upload is aborted after three failed parts. Retries back off.";
        let prepared = judge.prepare(context);
        assert_eq!(prepared.tokens(), &judge.tokens(context));
        for claim in [
            "uploads abort",
            "three parts fail",
            "retry budget",
            "It is.",
        ] {
            assert_eq!(prepared.support(claim), judge.support(claim, context));
            assert_eq!(judge.support(claim, context), judge.support(claim, context));
        }
        let order: Vec<_> = judge.tokens("zeta alpha mu alpha").into_iter().collect();
        assert_eq!(order, ["alpha", "mu", "zeta"]);
    }
}
