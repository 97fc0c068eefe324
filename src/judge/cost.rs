//! What judge calls cost, estimated before they are made: the requests a judge would send for
//! its tasks, their tokens (estimated as characters / [`CHARS_PER_TOKEN`], the usual rule of
//! thumb for English text and JSON) and their money at a judge's `price_per_1k_tokens`; and the
//! per-call `latency_s` hint that turns calls into wall time.

use serde::Deserialize;

use crate::error::{Error, Result};

/// Characters per token in the estimates (a model's tokenizer decides the real count).
pub const CHARS_PER_TOKEN: u64 = 4;

/// `price_per_1k_tokens` as written: `{ input: 0.00015, output: 0.0006 }`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
#[serde(
    expecting = "a mapping `{ input: PRICE, output: PRICE }` (per 1,000 prompt and completion tokens)"
)]
pub struct RawPrice {
    input: f64,
    output: f64,
}

/// The price of 1,000 prompt (input) and completion (output) tokens, in the user's currency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Per 1,000 prompt tokens.
    pub input: f64,
    /// Per 1,000 completion tokens.
    pub output: f64,
}

impl Price {
    /// What `tokens` cost.
    pub fn cost(&self, tokens: Tokens) -> f64 {
        (tokens.input as f64 * self.input + tokens.output as f64 * self.output) / 1000.0
    }
}

/// What a paid judge's calls cost and take, as configured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CostHints {
    /// `price_per_1k_tokens`, when configured.
    pub price: Option<Price>,
    /// `latency_s`: the seconds one call takes, when configured.
    pub latency_s: Option<f64>,
}

impl CostHints {
    /// The hints as written (`price_per_1k_tokens`, `latency_s`): prices finite and not
    /// negative, a latency above 0; `error(field, message)` is the error at a field.
    pub fn validate(
        price: Option<RawPrice>,
        latency_s: Option<f64>,
        error: impl Fn(&str, String) -> Error,
    ) -> Result<CostHints> {
        let price = match price {
            None => None,
            Some(raw) => {
                for (field, value) in [("input", raw.input), ("output", raw.output)] {
                    if !(value.is_finite() && value >= 0.0) {
                        return Err(error(
                            &format!("price_per_1k_tokens.{field}"),
                            format!("{value}: expected a price of 0 or more per 1,000 tokens"),
                        ));
                    }
                }
                Some(Price {
                    input: raw.input,
                    output: raw.output,
                })
            }
        };
        if let Some(latency) = latency_s
            && !(latency.is_finite() && latency > 0.0)
        {
            return Err(error(
                "latency_s",
                format!("{latency}: expected the seconds one call takes, more than 0"),
            ));
        }
        Ok(CostHints { price, latency_s })
    }
}

/// Estimated tokens of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Tokens {
    /// Prompt tokens: the request bodies.
    pub input: u64,
    /// Completion tokens: the replies the contract asks for.
    pub output: u64,
}

impl Tokens {
    /// The estimate for `input` and `output` characters.
    pub fn of_chars(input: u64, output: u64) -> Tokens {
        Tokens {
            input: input.div_ceil(CHARS_PER_TOKEN),
            output: output.div_ceil(CHARS_PER_TOKEN),
        }
    }
}

impl std::ops::Add for Tokens {
    type Output = Tokens;

    fn add(self, other: Tokens) -> Tokens {
        Tokens {
            input: self.input + other.input,
            output: self.output + other.output,
        }
    }
}

/// The requests a judge would send for some tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Requests {
    /// HTTP requests (an `openai` judge batches one answer's claims), or tasks sent to a
    /// `command` judge's program.
    pub calls: u64,
    /// Their estimated tokens; None when the judge does not tell (a `command` judge's program).
    pub tokens: Option<Tokens>,
}

/// What judging some tasks takes: how many there are, how many the cache answers, and the
/// requests for the rest (None: a judge in this process, which makes no calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Planned {
    /// Tasks (or answers to decompose).
    pub tasks: usize,
    /// Of them, answered by the cache.
    pub cached: usize,
    /// The requests for the others.
    pub requests: Option<Requests>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_characters_over_four_rounded_up_and_priced_per_thousand() {
        let tokens = Tokens::of_chars(4001, 8);
        assert_eq!(
            tokens,
            Tokens {
                input: 1001,
                output: 2
            }
        );
        let price = Price {
            input: 0.5,
            output: 2.0,
        };
        assert!((price.cost(tokens) - (1001.0 * 0.5 + 2.0 * 2.0) / 1000.0).abs() < 1e-12);
        assert_eq!(
            tokens + Tokens::of_chars(4, 4),
            Tokens {
                input: 1002,
                output: 3
            }
        );
    }
}
