//! `ragate baseline accept` and `ragate baseline show`.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use similar::TextDiff;

use crate::app::{output_files, outputs};
use crate::app::{write_human, write_stdout};
use crate::baseline::results::{Results, RunStatus};
use crate::baseline::store;
use crate::cli::{AcceptArgs, GateFormat, ShowArgs};
use crate::config;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::report::{junit, measured};
use crate::term;

/// Acceptance time: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now; UTC RFC 3339.
fn accepted_utc() -> Result<String> {
    let time = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => UNIX_EPOCH + Duration::from_secs(junit::source_date_epoch_seconds(&text)?),
        Err(_) => SystemTime::now(),
    };
    Ok(humantime::format_rfc3339_seconds(time).to_string())
}

/// The results of a gate run of `tier`: `from`, else the tier's default output directory's
/// `results.json`; results of another tier are an error naming the file.
pub(super) fn read_tier_results(tier: &str, from: Option<PathBuf>) -> Result<(PathBuf, Results)> {
    let from = from.unwrap_or_else(|| outputs::default_out(tier).join("results.json"));
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

pub fn accept(args: AcceptArgs) -> Result<i32> {
    if std::env::var("CI").as_deref() == Ok("true") && !args.force {
        return Err(Error::Usage(
            "refusing to accept a baseline in CI (CI=true): review the change and accept it locally, or pass --force"
                .to_string(),
        ));
    }
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    // The baseline is written over its old self (and may be accepted from itself), never over
    // another input of the tier.
    let others: Vec<output_files::Input> = output_files::inputs(&config, tier, None)
        .into_iter()
        .filter(|input| input.named_by != format!("tier `{}`'s baseline", tier.name))
        .collect();
    output_files::refuse_input(
        &format!("tier `{}`'s baseline", tier.name),
        &tier.baseline,
        &others,
    )?;
    let (from, mut results) = read_tier_results(&tier.name, args.from)?;
    if results.status == RunStatus::Error {
        return Err(Error::input(
            &from,
            "these results could not be fully evaluated (status error): fix the errors and run the gate again",
        ));
    }
    let old = match store::read(&tier.baseline, "") {
        Ok(old) => measured::table(&old),
        Err(error) if error.is_missing() => String::new(),
        Err(error) if args.force => {
            term::warning(format!(
                "overwriting a baseline that cannot be read (--force): {error}"
            ));
            String::new()
        }
        Err(error) => {
            return Err(Error::input(
                &tier.baseline,
                format!(
                    "the existing baseline cannot be read, so accepting would overwrite it unseen \
                     ({error}): restore it (e.g. `git checkout -- {}`), upgrade ragate if a newer \
                     one wrote it, or pass --force to replace it",
                    tier.baseline.display()
                ),
            ));
        }
    };
    results.provenance.accepted_utc = Some(accepted_utc()?);
    // Temporary files of an earlier accept that was killed before it renamed its file.
    let stale = store::remove_stale_temps(&tier.baseline)?;
    if stale > 0 {
        term::info(format!(
            "removed {stale} temporary file(s) an interrupted accept left beside {}",
            tier.baseline.display()
        ));
    }
    store::write_atomic(&tier.baseline, &results.to_json())?;
    let new = measured::table(&results);
    let diff = TextDiff::from_lines(&old, &new);
    let unified = diff
        .unified_diff()
        .context_radius(0)
        .header("old baseline", "new baseline")
        .to_string();
    if args.format == GateFormat::Json {
        let document = json!({
            "tier": tier.name,
            "from": from.display().to_string(),
            "baseline": tier.baseline.display().to_string(),
            "changed": old != new,
            "diff": unified,
        });
        write_stdout(&format!("{document:#}\n"))?;
        return Ok(exit_code::SUCCESS);
    }
    let mut out = format!(
        "accepted {} as the baseline of tier `{}` ({})\n",
        from.display(),
        tier.name,
        tier.baseline.display()
    );
    if old == new {
        out.push_str("summary unchanged\n");
    } else {
        out.push_str(&unified);
    }
    write_human(&out)?;
    Ok(exit_code::SUCCESS)
}

pub fn show(args: ShowArgs) -> Result<i32> {
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
        write_stdout(&format!("{document:#}\n"))?;
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
