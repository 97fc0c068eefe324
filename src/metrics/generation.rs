//! Answer-level metrics of one query: faithfulness (the answer's claims judged against the
//! contexts), answer relevance, RAGAS context precision, and reference-based checks.

use crate::judge::lexical::LexicalJudge;
use crate::metrics::answer;
use crate::metrics::claims::split_claims;
use crate::metrics::metric::Metric;

/// What an empty answer scores on judged metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmptyAnswer {
    /// Score 0: an empty answer supports nothing and addresses nothing.
    #[default]
    Zero,
    /// Leave the query out of the metric (and count it).
    Exclude,
}

/// One claim of an answer and the judge's verdict on it, for the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimVerdict {
    pub claim: String,
    /// Share of the claim's content tokens found in the contexts.
    pub score: f64,
    /// 0 unsupported, 1 partly, 2 fully supported.
    pub grade: u8,
    pub supported: bool,
}

/// What one query offers the answer-level metrics.
pub struct AnswerInputs<'a> {
    pub question: &'a str,
    /// The answer text (it may be empty).
    pub answer: &'a str,
    /// The texts the answer is judged against.
    pub contexts: &'a [String],
    /// Per retrieved chunk in rank order: whether the qrels count it relevant.
    pub chunk_relevant: &'a [bool],
    /// Per retrieved chunk in rank order: its text, when known (for judged context precision).
    pub chunk_texts: &'a [Option<String>],
    pub gold_answer_substring: Option<&'a str>,
    pub reference_answer: Option<&'a str>,
}

/// Why a metric has no value for a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// `empty_answer: exclude` and the answer is empty.
    EmptyAnswerExcluded,
    /// The query has no gold_answer_substring / reference_answer.
    NoReference,
}

/// The claims of an answer, judged against its contexts.
pub fn judge_claims(judge: &LexicalJudge, answer: &str, contexts: &[String]) -> Vec<ClaimVerdict> {
    let context = judge.prepare(&contexts.join("\n\n"));
    split_claims(answer)
        .into_iter()
        .map(|claim| {
            let support = context.support(&claim);
            ClaimVerdict {
                claim,
                score: support.score,
                grade: support.grade,
                supported: support.supported,
            }
        })
        .collect()
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

/// The value of an answer-level `metric`. `claims` are the judged claims of the answer
/// (computed once per query by the caller with `judge_claims`).
pub fn value(
    metric: Metric,
    inputs: &AnswerInputs<'_>,
    claims: &[ClaimVerdict],
    judge: &LexicalJudge,
    empty_answer: EmptyAnswer,
    judged_relevance: bool,
) -> Result<f64, Missing> {
    let empty = inputs.answer.trim().is_empty();
    match metric {
        Metric::Faithfulness | Metric::FaithfulnessGraded | Metric::AnswerRelevance if empty => {
            match empty_answer {
                EmptyAnswer::Zero => Ok(0.0),
                EmptyAnswer::Exclude => Err(Missing::EmptyAnswerExcluded),
            }
        }
        // An answer made only of punctuation has no claim: nothing in it is supported.
        Metric::Faithfulness if claims.is_empty() => Ok(0.0),
        Metric::FaithfulnessGraded if claims.is_empty() => Ok(0.0),
        Metric::Faithfulness => {
            Ok(claims.iter().filter(|c| c.supported).count() as f64 / claims.len() as f64)
        }
        Metric::FaithfulnessGraded => Ok(
            claims.iter().map(|c| f64::from(c.grade)).sum::<f64>() / (2.0 * claims.len() as f64)
        ),
        Metric::AnswerRelevance => Ok(f64::from(u8::from(
            judge.relevance(inputs.question, inputs.answer).relevant,
        ))),
        Metric::ContextPrecision(k) => {
            if judged_relevance {
                let relevant: Vec<bool> = inputs
                    .chunk_texts
                    .iter()
                    .map(|text| {
                        text.as_deref()
                            .is_some_and(|t| judge.relevance(inputs.question, t).relevant)
                    })
                    .collect();
                Ok(context_precision(&relevant, k))
            } else {
                Ok(context_precision(inputs.chunk_relevant, k))
            }
        }
        Metric::AnswerContains => inputs
            .gold_answer_substring
            .map(|gold| answer::answer_contains(inputs.answer, gold))
            .ok_or(Missing::NoReference),
        Metric::AnswerF1 => inputs
            .reference_answer
            .map(|reference| answer::answer_f1(inputs.answer, reference))
            .ok_or(Missing::NoReference),
        Metric::AnswerExact => inputs
            .reference_answer
            .map(|reference| answer::answer_exact(inputs.answer, reference))
            .ok_or(Missing::NoReference),
        Metric::AnswerLength => Ok(answer::answer_length(inputs.answer)),
        Metric::Retrieval(_) => unreachable!("retrieval metrics are scored from the ranking"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn inputs<'a>(answer: &'a str, contexts: &'a [String]) -> AnswerInputs<'a> {
        AnswerInputs {
            question: "how many failed parts abort a multipart upload",
            answer,
            contexts,
            chunk_relevant: &[],
            chunk_texts: &[],
            gold_answer_substring: Some("three failed parts"),
            reference_answer: None,
        }
    }

    #[test]
    fn concatenated_contexts_are_faithful_and_an_injected_sentence_is_not() {
        let judge = LexicalJudge::default();
        let contexts = vec![
            "A multipart upload is aborted after three failed parts.".to_string(),
            "Incomplete uploads are removed by lifecycle rules after seven days.".to_string(),
        ];
        let faithful = contexts.join(" ");
        let claims = judge_claims(&judge, &faithful, &contexts);
        let input = inputs(&faithful, &contexts);
        assert_eq!(
            value(
                Metric::Faithfulness,
                &input,
                &claims,
                &judge,
                EmptyAnswer::Zero,
                false
            ),
            Ok(1.0)
        );
        let injected = format!("{faithful} Quantum billing doubles every leap year on Mars.");
        let claims = judge_claims(&judge, &injected, &contexts);
        let input = inputs(&injected, &contexts);
        let score = value(
            Metric::Faithfulness,
            &input,
            &claims,
            &judge,
            EmptyAnswer::Zero,
            false,
        )
        .unwrap();
        assert!((score - 2.0 / 3.0).abs() < 1e-12, "{score}");
        assert_eq!(
            value(
                Metric::AnswerContains,
                &input,
                &claims,
                &judge,
                EmptyAnswer::Zero,
                false
            ),
            Ok(1.0)
        );
        assert_eq!(
            value(
                Metric::AnswerF1,
                &input,
                &claims,
                &judge,
                EmptyAnswer::Zero,
                false
            ),
            Err(Missing::NoReference)
        );
    }

    #[test]
    fn empty_answers_follow_the_policy() {
        let judge = LexicalJudge::default();
        let contexts = vec!["text".to_string()];
        let input = inputs("  ", &contexts);
        assert_eq!(
            value(
                Metric::Faithfulness,
                &input,
                &[],
                &judge,
                EmptyAnswer::Zero,
                false
            ),
            Ok(0.0)
        );
        assert_eq!(
            value(
                Metric::AnswerRelevance,
                &input,
                &[],
                &judge,
                EmptyAnswer::Exclude,
                false
            ),
            Err(Missing::EmptyAnswerExcluded)
        );
    }
}
