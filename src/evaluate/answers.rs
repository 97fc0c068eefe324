//! Answer-level metric values of one native run line: builds its contexts, judges its claims once
//! per (judge, contexts), and computes every answer metric.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::input::corpus::Corpus;
use crate::input::qrels::QueryQrels;
use crate::input::run::RunQuery;
use crate::judge::lexical::LexicalJudge;
use crate::metrics::generation::{self, AnswerInputs, ClaimVerdict, Missing};
use crate::metrics::metric::{Metric, MetricSpec};

/// The answer metrics of an evaluation and what they need.
pub struct AnswerMetrics<'a> {
    /// (position in the evaluation's metric list, spec)
    pub specs: Vec<(usize, &'a MetricSpec)>,
    pub judges: &'a BTreeMap<String, LexicalJudge>,
    pub corpus: Option<&'a Corpus>,
    pub separator: Option<&'a str>,
    pub run_path: &'a Path,
}

/// The contexts of an answer for one (judge, k) and its claims judged against them.
struct Judged {
    contexts: Vec<String>,
    claims: Vec<ClaimVerdict>,
}

/// Values of one query's answer metrics.
pub struct AnswerScores {
    /// (position in the metric list, value; None when excluded or without a reference)
    pub values: Vec<(usize, Option<f64>)>,
    /// The claims of the first faithfulness metric, for the trace.
    pub claims: Vec<ClaimVerdict>,
    /// The answer was empty and at least one metric excluded it.
    pub empty_excluded: bool,
}

impl AnswerMetrics<'_> {
    fn doc_of<'d>(&self, retrieved: &'d str) -> &'d str {
        match self.separator {
            Some(sep) => retrieved.rsplit_once(sep).map_or(retrieved, |(doc, _)| doc),
            None => retrieved,
        }
    }

    /// The text of a retrieved entry: its own `text`, else the corpus document's title and text.
    fn text_of(&self, run: &RunQuery, index: usize) -> Option<String> {
        let entry = &run.retrieved[index];
        if let Some(text) = &entry.text {
            return Some(text.clone());
        }
        let doc = self.corpus?.get(self.doc_of(&entry.doc_id))?;
        Some(if doc.title.is_empty() {
            doc.text.clone()
        } else {
            format!("{}\n{}", doc.title, doc.text)
        })
    }

    /// The run's `contexts`, else the texts of its top `k` retrieved docs.
    fn contexts(&self, run: &RunQuery, k: usize) -> Result<Vec<String>> {
        if let Some(contexts) = &run.contexts {
            return Ok(contexts.clone());
        }
        (0..run.retrieved.len().min(k))
            .map(|i| {
                self.text_of(run, i).ok_or_else(|| {
                    Error::parse(
                        self.run_path,
                        run.line,
                        format!(
                            "no text for retrieved doc `{}` of query `{}`: expected \"contexts\" or a \"text\" \
                             in the run, or a corpus (`corpus:` in the config, --corpus for eval)",
                            run.retrieved[i].doc_id, run.qid
                        ),
                    )
                })
            })
            .collect()
    }

    pub fn score(&self, run: &RunQuery, query: &QueryQrels) -> Result<AnswerScores> {
        let answer = run.answer.as_deref().ok_or_else(|| {
            Error::parse(
                self.run_path,
                run.line,
                format!(
                    "query `{}` has no \"answer\": expected one for the answer metrics",
                    run.qid
                ),
            )
        })?;
        let chunk_relevant: Vec<bool> = run
            .retrieved
            .iter()
            .map(|r| {
                query
                    .judgments
                    .get(self.doc_of(&r.doc_id))
                    .is_some_and(|j| j.relevant)
            })
            .collect();
        let needs_texts = self.specs.iter().any(|(_, s)| s.judged);
        let chunk_texts: Vec<Option<String>> = if needs_texts {
            (0..run.retrieved.len())
                .map(|i| self.text_of(run, i))
                .collect()
        } else {
            Vec::new()
        };
        let mut judged: BTreeMap<(&str, usize), Judged> = BTreeMap::new();
        let mut scores = AnswerScores {
            values: Vec::new(),
            claims: Vec::new(),
            empty_excluded: false,
        };
        for &(index, spec) in &self.specs {
            let judge = &self.judges[&spec.judge];
            let faithfulness = matches!(
                spec.metric,
                Metric::Faithfulness | Metric::FaithfulnessGraded
            );
            let key = (spec.judge.as_str(), spec.contexts_k);
            if faithfulness && !judged.contains_key(&key) {
                let contexts = self.contexts(run, spec.contexts_k)?;
                let claims = generation::judge_claims(judge, answer, &contexts);
                judged.insert(key, Judged { contexts, claims });
            }
            let (contexts, claims) = judged.get(&key).map_or((&[][..], &[][..]), |j| {
                (j.contexts.as_slice(), j.claims.as_slice())
            });
            if faithfulness && scores.claims.is_empty() {
                scores.claims = claims.to_vec();
            }
            let inputs = AnswerInputs {
                question: query.text.as_deref().unwrap_or_default(),
                answer,
                contexts,
                chunk_relevant: &chunk_relevant,
                chunk_texts: &chunk_texts,
                gold_answer_substring: query.gold_answer_substring.as_deref(),
                reference_answer: query.reference_answer.as_deref(),
            };
            let value = match generation::value(
                spec.metric,
                &inputs,
                claims,
                judge,
                spec.empty_answer,
                spec.judged,
            ) {
                Ok(value) => Some(value),
                Err(Missing::EmptyAnswerExcluded) => {
                    scores.empty_excluded = true;
                    None
                }
                Err(Missing::NoReference) => None,
            };
            scores.values.push((index, value));
        }
        Ok(scores)
    }
}
