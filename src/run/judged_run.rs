//! A tier's run judged by one named judge at a time: what `judge-agreement` and `judge-eval
//! --labels` evaluate, with the config's corpus, cache and judge clients (built once, so that the
//! usage of every asking adds up) and the options of the config's judged metric.

use std::path::Path;

use crate::config::{Config, Tier};
use crate::error::Result;
use crate::evaluate::{EvalOptions, QueryScores, evaluate};
use crate::input::corpus::{self, Corpus};
use crate::input::qrels::Qrels;
use crate::input::{self, RunFormat};
use crate::judge::cache::JudgeCache;
use crate::judge::{Clients, Judge};
use crate::metrics::conventions::Conventions;
use crate::metrics::metric::{Metric, MetricSpec};
use crate::run::gate_options::default_threads;
use crate::tier;

/// A run of a tier, ready to be judged.
pub(crate) struct JudgedRun<'a> {
    config: &'a Config,
    tier: &'a Tier,
    qrels: Qrels,
    run: &'a Path,
    format: RunFormat,
    corpus: Option<Corpus>,
    cache: Option<JudgeCache>,
    clients: Clients,
    conventions: Conventions,
}

impl<'a> JudgedRun<'a> {
    /// The run `run` of the tier `tier_name` of `config` (its qrels, corpus and cache opened).
    pub(crate) fn open(config: &'a Config, tier_name: &str, run: &'a Path) -> Result<Self> {
        let tier = config.tier(tier_name)?;
        let qrels = tier::load(config, tier)?.qrels;
        let cache = crate::run::config_judge::run_cache(config)?;
        Ok(JudgedRun {
            config,
            tier,
            qrels,
            run,
            format: input::detect_run_format(run)?,
            corpus: corpus::read_optional(config.corpus.as_deref())?,
            cache,
            clients: config.judge_clients(&super::judge_events::printed()),
            conventions: tier.conventions,
        })
    }

    /// Adds the judge `judge` under `name` unless the config has a judge of that name.
    pub(crate) fn add_judge(&mut self, name: &str, judge: &Judge) {
        self.clients
            .judges
            .entry(name.to_string())
            .or_insert_with(|| judge.clone());
    }

    /// Every query's value of `metric` (with the config's options for it: contexts k, empty
    /// answers; claims from the sentence splitter, so that judges see the same claims) as
    /// judged by the judge named `judge`, and its claims.
    pub(crate) fn judge(&self, judge: &str, metric: Metric) -> Result<Vec<QueryScores>> {
        let base = self
            .tier
            .metrics
            .iter()
            .find(|spec| spec.metric == metric)
            .cloned()
            .unwrap_or_else(|| MetricSpec::new(metric));
        let options = EvalOptions {
            judge_repeat: 1,
            metrics: vec![MetricSpec {
                claims: Default::default(),
                judge: judge.to_string(),
                ..base
            }],
            judges: self.clients.judges.clone(),
            corpus: self.corpus.as_ref(),
            cache: self.cache.as_ref(),
            embeddings: None,
            chunk_separator: self.config.chunk_separator.clone(),
            threads: default_threads(),
            keep_ranked: 0,
            conventions: self.conventions,
        };
        Ok(evaluate(&self.qrels, self.run, self.format, &options)?.per_query)
    }
}
