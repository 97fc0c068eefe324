//! Answer-level metrics of one query, from the answer and the judges' verdicts: faithfulness
//! (the answer's claims judged against the contexts), answer relevance, RAGAS context precision,
//! and reference-based checks.

use crate::metrics::answer;
pub use crate::metrics::metric::EmptyAnswer;
use crate::metrics::metric::{AnswerLevel, AnswerMetric, JudgedMetric};

/// One claim of an answer and the judge's verdict on it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimVerdict {
    /// The claim's text.
    pub claim: String,
    /// The judge's support score in [0, 1], when it has one.
    pub score: Option<f64>,
    /// 0 unsupported, 1 partly, 2 fully supported.
    pub grade: u8,
    /// Whether the judge found the claim supported (what `faithfulness` counts).
    pub supported: bool,
    /// Why the judge found it unsupported, when it says; on a claim that asserts nothing, why.
    pub reason: Option<String>,
    /// The judge found that the claim asserts nothing checkable (`lexical-3`: a bare `yes` /
    /// `no`, a meta sentence such as `Here is what the document says:`): a supported such claim
    /// is left out of the claim count of binary faithfulness.
    pub asserts_nothing: bool,
}

/// How the reason of a claim that asserts nothing starts (`lexical-3`), for people reading the
/// trace; what decides is [`ClaimVerdict::asserts_nothing`].
pub const NOTHING_CHECKABLE: &str = "nothing checkable";

impl ClaimVerdict {
    /// Whether binary faithfulness leaves this claim out: supported, and asserting nothing
    /// checkable.
    pub fn checks_nothing(&self) -> bool {
        self.supported && self.asserts_nothing
    }
}

/// What one query offers the answer-level metrics besides the verdicts.
pub struct AnswerInputs<'a> {
    /// The answer text (it may be empty).
    pub answer: &'a str,
    /// Per retrieved chunk in rank order: whether the qrels count it relevant.
    pub chunk_relevant: &'a [bool],
    /// The query's `gold_answer_substring`, if any.
    pub gold_answer_substring: Option<&'a str>,
    /// The query's `reference_answer`, if any.
    pub reference_answer: Option<&'a str>,
}

/// The judge's verdicts for one query and one judge.
pub struct Judged<'a> {
    /// The answer's claims (empty for an empty answer).
    pub claims: &'a [ClaimVerdict],
    /// Whether the answer addresses the question (None when not asked).
    pub relevant: Option<bool>,
    /// Per retrieved chunk: whether the judge finds it relevant (`judged: true` context precision).
    pub chunks: Option<Vec<bool>>,
}

/// Why a metric has no value for a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// `empty_answer: exclude` and the answer is empty.
    EmptyAnswerExcluded,
    /// The query has no gold_answer_substring / reference_answer.
    NoReference,
}

/// RAGAS context precision@k: the sum over ranks i <= k of precision@i x rel_i, divided by the
/// number of relevant chunks in the top k (0 when there is none).
pub fn context_precision(relevant: &[bool], k: usize) -> f64 {
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (i, &rel) in relevant.iter().take(k).enumerate() {
        if rel {
            hits += 1;
            sum += hits as f64 / (i + 1) as f64;
        }
    }
    if hits == 0 { 0.0 } else { sum / hits as f64 }
}

/// The value of an answer-level `metric`.
pub fn value(
    metric: AnswerLevel,
    inputs: &AnswerInputs<'_>,
    judged: &Judged<'_>,
    empty_answer: EmptyAnswer,
) -> Result<f64, Missing> {
    let empty = inputs.answer.trim().is_empty();
    let claims = judged.claims;
    match metric {
        AnswerLevel::Judged(_) if empty => match empty_answer {
            EmptyAnswer::Zero => Ok(0.0),
            EmptyAnswer::Exclude => Err(Missing::EmptyAnswerExcluded),
        },
        // An answer made only of punctuation has no claim: nothing in it is supported.
        AnswerLevel::Judged(JudgedMetric::Faithfulness | JudgedMetric::FaithfulnessGraded)
            if claims.is_empty() =>
        {
            Ok(0.0)
        }
        // Claims that assert nothing checkable are left out; without any other claim nothing
        // is unsupported.
        AnswerLevel::Judged(JudgedMetric::Faithfulness) => {
            let counted = claims.iter().filter(|c| !c.checks_nothing());
            let (supported, total) = counted.fold((0usize, 0usize), |(s, t), c| {
                (s + usize::from(c.supported), t + 1)
            });
            Ok(if total == 0 {
                1.0
            } else {
                supported as f64 / total as f64
            })
        }
        AnswerLevel::Judged(JudgedMetric::FaithfulnessGraded) => Ok(claims
            .iter()
            .map(|c| f64::from(c.grade))
            .sum::<f64>()
            / (2.0 * claims.len() as f64)),
        AnswerLevel::Judged(JudgedMetric::AnswerRelevance) => {
            Ok(f64::from(u8::from(judged.relevant.unwrap_or(false))))
        }
        AnswerLevel::ContextPrecision(k) => Ok(match &judged.chunks {
            Some(chunks) => context_precision(chunks, k),
            None => context_precision(inputs.chunk_relevant, k),
        }),
        AnswerLevel::Answer(AnswerMetric::Contains) => inputs
            .gold_answer_substring
            .map(|gold| answer::answer_contains(inputs.answer, gold))
            .ok_or(Missing::NoReference),
        AnswerLevel::Answer(AnswerMetric::F1) => inputs
            .reference_answer
            .map(|reference| answer::answer_f1(inputs.answer, reference))
            .ok_or(Missing::NoReference),
        AnswerLevel::Answer(AnswerMetric::Exact) => inputs
            .reference_answer
            .map(|reference| answer::answer_exact(inputs.answer, reference))
            .ok_or(Missing::NoReference),
        AnswerLevel::Answer(AnswerMetric::Length) => Ok(answer::answer_length(inputs.answer)),
        AnswerLevel::Answer(AnswerMetric::Empty) => Ok(f64::from(u8::from(empty))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::lexical::LexicalJudge;
    use crate::metrics::claims::split_claims;

    #[test]
    fn context_precision_by_hand() {
        // relevant at ranks 1 and 3: (1/1 + 2/3) / 2
        assert!(
            (context_precision(&[true, false, true, false], 5) - (1.0 + 2.0 / 3.0) / 2.0).abs()
                < 1e-15
        );
        assert_eq!(context_precision(&[false, false], 5), 0.0);
        assert_eq!(
            context_precision(&[false, true], 1),
            0.0,
            "only the top k count"
        );
    }

    fn judge_claims(answer: &str, context: &str) -> Vec<ClaimVerdict> {
        let judge = LexicalJudge::default();
        split_claims(answer)
            .into_iter()
            .map(|claim| {
                let support = judge.support(&claim, context);
                ClaimVerdict {
                    asserts_nothing: false,
                    claim,
                    score: Some(support.score),
                    grade: support.grade,
                    supported: support.supported,
                    reason: None,
                }
            })
            .collect()
    }

    fn inputs(answer: &str) -> AnswerInputs<'_> {
        AnswerInputs {
            answer,
            chunk_relevant: &[],
            gold_answer_substring: Some("three failed parts"),
            reference_answer: None,
        }
    }

    #[test]
    fn claims_that_check_nothing_are_left_out_of_binary_faithfulness() {
        let claim =
            |supported: bool, grade: u8, asserts_nothing: bool, reason: &str| ClaimVerdict {
                claim: "c".to_string(),
                score: Some(1.0),
                grade,
                supported,
                reason: Some(reason.to_string()),
                asserts_nothing,
            };
        let yes = claim(true, 1, true, "nothing checkable: a bare yes or no");
        let wrong = claim(
            false,
            0,
            false,
            "unsupported: name Paris not in the context",
        );
        let right = claim(true, 2, false, "");
        let both = |claims: &[ClaimVerdict]| {
            let judged = Judged {
                claims,
                relevant: None,
                chunks: None,
            };
            let of = |metric| {
                value(
                    AnswerLevel::Judged(metric),
                    &inputs("Yes. Paris."),
                    &judged,
                    EmptyAnswer::Zero,
                )
                .unwrap()
            };
            (
                of(JudgedMetric::Faithfulness),
                of(JudgedMetric::FaithfulnessGraded),
            )
        };
        assert!(yes.checks_nothing() && !wrong.checks_nothing() && !right.checks_nothing());
        // 0 of the 1 counted claim, not 1 of 2; the graded variant counts the yes as grade 1.
        assert_eq!(both(&[yes.clone(), wrong.clone()]), (0.0, 0.25));
        assert_eq!(both(&[yes.clone(), right.clone()]), (1.0, 0.75));
        // Nothing counted: nothing unsupported.
        assert_eq!(both(std::slice::from_ref(&yes)), (1.0, 0.5));
        // It counts only on a supported claim.
        let unsupported = claim(false, 0, true, "nothing checkable: said by the judge");
        assert!(!unsupported.checks_nothing());
        assert_eq!(both(&[unsupported, right.clone()]), (0.5, 0.5));
        // A reply's words decide nothing: an endpoint or command judge whose reason reads like
        // lexical-3's has its supported claim counted.
        let echoed = claim(true, 2, false, "nothing checkable: a judge's reply");
        assert!(!echoed.checks_nothing());
        assert_eq!(both(&[echoed, wrong]), (0.5, 0.5));
    }

    #[test]
    fn concatenated_contexts_are_faithful_and_an_injected_sentence_is_not() {
        let context = "A multipart upload is aborted after three failed parts. \
                       Incomplete uploads are removed by lifecycle rules after seven days.";
        let claims = judge_claims(context, context);
        let judged = Judged {
            claims: &claims,
            relevant: None,
            chunks: None,
        };
        assert_eq!(
            value(
                AnswerLevel::Judged(JudgedMetric::Faithfulness),
                &inputs(context),
                &judged,
                EmptyAnswer::Zero
            ),
            Ok(1.0)
        );
        let injected = format!("{context} Quantum billing doubles every leap year on Mars.");
        let claims = judge_claims(&injected, context);
        let judged = Judged {
            claims: &claims,
            relevant: None,
            chunks: None,
        };
        let score = value(
            AnswerLevel::Judged(JudgedMetric::Faithfulness),
            &inputs(&injected),
            &judged,
            EmptyAnswer::Zero,
        )
        .unwrap();
        assert!((score - 2.0 / 3.0).abs() < 1e-12, "{score}");
        assert_eq!(
            value(
                AnswerLevel::Answer(AnswerMetric::Contains),
                &inputs(&injected),
                &judged,
                EmptyAnswer::Zero
            ),
            Ok(1.0)
        );
        assert_eq!(
            value(
                AnswerLevel::Answer(AnswerMetric::F1),
                &inputs(&injected),
                &judged,
                EmptyAnswer::Zero
            ),
            Err(Missing::NoReference)
        );
    }

    #[test]
    fn empty_answers_follow_the_policy() {
        let judged = Judged {
            claims: &[],
            relevant: None,
            chunks: None,
        };
        assert_eq!(
            value(
                AnswerLevel::Judged(JudgedMetric::Faithfulness),
                &inputs("  "),
                &judged,
                EmptyAnswer::Zero
            ),
            Ok(0.0)
        );
        assert_eq!(
            value(
                AnswerLevel::Judged(JudgedMetric::AnswerRelevance),
                &inputs("  "),
                &judged,
                EmptyAnswer::Exclude
            ),
            Err(Missing::EmptyAnswerExcluded)
        );
    }
}
