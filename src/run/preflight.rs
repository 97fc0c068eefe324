//! The checks a gate run makes before its pipeline runs (which may take hours): slice fields, the
//! query texts the pipeline is sent, the API keys of the judges it will call, the baseline and the
//! labels (the baseline is loaded here once, for the whole run), and last the probes of the
//! judges' endpoints and programs ([`crate::run::probe`]). A job with a setup problem fails in seconds, not after the whole run; `validate` makes
//! the same checks.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use crate::baseline::results::Results;
use crate::config::{CacheMode, Config, Tier, locate};
use crate::error::{Error, Result};
use crate::http;
use crate::input::labels::Label;
use crate::input::qrels::{Qrels, QueryQrels};
use crate::metrics::metric::{AnswerMetric, Metric};
use crate::report::junit::RunClock;
use crate::run::judges_called::{
    embeddings_called, embeddings_used, judged_by_judges, judges_used,
};
use crate::run::probe;
use crate::run::rejudge::{self, Identities};
use crate::run::tier_baseline::{self, Baseline};
use crate::run::tier_labels;
use crate::suggest;
use crate::term;
use crate::tier;

/// What the checks read once for the rest of the run.
pub(crate) struct Checked {
    /// The tier's baseline (None: not compared, or the tier's first run).
    pub(crate) baseline: Option<Baseline>,
    /// The tier's human labels (None: the tier has none).
    pub(crate) labels: Option<Vec<Label>>,
}

/// How the gate will run, as far as its checks need to know.
pub(crate) struct Planned<'a> {
    /// Compared with the baseline (not a shard).
    pub compared: bool,
    /// The run file of `--run` (None: the configured pipeline runs).
    pub run: Option<&'a Path>,
    /// `--allow-judge-change`: judges other than the baseline's re-judge it instead of refusing.
    pub allow_judge_change: bool,
    /// The command that accepts the gate's results.
    pub accept_command: &'a str,
}

/// Every check; the baseline's only when the run will be compared with it (not a shard), the
/// query texts only when the configured pipeline runs (no `--run`). Returns the tier's baseline
/// and labels, read once here for the rest of the run, so that a bad file, a baseline the gate
/// would refuse or a judge endpoint that is down stops the run before the pipeline starts.
pub(crate) fn check(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    planned: &Planned<'_>,
) -> Result<Checked> {
    if let Some(error) = query_errors(config, tier, qrels, planned.run.is_none())
        .into_iter()
        .next()
    {
        return Err(error);
    }
    let labels = tier_labels::read(tier)?;
    check_api_keys(config, [tier])?;
    let baseline = if planned.compared {
        check_baseline(tier)?
    } else {
        None
    };
    if let Some(baseline) = &baseline
        && let Some(refusal) = judge_refusal(
            config,
            tier,
            &baseline.results,
            planned.allow_judge_change,
            Some(planned.accept_command),
        )
    {
        return Err(refusal);
    }
    check_clock()?;
    let run_file = planned
        .run
        .map(Path::to_path_buf)
        .or_else(|| config.run_file(&tier.name));
    probe::before_run(config, tier, qrels, run_file.as_deref())?;
    Ok(Checked { baseline, labels })
}

/// The checks on the tier's queries, every error (`validate` lists them all; the gate stops at
/// the first): slice fields every query lacks, and the texts the pipeline is sent when
/// `runs_pipeline`.
pub(crate) fn query_errors(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    runs_pipeline: bool,
) -> Vec<Error> {
    let mut errors = slice_field_errors(config, tier, qrels);
    errors.extend(answer_field_errors(config, tier, qrels));
    if let Some(adapter) = tier::text_needed_by(config).filter(|_| runs_pipeline)
        && let Err(error) = tier::require_texts(config, tier, qrels, adapter)
    {
        errors.push(error);
    }
    errors
}

/// junit.xml's timestamp: a bad SOURCE_DATE_EPOCH fails now, not after the run.
pub(crate) fn check_clock() -> Result<()> {
    RunClock::of_run(Instant::now()).map(drop)
}

/// A baseline that exists must be readable and of this tier; a missing one (the tier's first
/// run) is not an error yet: the run's metrics are measured and shown, to be accepted.
fn check_baseline(tier: &Tier) -> Result<Option<Baseline>> {
    let baseline = tier_baseline::load(
        tier,
        "fix the file or remove it (then accept a new baseline)",
    )?;
    if baseline.is_none() {
        term::note(format!(
            "tier `{}` has no baseline yet ({}): this run is measured but not gated",
            tier.name,
            tier.baseline.display()
        ));
    }
    Ok(baseline)
}

/// A config error for every slice field of `tier` that no query of `qrels` has, at its line and
/// column in the config (`slices:` or the tier's own), with the closest field the queries do have.
pub(crate) fn slice_field_errors(config: &Config, tier: &Tier, qrels: &Qrels) -> Vec<Error> {
    let fields: BTreeSet<&str> = qrels
        .queries()
        .iter()
        .flat_map(|q| q.attributes.keys().map(String::as_str))
        .collect();
    tier.slices
        .iter()
        .enumerate()
        .filter(|(_, field)| !fields.contains(field.as_str()))
        .map(|(index, field)| {
            let message = format!(
                "no query of {} has a `{field}` field: expected a field the qrels carry",
                qrels.path().display()
            );
            let error = Error::config(
                &config.path,
                format!("{}[{index}]", tier.slices_key),
                suggest::did_you_mean(message, field, fields.iter().copied()),
            );
            locate::locate_in_file(error, &config.path)
        })
        .collect()
}

/// Before the pipeline runs (which may take hours), the API key of every judge and embeddings
/// endpoint the `tiers` will call must be set: a fork pull request without the secret fails at
/// once, naming the variable. Replay mode calls nothing, so it needs no key.
pub(crate) fn check_api_keys<'a>(
    config: &Config,
    tiers: impl IntoIterator<Item = &'a Tier>,
) -> Result<()> {
    if config.cache.mode == CacheMode::Replay {
        return Ok(());
    }
    for tier in tiers {
        check_tier_api_keys(config, tier)?;
    }
    Ok(())
}

fn check_tier_api_keys(config: &Config, tier: &Tier) -> Result<()> {
    let judge_keys = judged_by_judges(config, tier).filter_map(|spec| {
        let variable = config.judges[&spec.judge].api_key_env()?;
        Some((format!("judges.{}", spec.judge), Some(variable)))
    });
    let embeddings_key = embeddings_called(config, tier).map(|spec| {
        (
            "embeddings".to_string(),
            spec.endpoint.api_key_env.as_deref(),
        )
    });
    for (key, variable) in judge_keys.chain(embeddings_key) {
        if let Err(message) = http::authorization(variable) {
            return Err(Error::config(
                &config.path,
                format!("{key}.api_key_env"),
                format!(
                    "{message}: set it before the gate runs the pipeline (on a fork pull request \
                     the repository's secrets are not available), or use `cache: {{ mode: replay }}` \
                     with a cache that holds every verdict"
                ),
            ));
        }
    }
    Ok(())
}

/// The field of the qrels an answer metric compares the answer with: its name in messages, and
/// whether a query has it.
type GoldField = (&'static str, fn(&QueryQrels) -> bool);

fn gold_field(metric: Metric) -> Option<GoldField> {
    match metric {
        Metric::Answer(AnswerMetric::Contains) => Some(("gold_answer_substring", |q| {
            q.gold_answer_substring.is_some()
        })),
        Metric::Answer(AnswerMetric::F1 | AnswerMetric::Exact) => {
            Some(("reference_answer", |q| q.reference_answer.is_some()))
        }
        _ => None,
    }
}

/// A config error for every answer metric of the tier whose gold field (`gold_answer_substring`
/// for `answer_contains`, `reference_answer` for `answer_f1` and `answer_exact`) no query of
/// `qrels` has: the metric would have no value on any query, which the gate finds only after
/// the pipeline ran.
pub(crate) fn answer_field_errors(config: &Config, tier: &Tier, qrels: &Qrels) -> Vec<Error> {
    tier.metrics
        .iter()
        .enumerate()
        .filter_map(|(index, spec)| Some((index, spec.metric, gold_field(spec.metric)?)))
        .filter(|(_, _, (_, has))| !qrels.queries().iter().any(has))
        .map(|(index, metric, (field, _))| {
            let error = Error::config(
                &config.path,
                format!("{}[{index}]", tier.metrics_key),
                format!(
                    "no query of {} has a `{field}`, which {metric} compares the answer with, so \
                     no query would have a value: add `{field}` to the queries, or remove \
                     {metric} from `metrics:` (and its rules)",
                    qrels.path().display()
                ),
            );
            locate::locate_in_file(error, &config.path)
        })
        .collect()
}

/// The refusal of judges or an embeddings endpoint other than the baseline's (unless
/// `allow_judge_change`), which the gate can know from the config and the baseline alone, before
/// its pipeline runs. `accept` is the command that accepts a gate's results (None outside a gate).
pub(crate) fn judge_refusal(
    config: &Config,
    tier: &Tier,
    baseline: &Results,
    allow_judge_change: bool,
    accept: Option<&str>,
) -> Option<Error> {
    let configured = Identities {
        judges: judges_used(config, tier),
        embeddings: embeddings_used(config, tier),
    };
    let changes = rejudge::differences(&Identities::of(baseline), &configured);
    (!changes.is_empty() && !allow_judge_change).then(|| rejudge::refused(&changes, accept))
}

/// For `validate`: a baseline computed with other conventions (relevance level, no_relevant)
/// than the tier's, which the gate refuses after its run (exit 2), so that its results can be
/// accepted as the new baseline.
pub(crate) fn conventions_problem(tier: &Tier, baseline: &Results) -> Option<String> {
    let differences = baseline
        .provenance
        .conventions()
        .differences(&tier.conventions, ["the baseline", "the tier's config"]);
    (!differences.is_empty()).then(|| {
        format!(
            "{}: {}: values computed with another relevance_level or no_relevant are not \
             comparable, so `ragate gate --tier {2}` exits 2 after its run: accept its results \
             as the new baseline (`ragate baseline accept --tier {2}`)",
            tier.baseline.display(),
            differences.join("; "),
            tier.name
        )
    })
}
