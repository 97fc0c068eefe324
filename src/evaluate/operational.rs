//! What a query cost the pipeline (latency, tokens, money), read from its run line: reported for
//! every run that carries it, and a metric value when `latency_ms`, `tokens` or `cost` is gated.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::input::run::RunQuery;
use crate::metrics::metric::{Metric, OperationalMetric};

/// A query's operational figures, each present when the run line carried it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operational {
    /// How long the pipeline took for the query, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub latency_ms: Option<f64>,
    /// Prompt plus completion tokens.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tokens: Option<u64>,
    /// The cost the pipeline reported, in its own unit.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cost: Option<f64>,
}

impl Operational {
    /// The figures of one run line; a negative or non-finite one is an error naming the line.
    pub fn of(run: &RunQuery, run_path: &Path) -> Result<Self> {
        for (field, value) in [("latency_ms", run.latency_ms), ("cost", run.cost)] {
            if let Some(value) = value
                && !(value.is_finite() && value >= 0.0)
            {
                return Err(Error::parse(
                    run_path,
                    run.line,
                    format!(
                        "query `{}`: `{field}` is {value}: expected a number >= 0",
                        run.qid
                    ),
                ));
            }
        }
        let tokens = match run.usage {
            None => None,
            Some(usage) => Some(
                usage
                    .prompt_tokens
                    .checked_add(usage.completion_tokens)
                    .ok_or_else(|| {
                        Error::parse(
                            run_path,
                            run.line,
                            format!(
                                "query `{}`: `usage` prompt_tokens {} + completion_tokens {} \
                                 overflow a 64-bit count: expected the tokens the query consumed",
                                crate::error::shorten(&run.qid),
                                usage.prompt_tokens,
                                usage.completion_tokens
                            ),
                        )
                    })?,
            ),
        };
        Ok(Operational {
            latency_ms: run.latency_ms,
            tokens,
            cost: run.cost,
        })
    }

    /// The value of an operational `metric` for the query on `run`'s line; missing is an error,
    /// since a pipeline that stops reporting cannot be allowed to pass a cost gate.
    pub fn value(&self, metric: OperationalMetric, run: &RunQuery, run_path: &Path) -> Result<f64> {
        let (value, field) = match metric {
            OperationalMetric::LatencyMs => (self.latency_ms, "\"latency_ms\""),
            OperationalMetric::Tokens => (
                self.tokens.map(|t| t as f64),
                "\"usage\": {\"prompt_tokens\", \"completion_tokens\"}",
            ),
            OperationalMetric::Cost => (self.cost, "\"cost\""),
        };
        value.ok_or_else(|| {
            Error::parse(
                run_path,
                run.line,
                format!(
                    "query `{}` has no {field}: expected it for the metric {} (the command and \
                     http pipeline adapters measure latency_ms; usage and cost come from the pipeline)",
                    run.qid,
                    Metric::Operational(metric)
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::run::Usage;

    fn run_line() -> RunQuery {
        RunQuery {
            qid: "q1".into(),
            retrieved: Vec::new(),
            answer: None,
            contexts: None,
            latency_ms: Some(12.5),
            usage: Some(Usage {
                prompt_tokens: 100,
                completion_tokens: 20,
                total_tokens: None,
            }),
            cost: None,
            line: 3,
        }
    }

    #[test]
    fn reads_latency_and_sums_tokens() {
        let run = run_line();
        let figures = Operational::of(&run, Path::new("run.jsonl")).unwrap();
        assert_eq!(
            figures
                .value(OperationalMetric::LatencyMs, &run, Path::new("r"))
                .unwrap(),
            12.5
        );
        assert_eq!(
            figures
                .value(OperationalMetric::Tokens, &run, Path::new("r"))
                .unwrap(),
            120.0
        );
    }

    #[test]
    fn a_missing_or_negative_figure_is_an_error_naming_the_line() {
        let run = run_line();
        let figures = Operational::of(&run, Path::new("run.jsonl")).unwrap();
        let message = figures
            .value(OperationalMetric::Cost, &run, Path::new("run.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("run.jsonl:3: query `q1` has no \"cost\""),
            "{message}"
        );
        let negative = RunQuery {
            latency_ms: Some(-1.0),
            ..run_line()
        };
        let message = Operational::of(&negative, Path::new("run.jsonl"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "run.jsonl:3: query `q1`: `latency_ms` is -1: expected a number >= 0"
        );
    }

    #[test]
    fn token_counts_that_overflow_are_an_error_naming_the_line() {
        let huge = RunQuery {
            usage: Some(Usage {
                prompt_tokens: u64::MAX,
                completion_tokens: 1,
                total_tokens: None,
            }),
            ..run_line()
        };
        let message = Operational::of(&huge, Path::new("run.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("run.jsonl:3: query `q1`: `usage` prompt_tokens 18446744073709551615 + completion_tokens 1 overflow"),
            "{message}"
        );
    }
}
