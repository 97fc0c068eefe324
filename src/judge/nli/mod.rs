//! `kind: nli`: a cross-encoder NLI model (exported to ONNX) judges whether the contexts entail
//! each claim, in-process on CPU.
//!
//! Per claim (rules versioned by [`NLI_JUDGE_VERSION`]): the contexts are split into sentences
//! (the claim splitter's rules) and packed into windows that fit the model's input with the
//! claim ([`windows`]); the model gives each (window, claim) pair a probability per label. The
//! claim's entailment is the largest entailment probability over the windows, its contradiction
//! the largest contradiction probability. Grade 2 (supported) when the entailment reaches
//! `entailment_threshold`; else grade 0 (contradicted) when the contradiction reaches
//! `contradiction_threshold`; else grade 1 (neutral: not entailed). The score is the entailment.
//! A two-label fact-checker (supported / not supported) has no contradiction and no neutral: its
//! score is the largest probability of the supported output, grade 2 at or above the threshold,
//! else 0 ("not supported"). The model reads the context first unless `pair_order: claim_first`.
//!
//! The model is loaded on first use, once per run ([`runtime`], feature `nli`); without the
//! feature a config cannot name this judge.

pub mod model;
#[cfg(feature = "nli")]
mod runtime;
mod settings;
pub mod windows;

pub use settings::{Nli, NliSpec, PairOrder, RawNliJudge};

#[cfg(feature = "nli")]
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::judge::backend::{JudgeBackend, JudgeKind};
use crate::judge::events::Events;
use crate::judge::task::{Task, Verdict};

/// Version of the windowing and grading rules; part of the judge's identity and cache keys.
pub const NLI_JUDGE_VERSION: &str = "nli-1";

/// An `nli` judge: its settings and, once loaded, its model.
#[derive(Debug, Clone)]
pub struct NliJudge {
    /// The validated settings (model directory, thresholds, batch size, threads).
    pub spec: NliSpec,
    /// The model and tokenizer, loaded on first use and shared by clones.
    #[cfg(feature = "nli")]
    loaded: Arc<OnceLock<std::result::Result<runtime::Runtime, String>>>,
}

impl PartialEq for NliJudge {
    fn eq(&self, other: &Self) -> bool {
        self.spec == other.spec
    }
}

impl NliJudge {
    /// The judge of a validated spec (nothing is loaded yet).
    pub fn from_spec(spec: &NliSpec) -> Self {
        NliJudge {
            spec: spec.clone(),
            #[cfg(feature = "nli")]
            loaded: Arc::default(),
        }
    }

    /// The judge's identity: the rules' version, the model as written and the digest of its
    /// files, and what changes verdicts (the longest input, the head and its thresholds, the
    /// pair order when not the default). The batch size and threads do not change them.
    pub fn describe(&self) -> String {
        let spec = &self.spec;
        let head = if spec.model.is_two_label() {
            format!(
                "two-label supported_output={} supported>={}",
                spec.model.entailment, spec.entailment_threshold
            )
        } else {
            format!(
                "entailment>={} contradiction>={}",
                spec.entailment_threshold, spec.contradiction_threshold
            )
        };
        let order = match spec.pair_order {
            PairOrder::ContextFirst => "",
            PairOrder::ClaimFirst => " pair_order=claim_first",
        };
        format!(
            "{NLI_JUDGE_VERSION} model={} sha256={} max_length={} {head}{order}",
            spec.written_model,
            &spec.model.sha256[..16],
            spec.max_length,
        )
    }

    /// The verdicts on `tasks`, in order; `name` is the judge's config name, for messages.
    pub fn judge_all(&self, name: &str, tasks: &[Task]) -> Result<Vec<Verdict>> {
        if let Some(task) = tasks.iter().find(|t| matches!(t, Task::Relevance { .. })) {
            return Err(not_support(name, task));
        }
        self.support(name, tasks)
    }

    #[cfg(not(feature = "nli"))]
    fn support(&self, name: &str, _tasks: &[Task]) -> Result<Vec<Verdict>> {
        Err(Error::judge(
            name,
            crate::features::missing(
                "nli",
                "an `nli` judge",
                "or use a `lexical`, `command` or `openai` judge",
            ),
        ))
    }

    #[cfg(feature = "nli")]
    fn support(&self, name: &str, tasks: &[Task]) -> Result<Vec<Verdict>> {
        if tasks.is_empty() {
            return Ok(Vec::new());
        }
        let loaded = self
            .loaded
            .get_or_init(|| runtime::Runtime::load(&self.spec))
            .as_ref()
            .map_err(|e| judged(name, e.clone()))?;
        let judged = |message: String| judged(name, message);
        // Every (window, claim) pair of every task in the model's order, then one batched pass
        // over them all.
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut spans = Vec::with_capacity(tasks.len());
        for task in tasks {
            let Task::Support { claim, context } = task else {
                return Err(not_support(name, task));
            };
            let premises = loaded
                .windows(context, claim, self.spec.max_length)
                .map_err(judged)?;
            let first = pairs.len();
            let order = self.spec.pair_order;
            pairs.extend(premises.into_iter().map(|p| order.arrange(p, claim)));
            spans.push(first..pairs.len());
        }
        let probabilities = loaded
            .probabilities(&pairs, self.spec.batch_size)
            .map_err(judged)?;
        Ok(spans
            .into_iter()
            .map(|span| grade(&probabilities[span], &self.spec))
            .collect())
    }
}

impl JudgeBackend for NliJudge {
    fn kind(&self) -> &'static str {
        Nli::NAME
    }

    fn describe(&self) -> String {
        NliJudge::describe(self)
    }

    fn judge_all(&self, name: &str, tasks: &[Task], _events: &Events) -> Result<Vec<Verdict>> {
        NliJudge::judge_all(self, name, tasks)
    }
}

/// The error of the `nli` judge `name` asked about `task`, which is not a support task.
fn not_support(name: &str, task: &Task) -> Error {
    Error::judge(
        name,
        format!(
            "an `nli` judge judges whether contexts support claims, not {}: \
             expected answer_relevance to name another judge (`judge:`)",
            task.summary()
        ),
    )
}

/// An error of the `nli` judge `name`.
#[cfg(feature = "nli")]
fn judged(name: &str, message: String) -> Error {
    Error::judge(name, message)
}

/// The largest probability of output `label` over the windows, and the window that has it.
fn largest(windows: &[Vec<f64>], label: usize) -> (f64, usize) {
    windows
        .iter()
        .enumerate()
        .map(|(i, p)| (p[label], i))
        .fold(
            (0.0f64, 0usize),
            |best, x| if x.0 > best.0 { x } else { best },
        )
}

/// The verdict on one claim from the label probabilities of each of its windows (see the
/// module documentation).
pub fn grade(windows: &[Vec<f64>], spec: &NliSpec) -> Verdict {
    if spec.model.is_two_label() {
        return grade_two_label(windows, spec);
    }
    let largest = |label: usize| largest(windows, label);
    let (entailment, entailed_in) = largest(spec.model.entailment);
    let of = |window: usize| {
        if windows.len() > 1 {
            format!(" (window {} of {})", window + 1, windows.len())
        } else {
            String::new()
        }
    };
    if entailment >= spec.entailment_threshold {
        return Verdict {
            asserts_nothing: false,
            positive: true,
            grade: 2,
            score: Some(entailment),
            reason: None,
        };
    }
    let contradiction = spec.model.contradiction.map(largest);
    let (grade, reason) = match contradiction {
        Some((p, window)) if p >= spec.contradiction_threshold => (
            0,
            format!(
                "contradicted: contradiction probability {p:.2}{} >= {}",
                of(window),
                spec.contradiction_threshold
            ),
        ),
        _ => (
            1,
            format!(
                "not entailed: entailment probability {entailment:.2}{} < {}",
                of(entailed_in),
                spec.entailment_threshold
            ),
        ),
    };
    Verdict {
        asserts_nothing: false,
        positive: false,
        grade,
        score: Some(entailment),
        reason: Some(reason),
    }
}

/// The verdict of a two-label model: supported (grade 2) when the best window's probability of
/// the supported output reaches the threshold, else not supported (grade 0).
fn grade_two_label(windows: &[Vec<f64>], spec: &NliSpec) -> Verdict {
    let (supported, window) = largest(windows, spec.model.entailment);
    if supported >= spec.entailment_threshold {
        return Verdict {
            asserts_nothing: false,
            positive: true,
            grade: 2,
            score: Some(supported),
            reason: None,
        };
    }
    let best_of = if windows.len() > 1 {
        format!(", window {} of {}", window + 1, windows.len())
    } else {
        String::new()
    };
    Verdict {
        asserts_nothing: false,
        positive: false,
        grade: 0,
        score: Some(supported),
        reason: Some(format!("not supported (score {supported:.2}{best_of})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::nli::model::ModelInfo;

    fn spec() -> NliSpec {
        NliSpec {
            model: ModelInfo {
                dir: "m".into(),
                label_count: 3,
                entailment: 1,
                contradiction: Some(0),
                max_length: 512,
                pad_id: 0,
                sha256: "ab".repeat(32),
            },
            written_model: "models/nli".into(),
            runtime: None,
            batch_size: 8,
            max_length: 512,
            entailment_threshold: 0.5,
            contradiction_threshold: 0.5,
            threads: 0,
            pair_order: PairOrder::ContextFirst,
        }
    }

    #[test]
    fn the_best_window_decides_entailment_and_then_contradiction() {
        let spec = spec();
        // [contradiction, entailment, neutral] per window
        let entailed = grade(&[vec![0.9, 0.05, 0.05], vec![0.1, 0.7, 0.2]], &spec);
        assert_eq!(
            (entailed.positive, entailed.grade, entailed.score),
            (true, 2, Some(0.7))
        );
        assert_eq!(entailed.reason, None);
        let contradicted = grade(&[vec![0.2, 0.3, 0.5], vec![0.8, 0.1, 0.1]], &spec);
        assert_eq!((contradicted.positive, contradicted.grade), (false, 0));
        assert_eq!(
            contradicted.reason.as_deref(),
            Some("contradicted: contradiction probability 0.80 (window 2 of 2) >= 0.5")
        );
        let neutral = grade(&[vec![0.3, 0.3, 0.4]], &spec);
        assert_eq!((neutral.grade, neutral.score), (1, Some(0.3)));
        assert_eq!(
            neutral.reason.as_deref(),
            Some("not entailed: entailment probability 0.30 < 0.5")
        );
    }

    #[test]
    fn a_model_without_contradiction_never_contradicts() {
        let mut spec = spec();
        spec.model.contradiction = None;
        let verdict = grade(&[vec![0.99, 0.01, 0.0]], &spec);
        assert_eq!((verdict.positive, verdict.grade), (false, 1));
    }

    #[test]
    fn the_identity_names_the_model_digest_and_what_changes_verdicts() {
        let judge = NliJudge::from_spec(&spec());
        assert_eq!(
            judge.describe(),
            "nli-1 model=models/nli sha256=abababababababab max_length=512 entailment>=0.5 contradiction>=0.5"
        );
        let mut faster = spec();
        faster.batch_size = 32;
        faster.threads = 2;
        assert_eq!(NliJudge::from_spec(&faster).describe(), judge.describe());
    }

    fn two_label_spec() -> NliSpec {
        let mut spec = spec();
        spec.model.label_count = 2;
        spec.model.contradiction = None;
        spec
    }

    #[test]
    fn a_two_label_model_grades_supported_or_not_supported() {
        let spec = two_label_spec();
        // [not supported, supported] per window: the best window's supported probability.
        let supported = grade(&[vec![0.6, 0.4], vec![0.3, 0.7]], &spec);
        assert_eq!(
            (supported.positive, supported.grade, supported.score),
            (true, 2, Some(0.7))
        );
        assert_eq!(supported.reason, None);
        let at_threshold = grade(&[vec![0.5, 0.5]], &spec);
        assert_eq!((at_threshold.positive, at_threshold.grade), (true, 2));
        // No contradiction and no neutral: below the threshold is grade 0, whatever the other
        // output (which a three-label reading would call a contradiction of 0.88).
        let unsupported = grade(&[vec![0.88, 0.12]], &spec);
        assert_eq!(
            (unsupported.positive, unsupported.grade, unsupported.score),
            (false, 0, Some(0.12))
        );
        assert_eq!(
            unsupported.reason.as_deref(),
            Some("not supported (score 0.12)")
        );
        let windowed = grade(&[vec![0.9, 0.1], vec![0.75, 0.25], vec![0.8, 0.2]], &spec);
        assert_eq!(
            windowed.reason.as_deref(),
            Some("not supported (score 0.25, window 2 of 3)")
        );
        let mut stricter = two_label_spec();
        stricter.entailment_threshold = 0.8;
        assert_eq!(grade(&[vec![0.3, 0.7]], &stricter).grade, 0);
    }

    #[test]
    fn the_identity_changes_with_the_head_and_the_pair_order() {
        let three = NliJudge::from_spec(&spec()).describe();
        let two = NliJudge::from_spec(&two_label_spec()).describe();
        assert_eq!(
            two,
            "nli-1 model=models/nli sha256=abababababababab max_length=512 \
             two-label supported_output=1 supported>=0.5"
        );
        let mut other_output = two_label_spec();
        other_output.model.entailment = 0;
        let mut claim_first = two_label_spec();
        claim_first.pair_order = PairOrder::ClaimFirst;
        let mut three_claim_first = spec();
        three_claim_first.pair_order = PairOrder::ClaimFirst;
        let identities = [
            three.clone(),
            two.clone(),
            NliJudge::from_spec(&other_output).describe(),
            NliJudge::from_spec(&claim_first).describe(),
            NliJudge::from_spec(&three_claim_first).describe(),
        ];
        let distinct: std::collections::BTreeSet<&String> = identities.iter().collect();
        assert_eq!(distinct.len(), identities.len(), "{identities:#?}");
        assert_eq!(identities[3], format!("{two} pair_order=claim_first"));
        assert_eq!(identities[4], format!("{three} pair_order=claim_first"));
    }

    #[test]
    fn the_pair_order_puts_the_context_or_the_claim_first() {
        let context = String::from("The context.");
        assert_eq!(
            PairOrder::ContextFirst.arrange(context.clone(), "A claim."),
            ("The context.".to_string(), "A claim.".to_string())
        );
        assert_eq!(
            PairOrder::ClaimFirst.arrange(context, "A claim."),
            ("A claim.".to_string(), "The context.".to_string())
        );
    }

    #[test]
    fn relevance_is_refused_naming_the_judge() {
        let judge = NliJudge::from_spec(&spec());
        let error = judge
            .judge_all(
                "nli",
                &[Task::Relevance {
                    question: "q".into(),
                    answer: "a".into(),
                }],
            )
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("judge `nli`: an `nli` judge judges whether contexts support claims"),
            "{error}"
        );
    }
}
