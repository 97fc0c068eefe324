//! A plan's numbers: per judge (and the embeddings endpoint) the tasks a gate run needs, the
//! cache hits, the calls for the rest, their tokens, cost and wall time, from the
//! [`JudgingPlan`] that the gate's own evaluation code builds. `ragate plan` shows them; the
//! gate's budget checks them.

use serde::Serialize;

use crate::config::{CacheMode, Config, Tier};
use crate::error::Result;
use crate::evaluate::JudgingPlan;
use crate::judge::cache::JudgeCache;
use crate::judge::cost::{CostHints, Planned, Tokens};
use crate::judge::openai::OpenAiSpec;
use crate::judge::{Clients, Task};
use crate::metrics::claims::ClaimSplitter;
use crate::metrics::metric::{JudgedMetric, Metric, MetricSpec};

/// How a plan knows which tasks the cache answers.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Lookup<'a> {
    /// By the cache's own keys (None: no cache file, or `mode: off`: nothing is a hit).
    Cache(Option<&'a JudgeCache>),
    /// Not at all: the answers are stand-ins (the baseline's) for the pipeline's, which are
    /// not known before it runs; every task counts as asked.
    Unknown,
}

/// How often the judges see the planned answers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Askings {
    /// Pipeline runs (`repeats:`): the later ones are planned like the first, all asked.
    pub runs: usize,
    /// Askings of the first run's answers (`judge_repeats:`), each cached apart.
    pub judge_repeats: usize,
}

/// One judge's (or the embeddings endpoint's) share of a gate run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Line {
    /// The judge's name in the config, or `embeddings`.
    pub judge: String,
    /// Its kind (`lexical`, `openai`, `command`, `nli`, `embeddings`).
    pub kind: String,
    /// Support tasks: one per claim of an answer (per faithfulness metric's contexts).
    pub support: usize,
    /// Relevance tasks: one per answer (judge-based `answer_relevance`) or retrieved chunk
    /// (judged `context_precision`).
    pub relevance: usize,
    /// Answers decomposed into claims (`claims: llm`).
    pub decompositions: usize,
    /// Texts embedded.
    pub embeddings: usize,
    /// All of the above.
    pub tasks: usize,
    /// Tasks the cache answers (None: not known).
    pub cache_hits: Option<usize>,
    /// Calls for the others: HTTP requests (an `openai` judge sends one answer's claims in
    /// one), tasks sent to a `command` judge's program, none for a judge in this process.
    pub calls: u64,
    /// Answers whose claims are not known before the judge splits them (`claims: llm`): their
    /// support tasks and tokens are not counted, so those counts are lower bounds (an `openai`
    /// judge's calls for them are counted: at most one per answer and contexts).
    pub undecomposed: usize,
    /// Estimated tokens of the calls (None: a `command` judge's program does not tell).
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// At `price_per_1k_tokens` (None: no price configured, or tokens not known).
    pub cost: Option<f64>,
    /// Calls in flight at once.
    pub concurrency: Option<usize>,
    /// The configured seconds per call.
    pub latency_s: Option<f64>,
    /// Wall time of the calls: rounds of `concurrency` calls times the latency (None: no
    /// latency configured).
    pub seconds: Option<f64>,
}

/// What a plan's lines add up to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Total {
    pub tasks: usize,
    pub cache_hits: Option<usize>,
    pub calls: u64,
    /// Some line does not count every task (answers not decomposed yet).
    pub at_least: bool,
    /// Over the lines whose tokens are known.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// None when a line that calls an endpoint has no price.
    pub cost: Option<f64>,
    /// None when a line with calls has no latency.
    pub seconds: Option<f64>,
}

/// What judging some tasks takes, summed over runs and askings.
#[derive(Debug, Default)]
struct Sum {
    tasks: usize,
    cached: usize,
    calls: u64,
    tokens: Option<Tokens>,
    told: bool,
}

impl Sum {
    fn new() -> Sum {
        Sum {
            tokens: Some(Tokens::default()),
            told: true,
            ..Sum::default()
        }
    }

    fn add(&mut self, planned: Planned) {
        self.tasks += planned.tasks;
        self.cached += planned.cached;
        if let Some(requests) = planned.requests {
            self.calls += requests.calls;
            match requests.tokens {
                Some(tokens) => self.tokens = self.tokens.map(|sum| sum + tokens),
                None => self.told = false,
            }
        }
    }
}

impl Line {
    /// The line of `judge` (of `kind`), counts to fill in.
    pub(crate) fn named(judge: &str, kind: &str, concurrency: Option<usize>) -> Line {
        Line {
            judge: judge.to_string(),
            kind: kind.to_string(),
            support: 0,
            relevance: 0,
            decompositions: 0,
            embeddings: 0,
            tasks: 0,
            cache_hits: None,
            calls: 0,
            undecomposed: 0,
            input_tokens: None,
            output_tokens: None,
            cost: None,
            concurrency,
            latency_s: None,
            seconds: None,
        }
    }
}

/// How the askings of a plan reach the cache.
#[derive(Debug, Clone, Copy)]
struct Reach<'a> {
    /// The cache the first asking of the first run reads.
    cache: Option<&'a JudgeCache>,
    lookup: Lookup<'a>,
    /// Later askings of the first run's answers, and later runs.
    later_askings: usize,
    later_runs: usize,
    /// How often what is cached apart from the askings (decompositions, embeddings) is asked
    /// again: in later runs, and in later askings when nothing is kept (`mode: off`).
    again: usize,
}

/// The plan's lines for `plan`, the judging of the first run's answers of `tier` under `config`
/// (`clients` its judges), with cache hits as `lookup` finds them.
pub(crate) fn lines(
    (config, tier): (&Config, &Tier),
    clients: &Clients,
    plan: &JudgingPlan,
    lookup: Lookup<'_>,
    askings: Askings,
) -> Result<Vec<Line>> {
    let later_askings = askings.judge_repeats.saturating_sub(1);
    let later_runs = askings.runs.saturating_sub(1);
    // What one asking decomposed or embedded is cached for the next unless the cache is off.
    let kept = config.cache.mode != CacheMode::Off;
    let reach = Reach {
        cache: match lookup {
            Lookup::Cache(cache) => cache,
            Lookup::Unknown => None,
        },
        lookup,
        later_askings,
        later_runs,
        again: later_runs + if kept { 0 } else { later_askings },
    };
    let names: std::collections::BTreeSet<&String> = plan
        .tasks
        .keys()
        .chain(plan.decompositions.keys())
        .collect();
    let mut lines = names
        .into_iter()
        .map(|name| judge_line((config, tier), clients, plan, name, reach))
        .collect::<Result<Vec<Line>>>()?;
    if let (Some(client), Some(spec)) = (&clients.embeddings, &config.embeddings)
        && !plan.embedded.is_empty()
    {
        let mut sum = Sum::new();
        sum.add(client.plan_cached(&plan.embedded, reach.cache)?);
        for _ in 0..reach.again {
            sum.add(client.plan_cached(&plan.embedded, None)?);
        }
        let mut embeddings =
            Line::named("embeddings", "embeddings", Some(spec.endpoint.concurrency));
        embeddings.embeddings = sum.tasks;
        lines.push(line(embeddings, sum, spec.cost, lookup));
    }
    Ok(lines)
}

/// The line of the judge `name`: its tasks in every asking and run, and its decompositions.
fn judge_line(
    (config, tier): (&Config, &Tier),
    clients: &Clients,
    plan: &JudgingPlan,
    name: &str,
    reach: Reach<'_>,
) -> Result<Line> {
    let judge = &clients.judges[name];
    let spec = &config.judges[name];
    let mut sum = Sum::new();
    let tasks = plan.tasks.get(name).map_or(&[][..], Vec::as_slice);
    for asking in 1..=1 + reach.later_askings {
        sum.add(judge.plan_cached(tasks, reach.cache, asking)?);
    }
    for _ in 0..reach.later_runs {
        sum.add(judge.plan_cached(tasks, None, 1)?);
    }
    let decompositions = plan.decompositions.get(name).map_or(&[][..], Vec::as_slice);
    let missing = match reach.lookup {
        Lookup::Cache(_) => plan.undecomposed.get(name).map_or(&[][..], Vec::as_slice),
        Lookup::Unknown => decompositions,
    };
    sum.add(Planned {
        tasks: decompositions.len(),
        cached: decompositions.len() - missing.len(),
        requests: judge.decompose_requests(missing),
    });
    for _ in 0..reach.again {
        sum.add(Planned {
            tasks: decompositions.len(),
            cached: 0,
            requests: judge.decompose_requests(decompositions),
        });
    }
    let runs = 1 + reach.later_askings + reach.later_runs;
    let count = |support: bool| {
        runs * tasks
            .iter()
            .filter(|t| matches!(t, Task::Support { .. }) == support)
            .count()
    };
    let concurrency = spec
        .settings::<OpenAiSpec>()
        .map(|s| s.endpoint.concurrency);
    let undecomposed = plan.undecomposed.get(name).map_or(0, Vec::len);
    if concurrency.is_some() {
        // An `openai` judge sends an answer's claims in one call per contexts: counted, at most
        // one each, though the claims are not known yet.
        sum.calls += (runs * undecomposed * claims_contexts(&tier.metrics, name)) as u64;
    }
    let mut named = Line::named(name, judge.kind(), concurrency);
    named.support = count(true);
    named.relevance = count(false);
    named.decompositions = (1 + reach.again) * decompositions.len();
    named.undecomposed = (1 + reach.later_runs) * undecomposed;
    Ok(line(named, sum, spec.cost_hints(), reach.lookup))
}

/// How many contexts the judge `name` judges an answer's claims (`claims: llm`) against: one
/// per faithfulness metric's `k` (an `openai` call each).
fn claims_contexts(metrics: &[MetricSpec], name: &str) -> usize {
    let ks: std::collections::BTreeSet<usize> = metrics
        .iter()
        .filter(|spec| spec.judge == name && spec.claims == ClaimSplitter::Llm)
        .filter(|spec| {
            matches!(
                spec.metric,
                Metric::Judged(JudgedMetric::Faithfulness | JudgedMetric::FaithfulnessGraded)
            )
        })
        .map(|spec| spec.contexts_k)
        .collect();
    ks.len()
}

/// `line` with the sums, cost and wall time filled in.
fn line(mut line: Line, sum: Sum, hints: CostHints, lookup: Lookup<'_>) -> Line {
    line.tasks = sum.tasks;
    line.cache_hits = match lookup {
        Lookup::Cache(_) => Some(sum.cached),
        Lookup::Unknown => None,
    };
    line.calls = sum.calls;
    let tokens = sum.tokens.filter(|_| sum.told);
    line.input_tokens = tokens.map(|t| t.input);
    line.output_tokens = tokens.map(|t| t.output);
    line.cost = match (tokens, hints.price) {
        (Some(tokens), _) if tokens == Tokens::default() => Some(0.0),
        (Some(tokens), Some(price)) => Some(price.cost(tokens)),
        _ => None,
    };
    line.latency_s = hints.latency_s;
    line.seconds = if sum.calls == 0 {
        Some(0.0)
    } else {
        match (hints.latency_s, line.concurrency) {
            (Some(latency), Some(concurrency)) => {
                Some(sum.calls.div_ceil(concurrency.max(1) as u64) as f64 * latency)
            }
            _ => None,
        }
    };
    line
}

/// The sums of `lines`.
pub(crate) fn total(lines: &[Line]) -> Total {
    let tokens_known = lines.iter().filter(|l| l.input_tokens.is_some());
    Total {
        tasks: lines.iter().map(|l| l.tasks).sum(),
        cache_hits: lines.iter().map(|l| l.cache_hits).sum(),
        calls: lines.iter().map(|l| l.calls).sum(),
        at_least: lines.iter().any(|l| l.undecomposed > 0),
        input_tokens: tokens_known.clone().filter_map(|l| l.input_tokens).sum(),
        output_tokens: tokens_known.filter_map(|l| l.output_tokens).sum(),
        // A command judge's program (tokens not told) is outside what ragate prices.
        cost: lines
            .iter()
            .filter(|l| l.input_tokens.is_some())
            .map(|l| l.cost)
            .sum(),
        seconds: lines.iter().map(|l| l.seconds).sum(),
    }
}

/// What the numbers of `lines` leave out or cannot tell, one sentence each.
pub(crate) fn notes(lines: &[Line]) -> Vec<String> {
    let mut notes = Vec::new();
    for line in lines {
        let name = &line.judge;
        let key = if line.kind == "embeddings" {
            "embeddings".to_string()
        } else {
            format!("judges.{name}")
        };
        if line.undecomposed > 0 {
            notes.push(format!(
                "`{name}`: the claims of {} answers are not known until the judge splits them \
                 (`claims: llm`, not in the cache): their support tasks, tokens and cost are \
                 not counted (an `openai` judge's calls are: at most one per answer and \
                 contexts)",
                line.undecomposed
            ));
        }
        if line.calls == 0 {
            continue;
        }
        if line.input_tokens.is_none() {
            notes.push(format!(
                "`{name}`: a {} judge's program does not tell its tokens or cost: it is left out \
                 of the cost (`max_calls` counts its tasks)",
                line.kind
            ));
            continue;
        }
        if line.cost.is_none() {
            notes.push(format!(
                "`{name}`: no price: set `{key}.price_per_1k_tokens: {{ input: ..., output: ... }}` \
                 for its cost"
            ));
        }
        if line.seconds.is_none() {
            notes.push(format!(
                "`{name}`: {} calls at concurrency {}: set `{key}.latency_s` (seconds per call) \
                 for a wall time",
                line.calls,
                line.concurrency.unwrap_or(1)
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::cost::{Price, Requests};

    fn blank(judge: &str, kind: &str, concurrency: Option<usize>) -> Line {
        Line::named(judge, kind, concurrency)
    }

    fn sum(calls: u64, tokens: Option<Tokens>) -> Sum {
        let mut sum = Sum::new();
        sum.add(Planned {
            tasks: 10,
            cached: 10 - calls as usize,
            requests: Some(Requests { calls, tokens }),
        });
        sum
    }

    #[test]
    fn a_line_prices_its_tokens_and_times_its_rounds_of_calls() {
        let hints = CostHints {
            price: Some(Price {
                input: 0.5,
                output: 1.5,
            }),
            latency_s: Some(2.0),
        };
        let tokens = Tokens {
            input: 1000,
            output: 100,
        };
        let cache = Lookup::Cache(None);
        let priced = line(
            blank("llm", "openai", Some(4)),
            sum(5, Some(tokens)),
            hints,
            cache,
        );
        assert_eq!(
            (priced.tasks, priced.cache_hits, priced.calls),
            (10, Some(5), 5)
        );
        assert!((priced.cost.unwrap() - 0.65).abs() < 1e-12);
        assert_eq!(
            priced.seconds,
            Some(4.0),
            "5 calls at 4 at a time: 2 rounds of 2 s"
        );
        let unknown = line(
            blank("llm", "openai", Some(4)),
            sum(5, Some(tokens)),
            CostHints::default(),
            Lookup::Unknown,
        );
        assert_eq!(
            (unknown.cache_hits, unknown.cost, unknown.seconds),
            (None, None, None)
        );
        let program = line(blank("cmd", "command", None), sum(3, None), hints, cache);
        assert_eq!((program.input_tokens, program.cost), (None, None));
        let cached = line(
            blank("llm", "openai", Some(4)),
            sum(0, Some(Tokens::default())),
            CostHints::default(),
            cache,
        );
        assert_eq!(
            (cached.cost, cached.seconds),
            (Some(0.0), Some(0.0)),
            "nothing asked costs nothing"
        );
    }

    #[test]
    fn totals_are_unknown_when_a_called_endpoint_has_no_price_or_latency() {
        let mut llm = blank("llm", "openai", Some(2));
        (llm.tasks, llm.cache_hits, llm.calls) = (10, Some(4), 6);
        (llm.input_tokens, llm.output_tokens) = (Some(300), Some(30));
        let mut program = blank("cmd", "command", None);
        (program.tasks, program.cache_hits, program.calls) = (5, Some(0), 5);
        let lines = vec![llm.clone(), program];
        let sums = total(&lines);
        assert_eq!((sums.tasks, sums.cache_hits, sums.calls), (15, Some(4), 11));
        assert_eq!((sums.input_tokens, sums.output_tokens), (300, 30));
        assert_eq!((sums.cost, sums.seconds), (None, None));
        let told = notes(&lines).join("\n");
        assert!(told.contains("judges.llm.price_per_1k_tokens"), "{told}");
        assert!(
            told.contains("6 calls at concurrency 2") && told.contains("judges.llm.latency_s"),
            "{told}"
        );
        assert!(
            told.contains("`cmd`: a command judge's program does not tell"),
            "{told}"
        );

        (llm.cost, llm.seconds) = (Some(0.25), Some(3.0));
        let priced = total(&[llm.clone()]);
        assert_eq!((priced.cost, priced.seconds), (Some(0.25), Some(3.0)));
        assert!(!priced.at_least);
        llm.undecomposed = 2;
        assert!(total(&[llm.clone()]).at_least);
        assert!(notes(&[llm])[0].contains("the claims of 2 answers are not known"));
    }
}
