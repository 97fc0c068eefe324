//! `ragate holes`: the retrieved-but-unjudged documents of a tier within its gated depth, pooled
//! across runs and ranked by how much a judgment can move the gated metrics ([`pool`]); with
//! `--judge`, a judge's proposed grades written to a proposals file ([`propose`]), never into
//! the qrels.

mod pool;
mod propose;

use std::fmt::Write as _;

use serde_json::json;

use crate::cli::{HolesArgs, HolesFormat};
use crate::config::{self, Tier};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::outputs::hand_edits;
use crate::outputs::output_files;
use crate::outputs::stdout::write_document;
use crate::outputs::stdout::write_human;
use crate::run::gate_options::default_threads;
use crate::run::judged_depth::JUDGED_DEPTH;
use crate::tier;
use pool::{Hole, PoolStats};

/// How deep the holes are looked for: `--depth`, else the largest cut-off of the tier's gated
/// retrieval metrics (one without a cut-off, such as mrr, counts as [`JUDGED_DEPTH`]), else
/// [`JUDGED_DEPTH`].
fn gated_depth(tier: &Tier) -> usize {
    tier.gate
        .rules
        .iter()
        .filter(|rule| rule.metric.as_retrieval().is_some())
        .map(|rule| rule.metric.cutoff().unwrap_or(JUDGED_DEPTH))
        .max()
        .unwrap_or(JUDGED_DEPTH)
}

pub(crate) fn run(args: HolesArgs) -> Result<i32> {
    if args.depth == Some(0) {
        return Err(Error::Usage(
            "--depth 0: expected a depth of at least 1".to_string(),
        ));
    }
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    let depth = args.depth.unwrap_or_else(|| gated_depth(tier));
    let queries = tier::load(&config, tier)?;
    let threads = args.threads.unwrap_or_else(default_threads);
    let separator = config.chunk_separator.as_deref();
    let rankings = if args.runs.is_empty() {
        vec![pipeline_ranking(
            &config,
            tier,
            &queries.qrels,
            depth,
            separator,
        )?]
    } else {
        args.runs
            .iter()
            .map(|path| pool::read_run(path, depth, separator, threads))
            .collect::<Result<Vec<_>>>()?
    };
    let (mut holes, stats) = pool::holes(&rankings, &queries.qrels);
    let found = holes.len();
    if let Some(limit) = args.limit {
        holes.truncate(limit);
    }
    let Some(judge_name) = &args.judge else {
        let header = Header {
            tier: &tier.name,
            depth,
            runs: rankings.len(),
            stats,
            found,
        };
        print_holes(&header, &holes, args.format)?;
        return Ok(exit_code::SUCCESS);
    };
    let out = args.out.as_deref().ok_or_else(|| {
        Error::Usage("--judge writes a proposals file: pass --out FILE".to_string())
    })?;
    let mut inputs = output_files::inputs(&config, tier, None);
    inputs.extend(args.runs.iter().map(|run| output_files::Input {
        path: run.clone(),
        named_by: "a run".to_string(),
    }));
    output_files::refuse_input("--out", out, &inputs)?;
    // Proposals are reviewed (and may be edited) before `qrels apply`: never replaced once changed.
    hand_edits::check(out, "--out", args.force)?;
    let written = propose::run(&config, &queries.qrels, judge_name, &holes, out)?;
    write_human(&format!(
        "wrote {} proposals of judge `{judge_name}` for {} of {found} holes (depth {depth}, {} runs) to {}\n\
         review them, then `ragate qrels apply {} --tier {}`\n",
        written.proposals,
        holes.len(),
        rankings.len(),
        out.display(),
        out.display(),
        tier.name
    ))?;
    if written.asked < written.proposals {
        write_human(&format!(
            "{} of them from the judge cache\n",
            written.proposals - written.asked
        ))?;
    }
    Ok(exit_code::SUCCESS)
}

/// Without `--run`: the ranking of the tier's configured run file, or of its `command` or
/// `http` pipeline run over the tier's queries now (kept in memory, not written).
fn pipeline_ranking(
    config: &config::Config,
    tier: &Tier,
    qrels: &crate::input::qrels::Qrels,
    depth: usize,
    separator: Option<&str>,
) -> Result<pool::Ranking> {
    let pipeline = config.pipeline.as_ref().ok_or_else(|| {
        Error::Usage(
            "no run to pool: pass --run FILE (repeatable) or configure `pipeline:` (command, http \
             or run_file)"
                .to_string(),
        )
    })?;
    if let crate::pipeline::Pipeline::RunFile(_) = pipeline {
        let path = config.run_file(&tier.name).expect("a run file pipeline");
        return pool::read_run(&path, depth, separator, default_threads());
    }
    let produced = crate::run::tier_run::produce_run(config, pipeline, qrels)?;
    let file = crate::input::text_file::TextFile::from_bytes(
        "<the pipeline's run>",
        produced.to_jsonl().into_bytes(),
    )?;
    pool::native_ranking(&file, depth, separator)
}

/// What the holes list says of where it comes from.
struct Header<'a> {
    tier: &'a str,
    depth: usize,
    runs: usize,
    stats: PoolStats,
    /// Holes found, before `--limit`.
    found: usize,
}

/// A cell of the table: control characters escaped, no tab or line feed to break the columns.
fn cell(text: &str) -> String {
    crate::escape::visible(text)
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

fn hole_json(hole: &Hole) -> serde_json::Value {
    json!({
        "qid": hole.qid,
        "doc_id": hole.doc_id,
        "priority": hole.priority,
        "best_rank": hole.best_rank,
        "runs": hole.runs,
    })
}

fn print_holes(header: &Header<'_>, holes: &[Hole], format: HolesFormat) -> Result<()> {
    let stats = header.stats;
    match format {
        HolesFormat::Json => {
            let document = json!({
                "tier": header.tier,
                "depth": header.depth,
                "runs": header.runs,
                "queries": stats.queries,
                "pooled": stats.pooled,
                "judged": stats.judged,
                "holes_found": header.found,
                "holes": holes.iter().map(hole_json).collect::<Vec<_>>(),
            });
            write_document(&crate::json_text::document(&document))
        }
        HolesFormat::Jsonl => {
            let mut text = String::new();
            for hole in holes {
                writeln!(text, "{}", crate::json_text::compact(&hole_json(hole)))
                    .expect("writing to a String");
            }
            write_document(&text)
        }
        HolesFormat::Table => {
            let mut text = format!(
                "tier `{}`: {} holes in the top {} of {} run(s): {} of {} pooled documents of {} queries are judged\n",
                header.tier,
                header.found,
                header.depth,
                header.runs,
                stats.judged,
                stats.pooled,
                stats.queries
            );
            if stats.unknown_queries > 0 {
                writeln!(
                    text,
                    "{} queries of the runs are not in the tier's qrels: not pooled",
                    stats.unknown_queries
                )
                .expect("writing to a String");
            }
            if holes.len() < header.found {
                writeln!(text, "showing the first {}", holes.len()).expect("writing to a String");
            }
            if !holes.is_empty() {
                text.push_str("priority  best_rank  runs  qid  doc_id\n");
            }
            for hole in holes {
                writeln!(
                    text,
                    "{:>8.4}  {:>9}  {:>4}  {}  {}",
                    hole.priority,
                    hole.best_rank,
                    hole.runs,
                    cell(&hole.qid),
                    cell(&hole.doc_id)
                )
                .expect("writing to a String");
            }
            write_human(&text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_cells_cannot_break_the_lines_or_drive_the_terminal() {
        assert_eq!(cell("d1\n\u{1b}[2Jx\ty"), "d1\\n\\u{1b}[2Jx\\ty");
        assert_eq!(cell("plain"), "plain");
    }
}
