//! `ragate merge`: combines the `shard.json` outputs of `gate --shard I/N` runs into one evaluated
//! tier and finishes it like an unsharded `gate` (same results.json, junit.xml, summary, exit
//! code). Every shard 1..=N must be there exactly once, from the same tier, qrels, config and
//! commit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::app::gate::{SHARD_FORMAT, ShardOutput};
use crate::app::outputs::{self, Evaluated, OutputOptions};
use crate::baseline::{collect, embeddings};
use crate::cli::MergeArgs;
use crate::config;
use crate::error::{Error, Result};
use crate::tier::{self, TierQueries};

fn read_shard(dir: &Path) -> Result<(PathBuf, ShardOutput)> {
    let path = dir.join("shard.json");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let output: ShardOutput = serde_json::from_str(&text).map_err(|e| {
        Error::input(
            &path,
            format!("{e}: expected the shard.json that `ragate gate --shard I/N` writes"),
        )
    })?;
    if output.format != SHARD_FORMAT {
        return Err(Error::input(
            &path,
            format!(
                "format `{}`: expected `{SHARD_FORMAT}` (written by the same ragate version)",
                output.format
            ),
        ));
    }
    output.evaluated.results.check_values().map_err(|message| {
        Error::input(
            &path,
            format!("{message}: expected the values ragate computed (re-run that shard)"),
        )
    })?;
    Ok((path, output))
}

/// Checks that `shards` are shards 1..=N of one run of `tier`, each once.
fn check_complete(tier: &str, qrels_sha256: &str, shards: &[(PathBuf, ShardOutput)]) -> Result<()> {
    let (first_path, first) = &shards[0];
    let count = first.shard.count;
    let mut seen: BTreeMap<u64, &Path> = BTreeMap::new();
    for (path, output) in shards {
        let mismatch = |what: &str| {
            Error::input(
                path,
                format!(
                    "{what} differs from {}'s: expected shards of one run",
                    first_path.display()
                ),
            )
        };
        if output.shard.count != count {
            return Err(mismatch("the shard count"));
        }
        if output.evaluated.results.provenance != first.evaluated.results.provenance {
            return Err(mismatch(
                "the provenance (ragate version, qrels, config, commit, judges)",
            ));
        }
        if output.evaluated.results.metrics != first.evaluated.results.metrics {
            return Err(mismatch("the metric list"));
        }
        if output.evaluated.results.tier != tier {
            return Err(Error::input(
                path,
                format!(
                    "a shard of tier `{}`: expected tier `{tier}`",
                    output.evaluated.results.tier
                ),
            ));
        }
        if output.evaluated.results.provenance.qrels_sha256 != qrels_sha256 {
            return Err(Error::input(
                path,
                format!(
                    "evaluated other qrels than tier `{tier}` has now: expected shards of the current qrels"
                ),
            ));
        }
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
                format!("query `{qid}` does not belong to shard {}", output.shard),
            ));
        }
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

/// The shards' evaluations as one.
fn combine(shards: Vec<ShardOutput>) -> Result<Evaluated> {
    let mut shards = shards.into_iter();
    let mut merged = shards.next().expect("at least one shard").evaluated;
    for shard in shards {
        let part = shard.evaluated;
        merged.results.queries.extend(part.results.queries);
        merged.trace.extend(part.trace);
        merged.operational.extend(part.operational);
        merged.embeddings.extend(part.embeddings);
        merged.judge_tasks += part.judge_tasks;
        merged.judge_calls += part.judge_calls;
        for (name, usage) in part.llm_usage {
            *merged.llm_usage.entry(name).or_default() += usage;
        }
        merged.evaluation_seconds += part.evaluation_seconds;
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

pub fn run(args: MergeArgs) -> Result<i32> {
    let started = Instant::now();
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    let TierQueries { qrels, file_sha256 } = tier::load(tier)?;
    let shards = args
        .shards
        .iter()
        .map(|dir| read_shard(dir))
        .collect::<Result<Vec<_>>>()?;
    check_complete(&tier.name, &file_sha256, &shards)?;
    let evaluated = combine(shards.into_iter().map(|(_, output)| output).collect())?;
    let options = OutputOptions::new(&args.report, &tier.name, started);
    outputs::finish(&config, tier, &qrels, evaluated, options)
}
