//! `ragate baseline accept` and `ragate baseline show`.

use std::path::{Path, PathBuf};

use serde_json::json;
use similar::TextDiff;

use crate::baseline::results::{Results, RunStatus};
use crate::baseline::store;
use crate::cli::{AcceptArgs, GateFormat, ShowArgs};
use crate::config::{self, Config, Tier};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::outputs::output_files;
use crate::outputs::output_table;
use crate::outputs::stdout::write_document;
use crate::outputs::stdout::write_human;
use crate::outputs::writer;
use crate::report::measured;
use crate::term;

/// The results of a gate run of `tier` of the config at `config`: `from`, else the tier's
/// default output directory's `results.json` (beside the config); results of another tier are
/// an error naming the file.
pub(crate) fn read_tier_results(
    config: &Path,
    tier: &str,
    from: Option<PathBuf>,
) -> Result<(PathBuf, Results)> {
    let from =
        from.unwrap_or_else(|| output_table::RESULTS.path(&writer::default_out(config, tier)));
    let results = store::read(&from, &format!("run `ragate gate --tier {tier}` first"))?;
    if results.tier != tier {
        return Err(Error::input(
            &from,
            format!(
                "these are results of tier `{}`: expected tier `{tier}`",
                results.tier
            ),
        ));
    }
    Ok((from, results))
}

pub(crate) fn accept(args: AcceptArgs) -> Result<i32> {
    if crate::env::is_ci() && !args.force {
        return Err(Error::Usage(
            "refusing to accept a baseline in CI (CI is set): review the change and accept it locally, or pass --force"
                .to_string(),
        ));
    }
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    refuse_other_inputs(&config, tier)?;
    let (from, mut results) = read_tier_results(&config.path, &tier.name, args.from)?;
    // Results that errored only because the baseline no longer fits them (the gate recorded
    // it) replace that baseline; any other error is refused.
    if results.status == RunStatus::Error && results.baseline_mismatch.is_none() {
        return Err(Error::input(
            &from,
            "these results could not be fully evaluated (status error): fix the errors and run the gate again",
        ));
    }
    let old_baseline = old_baseline(tier, args.force)?;
    let old = old_baseline
        .as_ref()
        .map(measured::table)
        .unwrap_or_default();
    let dropped = old_baseline
        .as_ref()
        .map(|old| Dropped::between(old, &results))
        .unwrap_or_default();
    results.provenance.accepted_utc = Some(store::accepted_utc()?);
    write_baseline(tier, &results)?;
    let accepted = Accepted {
        tier,
        from: &from,
        new: measured::table(&results),
        results: &results,
        old,
        dropped,
    };
    if args.format == GateFormat::Json {
        write_document(&accepted.document())?;
    } else {
        write_human(&accepted.text())?;
    }
    Ok(exit_code::SUCCESS)
}

/// The baseline is written over its old self (and may be accepted from itself), never over
/// another input of the tier.
fn refuse_other_inputs(config: &Config, tier: &Tier) -> Result<()> {
    let others: Vec<output_files::Input> = output_files::inputs(config, tier, None)
        .into_iter()
        .filter(|input| input.named_by != format!("tier `{}`'s baseline", tier.name))
        .collect();
    output_files::refuse_input(
        &format!("tier `{}`'s baseline", tier.name),
        &tier.baseline,
        &others,
    )
}

/// The baseline being replaced, if there is one; one that cannot be read is replaced only with
/// `--force` (`force`).
fn old_baseline(tier: &Tier, force: bool) -> Result<Option<Results>> {
    match store::read(&tier.baseline, "") {
        Ok(old) => Ok(Some(old)),
        Err(error) if error.is_missing() => Ok(None),
        Err(error) if force => {
            term::warning(format!(
                "overwriting a baseline that cannot be read (--force): {error}"
            ));
            Ok(None)
        }
        Err(error) => Err(Error::input(
            &tier.baseline,
            format!(
                "the existing baseline cannot be read, so accepting would overwrite it unseen \
                 ({error}): restore it (e.g. `git checkout -- {}`), upgrade ragate if a newer \
                 one wrote it, or pass --force to replace it",
                tier.baseline.display()
            ),
        )),
    }
}

/// Writes the accepted results as the tier's baseline, after removing the temporary files of an
/// earlier accept that was killed before it renamed its file.
fn write_baseline(tier: &Tier, results: &Results) -> Result<()> {
    let stale = store::remove_stale_temps(&tier.baseline)?;
    if stale > 0 {
        term::info(format!(
            "removed {stale} temporary file(s) an interrupted accept left beside {}",
            tier.baseline.display()
        ));
    }
    store::write_atomic_with(&tier.baseline, &|out| results.write_json(out))
}

/// An accepted baseline and what it changed, as `baseline accept` reports it.
struct Accepted<'a> {
    tier: &'a Tier,
    from: &'a Path,
    results: &'a Results,
    /// The measured summaries of the old baseline (empty without one) and of the new.
    old: String,
    new: String,
    dropped: Dropped,
}

impl Accepted<'_> {
    /// The change of the summaries as a unified diff.
    fn unified(&self) -> String {
        TextDiff::from_lines(&self.old, &self.new)
            .unified_diff()
            .context_radius(0)
            .header("old baseline", "new baseline")
            .to_string()
    }

    /// `--format json`.
    fn document(&self) -> String {
        let dropped = &self.dropped;
        let document = json!({
            "tier": self.tier.name,
            "from": self.from.display().to_string(),
            "baseline": self.tier.baseline.display().to_string(),
            "changed": self.old != self.new,
            "replaced_mismatch": self.results.baseline_mismatch,
            "dropped": {
                "queries": dropped.queries,
                "metrics": dropped.metrics,
                "slices": dropped.slices,
            },
            "diff": self.unified(),
        });
        crate::json_text::document(&document)
    }

    /// For people: what was accepted, a mismatch replaced, what was dropped, and the diff.
    fn text(&self) -> String {
        let tier = self.tier;
        let mut out = format!(
            "accepted {} as the baseline of tier `{}` ({})\n",
            self.from.display(),
            tier.name,
            tier.baseline.display()
        );
        if let Some(pairing) = &self.results.baseline_mismatch {
            let problem = pairing
                .problem(&tier.name, None)
                .unwrap_or_else(|| "it did not fit them".to_string());
            out.push_str(&format!(
                "replaced a baseline that no longer fit these results: {problem}\n"
            ));
        }
        out.push_str(&self.dropped.describe());
        if self.old == self.new {
            out.push_str("summary unchanged\n");
        } else {
            out.push_str(&self.unified());
        }
        out
    }
}

/// How many dropped qids a line lists.
const LISTED_QIDS: usize = 5;

/// What a new baseline drops of the old one.
#[derive(Debug, Default, PartialEq)]
struct Dropped {
    /// Queries of the old baseline that the new one does not have.
    queries: Vec<String>,
    /// Metrics the old baseline has values of and the new one has not.
    metrics: Vec<String>,
    /// Slices (`class=literal`) of the old baseline's summary that the new one has not.
    slices: Vec<String>,
}

impl Dropped {
    fn between(old: &Results, new: &Results) -> Dropped {
        Dropped {
            queries: old
                .queries
                .keys()
                .filter(|qid| !new.queries.contains_key(*qid))
                .cloned()
                .collect(),
            metrics: old
                .metrics
                .iter()
                .filter(|m| !new.metrics.contains(m))
                .cloned()
                .collect(),
            slices: old
                .summary
                .keys()
                .filter(|slice| !new.summary.contains_key(*slice))
                .cloned()
                .collect(),
        }
    }

    /// `dropped: 6 queries of the old baseline ...` lines (none when nothing is dropped); ids
    /// and slice values are data, each shortened and quoted.
    fn describe(&self) -> String {
        let listed = |items: &[String]| {
            let mut names: Vec<String> = items
                .iter()
                .take(LISTED_QIDS)
                .map(|item| format!("`{}`", crate::error::shorten(item)))
                .collect();
            if items.len() > LISTED_QIDS {
                names.push(format!("and {} more", items.len() - LISTED_QIDS));
            }
            names.join(", ")
        };
        let mut out = String::new();
        if !self.queries.is_empty() {
            out.push_str(&format!(
                "dropped: {} queries of the old baseline that the tier no longer has ({})\n",
                self.queries.len(),
                listed(&self.queries)
            ));
        }
        if !self.metrics.is_empty() {
            out.push_str(&format!(
                "dropped: metrics no longer measured: {}\n",
                listed(&self.metrics)
            ));
        }
        if !self.slices.is_empty() {
            out.push_str(&format!(
                "dropped: slices no query has now: {}\n",
                listed(&self.slices)
            ));
        }
        out
    }
}

pub(crate) fn show(args: ShowArgs) -> Result<i32> {
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    let hint = format!(
        "run `ragate gate --tier {0}`, then `ragate baseline accept --tier {0}`",
        tier.name
    );
    let baseline = store::read(&tier.baseline, &hint)?;
    if args.format == GateFormat::Json {
        let document = json!({
            "tier": tier.name,
            "path": tier.baseline.display().to_string(),
            "queries": baseline.queries.len(),
            "provenance": baseline.provenance,
            "summary": baseline.summary,
        });
        write_document(&crate::json_text::document(&document))?;
        return Ok(exit_code::SUCCESS);
    }
    let provenance = &baseline.provenance;
    let mut out = format!(
        "baseline of tier `{}` ({}): {} queries\nragate {}, qrels sha256 {}, config hash {}, commit {}, accepted {}\n\n",
        tier.name,
        tier.baseline.display(),
        baseline.queries.len(),
        provenance.ragate_version,
        provenance.qrels_sha256,
        provenance.config_hash,
        provenance.git_commit.as_deref().unwrap_or("unknown"),
        provenance.accepted_utc.as_deref().unwrap_or("unknown"),
    );
    out.push_str(&measured::table(&baseline));
    write_human(&out)?;
    Ok(exit_code::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::results::{Provenance, QueryRecord, SliceSummary};

    fn results(qids: &[&str], metrics: &[&str], slices: &[&str]) -> Results {
        let summary = slices
            .iter()
            .map(|s| {
                let values = metrics
                    .iter()
                    .map(|m| (m.to_string(), SliceSummary { mean: 0.5, n: 1 }))
                    .collect();
                (s.to_string(), values)
            })
            .collect();
        Results {
            format: String::new(),
            tier: "smoke".into(),
            status: RunStatus::Pass,
            provenance: Provenance::default(),
            metrics: metrics.iter().map(|m| m.to_string()).collect(),
            summary,
            noise: None,
            baseline_mismatch: None,
            queries: qids
                .iter()
                .map(|q| (q.to_string(), QueryRecord::default()))
                .collect(),
        }
    }

    #[test]
    fn dropped_names_the_old_queries_metrics_and_slices_the_new_baseline_lacks() {
        let qids: Vec<String> = (1..=7).map(|i| format!("q{i}")).collect();
        let qids: Vec<&str> = qids.iter().map(String::as_str).collect();
        let old = results(&qids, &["mrr", "ndcg@3"], &["all", "class=a", "class=b"]);
        let new = results(&["q1", "x1"], &["mrr", "recall@3"], &["all", "class=a"]);
        let dropped = Dropped::between(&old, &new);
        assert_eq!(dropped.queries, ["q2", "q3", "q4", "q5", "q6", "q7"]);
        assert_eq!(dropped.metrics, ["ndcg@3"]);
        assert_eq!(dropped.slices, ["class=b"]);
        assert_eq!(
            dropped.describe(),
            "dropped: 6 queries of the old baseline that the tier no longer has (`q2`, `q3`, \
             `q4`, `q5`, `q6`, and 1 more)\n\
             dropped: metrics no longer measured: `ndcg@3`\n\
             dropped: slices no query has now: `class=b`\n"
        );
        assert_eq!(Dropped::between(&old, &old), Dropped::default());
        assert_eq!(Dropped::default().describe(), "");
    }
}
