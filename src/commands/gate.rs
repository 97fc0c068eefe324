//! `ragate gate`: obtain the tier's run, evaluate it and compare it with the baseline
//! ([`crate::run`]); with `--shard I/N`, evaluate one shard and write a partial `shard.json` for
//! `ragate merge` instead.

use std::path::Path;
use std::time::Instant;

use serde_json::json;

use crate::cli::{GateArgs, GateFormat};
use crate::config::{self, Config, Tier};
use crate::error::Result;
use crate::exit_code::ExitStatus;
use crate::input::qrels::Qrels;
use crate::outputs::output_files;
use crate::outputs::stdout::write_document;
use crate::outputs::writer::OutputOptions;
use crate::run::tier_run::{empty_shard, evaluate_repeats, write_shard};
use crate::run::{finish, preflight};
use crate::shard::{Shard, ShardQueries};
use crate::term;
use crate::tier::{self, TierQueries};

pub(super) fn run(args: GateArgs) -> Result<i32> {
    let options = OutputOptions::new(&args.report, &args.config, &args.tier, Instant::now());
    let outcome = gate(&args, &options);
    if let Err(error) = &outcome {
        output_files::report_failure(&options, &args.config, &args.tier, error);
    }
    outcome
}

fn gate(args: &GateArgs, options: &OutputOptions) -> Result<i32> {
    let bare_inputs = || output_files::bare_inputs(&args.config, args.run.as_deref());
    let config = config::load(&args.config).inspect_err(|_| {
        output_files::discard(options, &bare_inputs());
    })?;
    let tier = config.tier(&args.tier).inspect_err(|_| {
        output_files::discard(options, &bare_inputs());
    })?;
    let mut inputs = output_files::inputs(&config, tier, args.run.as_deref());
    if let Some(dir) = &options.history {
        inputs.extend(output_files::history_inputs(dir, &tier.name));
    }
    output_files::prepare(options, &inputs)?;
    let options = options.clone();
    let out_dir = options.out_dir.clone();
    let TierQueries {
        qrels,
        file_sha256,
        unjudged,
    } = tier::load(&config, tier)?;
    if let Some(note) = tier::unjudged_note(tier, unjudged) {
        term::note(note);
    }
    let accept_command = options.accept_command(&tier.name);
    let planned = preflight::Planned {
        compared: args.shard.is_none(),
        run: args.run.as_deref(),
        allow_judge_change: options.allow_judge_change,
        accept_command: &accept_command,
    };
    let checked = preflight::check(&config, tier, &qrels, &planned)?;
    let Some(shard) = args.shard else {
        let evaluated = evaluate_repeats(&config, tier, args, &qrels, &out_dir, file_sha256)?;
        let labels = checked.labels.as_deref();
        return finish::finish(
            &config,
            tier,
            &qrels,
            evaluated,
            options,
            Ok(checked.baseline),
            labels,
        );
    };
    shard_run(&config, tier, args, shard, qrels, (&out_dir, file_sha256))
}

/// `gate --shard I/N`: the shard's queries evaluated into a partial `shard.json` for `merge`
/// (`out`: the output folder and the qrels' sha256).
fn shard_run(
    config: &Config,
    tier: &Tier,
    args: &GateArgs,
    shard: Shard,
    qrels: Qrels,
    (out_dir, file_sha256): (&Path, String),
) -> Result<i32> {
    let qrels = shard.select(qrels);
    let expected = ShardQueries::expected(shard, &qrels);
    let evaluated = if qrels.is_empty() {
        empty_shard(config, tier, file_sha256)
    } else {
        evaluate_repeats(config, tier, args, &qrels, out_dir, file_sha256)?
    };
    let queries = evaluated.results.queries.len();
    let output = write_shard(out_dir, shard, expected, evaluated)?;
    term::info(format!(
        "ragate: shard {shard} of tier `{}`: {queries} queries evaluated into {}; combine the shards with `ragate merge --tier {}`",
        tier.name,
        out_dir.display(),
        tier.name
    ));
    let status = ExitStatus::Success;
    if args.report.format == GateFormat::Json {
        write_document(&shard_document(&tier.name, shard, queries, &output, status))?;
    }
    Ok(status.code())
}

/// The format tag of what `gate --shard I/N --format json` prints.
const SHARD_DOCUMENT_FORMAT: &str = "ragate-gate-shard/1";

/// What `gate --shard I/N --format json` prints on stdout (docs/schema/gate-shard.schema.json):
/// the shard, how many queries it evaluated, the `shard.json` written for `merge`, and the exit
/// code. A shard gates nothing, so there are no checks and no status of a gate.
fn shard_document(
    tier: &str,
    shard: Shard,
    queries: usize,
    output: &Path,
    status: ExitStatus,
) -> String {
    crate::json_text::document(&json!({
        "format": SHARD_DOCUMENT_FORMAT,
        "tier": tier,
        "shard": shard.to_string(),
        "queries": queries,
        "output": output.display().to_string(),
        "exit_code": status.code(),
    }))
}
