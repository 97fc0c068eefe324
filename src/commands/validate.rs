//! `ragate validate`: checks the config, every tier's qrels and baseline, and lints the qrels.

use std::collections::BTreeMap;

use serde_json::json;

use crate::baseline::pairing::{self, Pairing};
use crate::baseline::results::Results;
use crate::cli::{GateFormat, ValidateArgs};
use crate::config::{self, Budget, Config, Tier};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::gate::{empty_answers, zero_limit};
use crate::input::corpus::{self, Corpus};
use crate::input::qrels::Qrels;
use crate::input::text_file::TextFile;
use crate::input::{self, RunFormat};
use crate::judge::openai::OpenAiSpec;
use crate::outputs::error_output::with_causes;
use crate::outputs::stdout::write_document;
use crate::outputs::stdout::write_human;
use crate::run::judges_called::{embeddings_called, judged_by_judges};
use crate::run::preflight;
use crate::run::tier_baseline;
use crate::run::tier_labels;
use crate::suggest;
use crate::term;
use crate::testset::model_judgments;
use crate::tier::{self, TierQueries};

/// What validation found: errors (exit 2) and warnings.
#[derive(Debug, Default)]
struct Findings {
    problems: Vec<String>,
    lints: Vec<String>,
}

pub(super) fn run(args: ValidateArgs) -> Result<i32> {
    let config = config::load(&args.config)?;
    let corpus = corpus::read_optional(config.corpus.as_deref())?;
    let mut findings = Findings::default();
    for tier in config.tiers.values() {
        check_tier(&config, tier, corpus.as_ref(), &args, &mut findings);
    }
    check_environment(&config, &mut findings);
    let Findings { problems, lints } = findings;
    match args.format {
        // The findings are diagnostics, on stderr as `warning:` and `error:` lines (errors also
        // under --quiet); stdout has the budgets and the count of tiers, errors and warnings.
        GateFormat::Table => {
            lints.iter().for_each(term::warning);
            problems.iter().for_each(term::error_message);
            let mut out = String::new();
            for (tier, budget) in budgets(&config) {
                out.push_str(&format!("tier `{tier}`: {}\n", describe_budget(budget)));
            }
            out.push_str(&format!(
                "{}: {} tiers, {} errors, {} warnings\n",
                config.path.display(),
                config.tiers.len(),
                problems.len(),
                lints.len()
            ));
            write_human(&out)?;
        }
        GateFormat::Json => {
            let mut document = json!({
                "config": config.path.display().to_string(),
                "tiers": config.tiers.keys().collect::<Vec<_>>(),
                "errors": problems,
                "warnings": lints,
            });
            // Only when configured: a config without a budget prints what it always did.
            let budgets: serde_json::Map<String, serde_json::Value> = budgets(&config)
                .map(|(tier, budget)| {
                    let value = json!({
                        "key": budget.key,
                        "max_calls": budget.max_calls,
                        "max_cost": budget.max_cost,
                    });
                    (tier.to_string(), value)
                })
                .collect();
            if !budgets.is_empty() {
                document["budgets"] = budgets.into();
            }
            write_document(&crate::json_text::document(&document))?;
        }
    }
    Ok(if problems.is_empty() {
        exit_code::SUCCESS
    } else {
        exit_code::ERROR
    })
}

/// The tiers with a `gate.budget`, by name.
fn budgets(config: &Config) -> impl Iterator<Item = (&str, &Budget)> {
    config
        .tiers
        .values()
        .filter_map(|tier| Some((tier.name.as_str(), tier.budget.as_ref()?)))
}

/// `budget (gate.budget): max_calls 500, max_cost 2.5`.
fn describe_budget(budget: &Budget) -> String {
    let limits: Vec<String> = [
        budget.max_calls.map(|max| format!("max_calls {max}")),
        budget.max_cost.map(|max| format!("max_cost {max}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    format!(
        "budget ({}): {}, checked by `ragate gate` before its first judge call",
        budget.key,
        limits.join(", ")
    )
}

/// A `max_cost` the gate cannot check: an endpoint it calls has no price (the gate would stop
/// before its first call).
fn unpriced(config: &Config, tier: &Tier) -> Vec<String> {
    let Some(budget) = tier.budget.as_ref().filter(|b| b.max_cost.is_some()) else {
        return Vec::new();
    };
    let judges = judged_by_judges(config, tier)
        .map(|spec| spec.judge.as_str())
        .filter(|name| {
            let spec = &config.judges[*name];
            spec.settings::<OpenAiSpec>().is_some() && spec.cost_hints().price.is_none()
        })
        .map(|name| format!("judges.{name}"));
    let embeddings = embeddings_called(config, tier)
        .filter(|spec| spec.cost.price.is_none())
        .map(|_| "embeddings".to_string());
    let keys: std::collections::BTreeSet<String> = judges.chain(embeddings).collect();
    keys.into_iter()
        .map(|key| {
            format!(
                "tier `{}`: {}.max_cost needs `{key}.price_per_1k_tokens`: without it `ragate gate` \
                 stops before its first call to it",
                tier.name, budget.key
            )
        })
        .collect()
}

/// What the gate checks before its pipeline runs that depends on the environment, not on the
/// repository: a bad SOURCE_DATE_EPOCH is an error; an API key that is not set is a warning (a
/// pre-commit hook or a fork has no secrets, but the gate would refuse to start without it).
fn check_environment(config: &Config, findings: &mut Findings) {
    if let Err(error) = preflight::check_clock() {
        findings.problems.push(error.to_string());
    }
    // The key path only, never the text after `api_key_env:`, which a slip
    // (`api_key_env: ${OPENAI_API_KEY}`) makes the key itself.
    if let Err(Error::Config { path, key, .. }) =
        preflight::check_api_keys(config, config.tiers.values())
    {
        findings.lints.push(format!(
            "{}: {key}: the variable it names is not set in this environment: `ragate gate` \
             would stop before its pipeline runs (set it, or use `cache: {{ mode: replay }}`)",
            path.display()
        ));
    }
}

/// One tier: its qrels read (with the texts of its `queries:` file), the gate's own checks on
/// them (slice fields present, every query with a text when the pipeline is sent texts, the
/// `stratify:` field present, the gold fields of the answer metrics), its labels readable, lints
/// on the qrels, rules naming slice values that exist, its baseline readable, of this tier, judged
/// by the configured judges, with the tier's conventions and sample, and the notices of its gate
/// settings.
fn check_tier(
    config: &Config,
    tier: &Tier,
    corpus: Option<&Corpus>,
    args: &ValidateArgs,
    findings: &mut Findings,
) {
    let whole = match tier::load_source(tier) {
        Ok(queries) => {
            check_queries(config, tier, &queries, corpus, findings);
            Some(queries)
        }
        Err(error) => {
            tier_problem(findings, tier, &error);
            None
        }
    };
    if let Err(error) = tier_labels::read(tier) {
        tier_problem(findings, tier, &error);
    }
    // The tier's queries as the gate evaluates them (a sample that cannot be drawn is left to
    // the gate, which says why).
    let queries = whole.and_then(|whole| tier::sample(config, tier, whole).ok());
    if let Some(queries) = &queries
        && let Some(problem) = run_file_without_answers(config, tier, &queries.qrels)
    {
        findings
            .problems
            .push(format!("tier `{}`: {problem}", tier.name));
    }
    check_baseline(config, tier, queries, args.allow_judge_change, findings);
    findings.lints.extend(unpriced(config, tier));
    for notice in &tier.gate.notices {
        if !findings.lints.contains(notice) {
            findings.lints.push(notice.clone());
        }
    }
}

/// A problem of the tier, with its causes.
fn tier_problem(findings: &mut Findings, tier: &Tier, error: &Error) {
    findings
        .problems
        .push(format!("tier `{}`: {}", tier.name, with_causes(error)));
}

/// The tier's qrels: the gate's own checks on them, the lints, stale model judgments, slice
/// values of the rules, and zero-limit warnings.
fn check_queries(
    config: &Config,
    tier: &Tier,
    queries: &TierQueries,
    corpus: Option<&Corpus>,
    findings: &mut Findings,
) {
    let qrels = &queries.qrels;
    for error in preflight::query_errors(config, tier, qrels, true)
        .into_iter()
        .chain(tier::stratify_error(config, tier, qrels))
    {
        tier_problem(findings, tier, &error);
    }
    findings
        .lints
        .extend(tier::unjudged_note(tier, queries.unjudged));
    lint_qrels(tier, qrels, corpus, &mut findings.lints);
    findings.lints.extend(model_judgments::stale_warning(
        tier,
        qrels,
        std::time::SystemTime::now(),
    ));
    check_slices(tier, qrels, findings);
    let judged = qrels.queries().iter().filter(|q| q.num_relevant() > 0);
    findings
        .lints
        .extend(zero_limit::config_warnings(tier, judged.count()));
}

/// The tier's baseline: readable, of this tier, and still fitting its queries (`queries`, after
/// sampling, when they could be read and drawn); a tier without one yet is a lint.
fn check_baseline(
    config: &Config,
    tier: &Tier,
    queries: Option<TierQueries>,
    allow_judge_change: bool,
    findings: &mut Findings,
) {
    let baseline = tier_baseline::load(
        tier,
        &format!(
            "run `ragate gate --tier {0}` and `ragate baseline accept --tier {0}`",
            tier.name
        ),
    );
    match baseline {
        Ok(Some(baseline)) => {
            let refusal =
                preflight::judge_refusal(config, tier, &baseline.results, allow_judge_change, None);
            if let Some(refusal) = refusal {
                tier_problem(findings, tier, &refusal);
            }
            if let Some(problem) = preflight::conventions_problem(tier, &baseline.results) {
                findings
                    .problems
                    .push(format!("tier `{}`: {problem}", tier.name));
            }
            if let Some(queries) = queries {
                check_pairing(tier, queries, &baseline.results, findings);
            }
        }
        // A tier not accepted yet (right after `ragate init`, say) is a valid config: its gate
        // measures and exits 2 until a baseline is accepted, so fail-closed holds there.
        Ok(None) => findings.lints.push(format!(
            "tier `{0}`: no baseline yet ({1}): `ragate gate --tier {0}` exits 2 until \
             `ragate baseline accept --tier {0}`",
            tier.name,
            tier.baseline.display()
        )),
        Err(error) => findings
            .problems
            .push(format!("tier `{}`: {error}", tier.name)),
    }
}

/// The baseline must still fit the tier's queries (`queries`, after sampling) and rules, as the
/// gate pairs them: an error with the next step when it does not, a warning when only part of
/// the queries pair.
fn check_pairing(tier: &Tier, queries: TierQueries, baseline: &Results, findings: &mut Findings) {
    let changed = pairing::changes(
        &baseline.provenance,
        &queries.file_sha256,
        &tier.config_hash,
        tier::sample_description(tier).as_deref(),
    );
    // The gate's results hold the queries with a relevant doc; an old baseline gets its
    // `empty_answers` values there too.
    let qids = queries
        .qrels
        .queries()
        .iter()
        .filter(|q| q.num_relevant() > 0)
        .map(|q| q.qid.as_str());
    let baseline = empty_answers::with_values(baseline, "the baseline", &mut Vec::new());
    let pairing = Pairing::of(
        &baseline,
        qids,
        &pairing::gated_metrics(tier),
        (tier.gate.min_queries, tier.gate.min_share),
    );
    let path = tier.baseline.display();
    if let Some(problem) = pairing.problem(&tier.name, changed.as_deref()) {
        findings.problems.push(format!(
            "tier `{0}`: {path}: {problem}: run `ragate gate --tier {0}`, then `ragate baseline \
             accept --tier {0}` to replace it",
            tier.name
        ));
    } else if let Some(partial) = pairing.partial(&tier.name) {
        findings
            .lints
            .push(format!("tier `{}`: {path}: {partial}", tier.name));
    }
}

/// Queries without a relevant doc (excluded from the metrics), gold docs missing from the corpus.
fn lint_qrels(tier: &Tier, qrels: &Qrels, corpus: Option<&Corpus>, lints: &mut Vec<String>) {
    let empty: Vec<&str> = qrels
        .queries()
        .iter()
        .filter(|q| q.num_relevant() == 0)
        .map(|q| q.qid.as_str())
        .collect();
    if !empty.is_empty() {
        lints.push(format!(
            "tier `{}`: {} queries have no relevant doc and will be excluded, the first: `{}`",
            tier.name,
            empty.len(),
            crate::error::shorten(empty[0])
        ));
    }
    if let Some(corpus) = corpus {
        let missing: Vec<String> = qrels
            .queries()
            .iter()
            .flat_map(|q| {
                q.judgments
                    .iter()
                    .filter(|(doc, j)| j.relevant && corpus.get(doc).is_none())
                    .map(move |(doc, _)| {
                        format!(
                            "{}/{}",
                            crate::error::shorten(&q.qid),
                            crate::error::shorten(doc)
                        )
                    })
            })
            .collect();
        if let Some(first) = missing.first() {
            lints.push(format!(
                "tier `{}`: {} gold docs are not in the corpus, the first: {first}",
                tier.name,
                missing.len()
            ));
        }
    }
}

/// Rules must name slice values some query has; slices smaller than `min_queries` are skipped.
fn check_slices(tier: &Tier, qrels: &Qrels, findings: &mut Findings) {
    let mut sizes: BTreeMap<String, usize> = BTreeMap::new();
    for query in qrels.queries() {
        for field in &tier.slices {
            if let Some(value) = query.attributes.get(field) {
                *sizes.entry(format!("{field}={value}")).or_default() += 1;
            }
        }
    }
    for rule in &tier.gate.rules {
        let Some(value) = &rule.slice else { continue };
        let named = value.to_string();
        if !sizes.contains_key(&named) {
            let existing = if sizes.is_empty() {
                "no query has a value of a `slices:` field".to_string()
            } else {
                format!(
                    "the slice values are {}",
                    sizes.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            };
            findings.problems.push(suggest::did_you_mean(
                format!(
                    "tier `{}`: the rule for {} names {named}, which no query has ({existing})",
                    tier.name, rule.metric,
                ),
                &named,
                sizes.keys().map(String::as_str),
            ));
        }
    }
    for (slice, size) in sizes.iter().filter(|(_, n)| **n < tier.gate.min_queries) {
        findings.lints.push(format!(
            "tier `{}`: slice {slice} has {size} queries, fewer than min_queries {}: its checks will be skipped",
            tier.name, tier.gate.min_queries
        ));
    }
}

/// The tier's metrics that read the answer: evaluation asks every run line of a tier query for
/// an `answer` when there is one.
fn answer_reading_metrics(tier: &Tier) -> Vec<String> {
    tier.metrics
        .iter()
        .filter(|spec| spec.metric.answer_level().is_some())
        .map(|spec| spec.metric.to_string())
        .collect()
}

/// A run file (`pipeline: { run_file }`) that the gate refuses for the tier's answer metrics: a
/// TREC run (no answers), or a line of one of the tier's queries (`qrels`, after sampling)
/// without `answer`. None when the tier reads no answer, the run file is not there yet (the gate
/// names it) or cannot be read (the gate says why), or every such line has an answer.
fn run_file_without_answers(config: &Config, tier: &Tier, qrels: &Qrels) -> Option<String> {
    let path = config.run_file(&tier.name).filter(|path| path.is_file())?;
    let reading = answer_reading_metrics(tier);
    if reading.is_empty() {
        return None;
    }
    let lacking = match input::detect_run_format(&path).ok()? {
        RunFormat::Trec => "a TREC run has no answers".to_string(),
        RunFormat::Native => {
            let queries = input::run::read(&TextFile::read(&path).ok()?).ok()?;
            let unanswered = queries
                .iter()
                .find(|q| q.answer.is_none() && qrels.position(&q.qid).is_some())?;
            format!(
                "query `{}` has no \"answer\" (nor may any line of the tier's queries lack one)",
                crate::error::shorten(&unanswered.qid)
            )
        }
    };
    Some(format!(
        "{}: {lacking}, and {} need{} answers: give the tier its own `metrics:` without them (a \
         retrieval-only tier), or write the answers into the run",
        path.display(),
        reading.join(", "),
        if reading.len() == 1 { "s" } else { "" }
    ))
}
