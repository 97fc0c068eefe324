//! `ragate compare A.json B.json`: the gate's paired comparison between any two results files.

use std::time::Instant;

use crate::baseline::results::Results;
use crate::baseline::store;
use crate::cli::{CompareArgs, GateFormat};
use crate::config::{self, Config, Tier};
use crate::error::{Error, Result};
use crate::gate::decision::{self, DecisionInputs, MismatchHint, NextStep};
use crate::input::corpus;
use crate::outputs::output_files;
use crate::outputs::stdout::write_document;
use crate::outputs::stdout::write_human;
use crate::report::{gate_json, gate_table, junit};
use crate::run::judged_depth;
use crate::run::judges_called::{embeddings_used, judges_used};
use crate::run::rejudge::{self, Identities, Rejudging};
use crate::run::tier_labels;
use crate::term::{self, Paint};
use crate::tier;

pub(super) fn run(args: CompareArgs) -> Result<i32> {
    let started = Instant::now();
    let config = config::load(&args.config)?;
    let (a, b) = read_same_tier(&args)?;
    let tier = config.tier(&a.tier)?;
    if let Some(path) = &args.junit {
        let mut inputs = output_files::inputs(&config, tier, None);
        inputs.push(output_files::input(&args.a, "the first results (A)"));
        inputs.push(output_files::input(&args.b, "the second results (B)"));
        output_files::refuse_input("--junit", path, &inputs)?;
    }
    refuse_other_conventions(&a, &b)?;
    let changes = rejudge::differences(&Identities::of(&a), &Identities::of(&b));
    let a = if changes.is_empty() {
        a
    } else if !args.allow_judge_change {
        return Err(rejudge::refused(&changes, None));
    } else {
        rejudge_reference(&config, tier, &a, &b, &args)?
    };
    let labels = tier_labels::read(tier)?;
    let calibrations = tier_labels::calibrations(labels.as_deref(), &tier.metrics, &b);
    let rejudged = rejudged_note(&args, &changes);
    let next_step = format!(
        "compare results of the same queries and metrics, or gate {} against a baseline \
         accepted from it",
        args.b.display()
    );
    let (judged_at_k, model_judged_at_k) = judged_depth::of_stored(tier, &b);
    let report = decision::decide(DecisionInputs {
        config: &config,
        tier,
        baseline: &a,
        current: &b,
        calibrations: &calibrations,
        judged_at_k,
        model_judged_at_k,
        drift: None,
        run_notes: rejudged.into_iter().collect(),
        mismatch: Some(MismatchHint {
            path: &args.a,
            next_step: NextStep::Given(next_step),
        }),
    })
    .report;
    for warning in &report.warnings {
        term::warning(warning);
    }
    if let Some(path) = &args.junit {
        let run = junit::RunInfo::of_run(&args.config, started)?;
        store::write_atomic(path, &junit::render(&report, &run))?;
    }
    match args.format {
        GateFormat::Table => write_human(&gate_table::render_painted(&report, Paint::stdout()))?,
        GateFormat::Json => write_document(&gate_json::render(&report, None))?,
    }
    Ok(report.exit_code())
}

/// Results A and B, which must be of the same tier.
fn read_same_tier(args: &CompareArgs) -> Result<(Results, Results)> {
    let a = store::read(&args.a, "pass a results.json written by `ragate gate`")?;
    let b = store::read(&args.b, "pass a results.json written by `ragate gate`")?;
    if a.tier != b.tier {
        return Err(Error::input(
            &args.b,
            format!(
                "results of tier `{}`, but {} holds tier `{}`: expected the same tier",
                b.tier,
                args.a.display(),
                a.tier
            ),
        ));
    }
    Ok((a, b))
}

/// Values computed with another relevance_level or no_relevant are not comparable.
fn refuse_other_conventions(a: &Results, b: &Results) -> Result<()> {
    let other_conventions = a
        .provenance
        .conventions()
        .differences(&b.provenance.conventions(), ["A", "B"]);
    if other_conventions.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "{}: values computed with another relevance_level or no_relevant are not comparable",
        other_conventions.join("; ")
    )))
}

/// The note (printed, and for the report) that A was re-judged, when the judges changed.
fn rejudged_note(args: &CompareArgs, changes: &[String]) -> Option<String> {
    (!changes.is_empty()).then(|| {
        let note = format!(
            "{} was re-judged with the judges of {} (--allow-judge-change): {}",
            args.a.display(),
            args.b.display(),
            changes.join("; ")
        );
        term::note(&note);
        note
    })
}

/// A re-judged with the config's judges, which must be the ones behind B.
fn rejudge_reference(
    config: &Config,
    tier: &Tier,
    a: &Results,
    b: &Results,
    args: &CompareArgs,
) -> Result<Results> {
    let configured = Identities {
        judges: judges_used(config, tier),
        embeddings: embeddings_used(config, tier),
    };
    let b_identities = Identities::of(b);
    if configured != b_identities {
        let differences = rejudge::differences(&b_identities, &configured).join("; ");
        return Err(Error::Usage(format!(
            "--allow-judge-change re-judges {} with the config's judges, but {} was not judged by them ({differences}): run compare with the config {} was made with",
            args.a.display(),
            args.b.display(),
            args.b.display()
        )));
    }
    let queries = tier::load(config, tier)?;
    let corpus = corpus::read_optional(config.corpus.as_deref())?;
    let cache = crate::run::config_judge::run_cache(config)?;
    let with = Rejudging {
        config,
        tier,
        qrels: &queries.qrels,
        corpus: corpus.as_ref(),
        cache: cache.as_ref(),
        source: &args.a,
    };
    rejudge::rejudge(a, &configured, &with)
}
