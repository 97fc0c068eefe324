//! `ragate merge`: combines the `shard.json` outputs of `gate --shard I/N` runs into one evaluated
//! tier and finishes it like an unsharded `gate` (same results.json, junit.xml, summary, exit
//! code). Every shard 1..=N must be there exactly once, from the same tier, qrels, config and
//! commit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::baseline::{collect, embeddings};
use crate::cli::MergeArgs;
use crate::config;
use crate::error::{Error, Result, shorten};
use crate::input::qrels::Qrels;
use crate::outputs::output_files;
use crate::outputs::output_table;
use crate::outputs::writer::{Evaluated, OutputOptions};
use crate::run::finish;
use crate::run::tier_labels;
use crate::run::tier_run::{SHARD_FORMAT, ShardOutput};
use crate::shard::ShardQueries;
use crate::tier::{self, TierQueries};

pub(crate) fn read_shard(dir: &Path) -> Result<(PathBuf, ShardOutput)> {
    let path = output_table::SHARD.path(dir);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    // The format first: a shard of another ragate version fails on it, not on a field.
    let format = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("format")?.as_str().map(str::to_string));
    if let Some(format) = format.filter(|f| f != SHARD_FORMAT) {
        return Err(Error::input(
            &path,
            format!(
                "format `{}`: expected `{SHARD_FORMAT}` (written by the same ragate version): \
                 run `ragate gate --shard I/N` again with this ragate",
                shorten(&format)
            ),
        ));
    }
    let output: ShardOutput = serde_json::from_str(&text).map_err(|e| {
        Error::input(
            &path,
            format!("{e}: expected the shard.json that `ragate gate --shard I/N` writes"),
        )
    })?;
    output
        .evaluated
        .results
        .provenance
        .check()
        .map_err(|message| Error::input(&path, message))?;
    output.evaluated.results.check_values().map_err(|message| {
        Error::input(
            &path,
            format!("{message}: expected the values ragate computed (re-run that shard)"),
        )
    })?;
    Ok((path, output))
}

/// Checks that the shard in `path` holds exactly the queries it recorded when it was written,
/// and that those are the queries its shard of the current `qrels` scores.
fn check_queries(path: &Path, output: &ShardOutput, qrels: &Qrels) -> Result<()> {
    let held = ShardQueries::of(output.evaluated.results.queries.keys().map(String::as_str));
    let rerun = format!(
        "run `ragate gate --shard {}` again and merge its output",
        output.shard
    );
    if held != output.queries {
        return Err(Error::input(
            path,
            format!(
                "shard {} holds {} queries but recorded {} when it was written (qids sha256 {}): \
                 the file lost or gained queries; {rerun}",
                output.shard,
                held.count,
                output.queries.count,
                if held.qids_sha256 == output.queries.qids_sha256 {
                    "equal"
                } else {
                    "differs"
                },
            ),
        ));
    }
    let expected = ShardQueries::expected(output.shard, qrels);
    if held != expected {
        return Err(Error::input(
            path,
            format!(
                "shard {} holds {} queries, but that shard of {} has {} scored queries{}: {rerun}",
                output.shard,
                held.count,
                qrels.path().display(),
                expected.count,
                if held.count == expected.count {
                    " (other qids)"
                } else {
                    ""
                },
            ),
        ));
    }
    Ok(())
}

/// Checks that `shards` are shards 1..=N of one run of `tier`, each once and complete.
fn check_complete(
    tier: &str,
    qrels: &TierQueries,
    shards: &[(PathBuf, ShardOutput)],
) -> Result<()> {
    let (first_path, first) = &shards[0];
    let count = first.shard.count;
    let mut seen: BTreeMap<u64, &Path> = BTreeMap::new();
    for (path, output) in shards {
        check_same_run(
            tier,
            &qrels.file_sha256,
            (first_path, first),
            (path, output),
        )?;
        if let Some(other) = seen.insert(output.shard.index, path) {
            return Err(Error::input(
                path,
                format!(
                    "shard {} is also in {}: expected each shard once",
                    output.shard,
                    other.display()
                ),
            ));
        }
        if let Some(qid) = output
            .evaluated
            .results
            .queries
            .keys()
            .find(|qid| !output.shard.contains(qid))
        {
            return Err(Error::input(
                path,
                format!(
                    "query `{}` does not belong to shard {}",
                    shorten(qid),
                    output.shard
                ),
            ));
        }
        check_queries(path, output, &qrels.qrels)?;
    }
    let missing: Vec<String> = (1..=count)
        .filter(|index| !seen.contains_key(index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Usage(format!(
            "missing shard(s) {}: expected the outputs of all {count} shards",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// Checks that a shard is of the same run as the first: shard count, provenance and metrics,
/// of `tier` and of its current qrels.
fn check_same_run(
    tier: &str,
    qrels_sha256: &str,
    (first_path, first): (&Path, &ShardOutput),
    (path, output): (&Path, &ShardOutput),
) -> Result<()> {
    let mismatch = |what: &str| {
        Error::input(
            path,
            format!(
                "{what} differs from {}'s: expected shards of one run",
                first_path.display()
            ),
        )
    };
    let (results, first_results) = (&output.evaluated.results, &first.evaluated.results);
    if output.shard.count != first.shard.count {
        return Err(mismatch("the shard count"));
    }
    if results.provenance != first_results.provenance {
        return Err(mismatch(
            "the provenance (ragate version, qrels, config, commit, judges)",
        ));
    }
    if results.metrics != first_results.metrics {
        return Err(mismatch("the metric list"));
    }
    if results.tier != tier {
        return Err(Error::input(
            path,
            format!("a shard of tier `{}`: expected tier `{tier}`", results.tier),
        ));
    }
    if results.provenance.qrels_sha256 != qrels_sha256 {
        return Err(Error::input(
            path,
            format!(
                "evaluated other qrels than tier `{tier}` has now: expected shards of the current qrels"
            ),
        ));
    }
    Ok(())
}

/// The call and token counts of every judge of `part` can be added to `merged`'s.
fn check_usage_sums(path: &Path, merged: &Evaluated, part: &Evaluated) -> Result<()> {
    for (name, usage) in &part.llm_usage {
        let sum = merged.llm_usage.get(name).copied().unwrap_or_default();
        let overflow = [
            (sum.calls, usage.calls),
            (sum.retries, usage.retries),
            (sum.prompt_tokens, usage.prompt_tokens),
            (sum.completion_tokens, usage.completion_tokens),
        ]
        .iter()
        .any(|(a, b)| a.checked_add(*b).is_none());
        if overflow {
            return Err(Error::input(
                path,
                format!(
                    "the call or token counts of judge `{}` overflow a 64-bit count when \
                     added up: expected the shard.json that `ragate gate --shard I/N` writes",
                    shorten(name)
                ),
            ));
        }
    }
    Ok(())
}

/// The shards' evaluations as one; token and call counts that overflow are an error naming the
/// shard file (no ragate run counts 2^64 tokens: the file was not written by one).
fn combine(shards: Vec<(PathBuf, ShardOutput)>) -> Result<Evaluated> {
    let mut shards = shards.into_iter();
    let mut merged = shards.next().expect("at least one shard").1.evaluated;
    for (path, shard) in shards {
        let part = shard.evaluated;
        check_usage_sums(&path, &merged, &part)?;
        merged.results.queries.extend(part.results.queries);
        merged.trace.extend(part.trace);
        merged.operational.extend(part.operational);
        merged.embeddings.extend(part.embeddings);
        let counts = merged
            .judge_tasks
            .checked_add(part.judge_tasks)
            .zip(merged.judge_calls.checked_add(part.judge_calls));
        let Some((tasks, calls)) = counts else {
            return Err(Error::input(
                &path,
                "the judge task or call counts overflow a 64-bit count when added up: expected \
                 the shard.json that `ragate gate --shard I/N` writes",
            ));
        };
        (merged.judge_tasks, merged.judge_calls) = (tasks, calls);
        for (name, usage) in part.llm_usage {
            *merged.llm_usage.entry(name).or_default() += usage;
        }
        merged.evaluation_seconds += part.evaluation_seconds;
        if let (Some(total), Some(noise)) = (&mut merged.noise, &part.noise) {
            total.add(noise);
        }
        if let (Some(total), Some(consistency)) =
            (&mut merged.judge_consistency, &part.judge_consistency)
        {
            total.add(consistency);
        }
    }
    merged.results.summary = collect::summarise(&merged.results.metrics, &merged.results.queries);
    if !merged.embeddings.is_empty() {
        // The embedding relevance of each query is normalised against every other answer of
        // the tier: recompute it over the union, in qid order, as an unsharded run does.
        merged.embeddings.sort_by(|a, b| a.qid.cmp(&b.qid));
        embeddings::renormalise(&mut merged.results, &merged.embeddings)?;
    }
    Ok(merged)
}

pub(crate) fn run(args: MergeArgs) -> Result<i32> {
    let options = OutputOptions::new(&args.report, &args.config, &args.tier, Instant::now());
    let outcome = merge(&args, &options);
    if let Err(error) = &outcome {
        output_files::report_failure(&options, &args.config, &args.tier, error);
    }
    outcome
}

fn merge(args: &MergeArgs, options: &OutputOptions) -> Result<i32> {
    let shard_files: Vec<output_files::Input> = args
        .shards
        .iter()
        .map(|dir| output_files::Input {
            path: output_table::SHARD.path(dir),
            named_by: format!("the shard in {}", dir.display()),
        })
        .collect();
    let config = config::load(&args.config).inspect_err(|_| {
        let mut inputs = output_files::bare_inputs(&args.config, None);
        inputs.extend(shard_files.iter().cloned());
        output_files::discard(options, &inputs);
    })?;
    let tier = config.tier(&args.tier)?;
    let mut inputs = output_files::inputs(&config, tier, None);
    inputs.extend(shard_files);
    output_files::prepare(options, &inputs)?;
    let queries = tier::load(&config, tier)?;
    let shards = args
        .shards
        .iter()
        .map(|dir| read_shard(dir))
        .collect::<Result<Vec<_>>>()?;
    check_complete(&tier.name, &queries, &shards)?;
    let evaluated = combine(shards)?;
    let labels = tier_labels::read(tier)?;
    let baseline = finish::load_baseline(tier, options);
    finish::finish(
        &config,
        tier,
        &queries.qrels,
        evaluated,
        options.clone(),
        baseline,
        labels.as_deref(),
    )
}
