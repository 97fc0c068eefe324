//! The holes of `ragate holes`: the retrieved-but-unjudged documents of a tier within its gated
//! depth, pooled across runs and ranked by how much a judgment can move the gated metrics
//! ([`pool`]); with `--judge`, a judge's proposed grades written to a proposals file
//! ([`propose`]), never into the qrels.

mod pool;
mod propose;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cli::HolesFormat;
use crate::config::{self, Config, Tier};
use crate::error::{Error, Result};
use crate::input::qrels::Qrels;
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

/// The holes of a tier's runs, ranked, and where they come from.
pub(crate) struct Pooled {
    pub qrels: Qrels,
    pub holes: Vec<Hole>,
    pub header: Header,
}

/// Pools the tier's runs (`runs`, else its pipeline's) to `depth` (else the gated depth, never
/// 0) and keeps the first `limit` holes.
pub(crate) fn pool(
    config: &Config,
    tier: &Tier,
    runs: &[PathBuf],
    depth: Option<usize>,
    threads: usize,
    limit: Option<usize>,
) -> Result<Pooled> {
    let depth = depth.unwrap_or_else(|| gated_depth(tier));
    let queries = tier::load(config, tier)?;
    let separator = config.chunk_separator.as_deref();
    let rankings = if runs.is_empty() {
        vec![pipeline_ranking(
            config,
            tier,
            &queries.qrels,
            depth,
            separator,
        )?]
    } else {
        runs.iter()
            .map(|path| pool::read_run(path, depth, separator, threads))
            .collect::<Result<Vec<_>>>()?
    };
    let (mut holes, stats) = pool::holes(&rankings, &queries.qrels);
    let found = holes.len();
    if let Some(limit) = limit {
        holes.truncate(limit);
    }
    let header = Header {
        tier: tier.name.clone(),
        depth,
        runs: rankings.len(),
        stats,
        found,
    };
    Ok(Pooled {
        qrels: queries.qrels,
        holes,
        header,
    })
}

/// `--judge NAME --out FILE`: the judge's proposed grades of the pooled holes written to `out`,
/// which may be none of the run's inputs nor a proposals file a person changed.
pub(crate) fn propose_grades(
    config: &Config,
    tier: &Tier,
    pooled: &Pooled,
    (judge_name, out): (&str, &Path),
    runs: &[PathBuf],
    force: bool,
) -> Result<()> {
    let mut inputs = output_files::inputs(config, tier, None);
    inputs.extend(runs.iter().map(|run| output_files::Input {
        path: run.clone(),
        named_by: "a run".to_string(),
    }));
    output_files::refuse_input("--out", out, &inputs)?;
    // Proposals are reviewed (and may be edited) before `qrels apply`: never replaced once changed.
    hand_edits::check(out, "--out", force)?;
    let holes = &pooled.holes;
    let written = propose::run(config, &pooled.qrels, judge_name, holes, out)?;
    let Header {
        depth, runs, found, ..
    } = pooled.header;
    write_human(&format!(
        "wrote {} proposals of judge `{judge_name}` for {} of {found} holes (depth {depth}, {runs} runs) to {}\n\
         review them, then `ragate qrels apply {} --tier {}`\n",
        written.proposals,
        holes.len(),
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
    Ok(())
}

/// Without `--run`: the ranking of the tier's configured run file, or of its `command` or
/// `http` pipeline run over the tier's queries now (kept in memory, not written).
fn pipeline_ranking(
    config: &config::Config,
    tier: &Tier,
    qrels: &Qrels,
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
pub(crate) struct Header {
    tier: String,
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

/// Prints the pooled holes in `format`.
pub(crate) fn print(pooled: &Pooled, format: HolesFormat) -> Result<()> {
    let (header, holes) = (&pooled.header, &pooled.holes[..]);
    match format {
        HolesFormat::Json => {
            let stats = header.stats;
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
        HolesFormat::Table => write_human(&table(header, holes)),
    }
}

/// The holes as a table for people, under a line of where they come from.
fn table(header: &Header, holes: &[Hole]) -> String {
    let stats = header.stats;
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
    text
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
