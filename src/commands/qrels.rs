//! `ragate qrels apply` and `ragate qrels accept`: reviewed proposals and drafts written into the
//! qrels (the work is in [`crate::testset::qrels_apply`] and [`crate::testset::qrels_accept`]).
//! In CI, neither writes unless `--force`.

use crate::cli::{QrelsAcceptArgs, QrelsApplyArgs};
use crate::config;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::outputs::stdout::write_human;
use crate::testset::qrels_accept;
use crate::testset::qrels_apply::{self, Selection, qrels_file};

pub(super) fn apply(args: QrelsApplyArgs) -> Result<i32> {
    if crate::env::is_ci() && !args.force {
        return Err(Error::Usage(
            "refusing to apply proposals to qrels in CI (CI is set): review them and apply them locally, or pass --force"
                .to_string(),
        ));
    }
    if let Some(min) = args.min_score
        && !(0.0..=1.0).contains(&min)
    {
        return Err(Error::Usage(format!(
            "--min-score {min}: expected a number in [0, 1]"
        )));
    }
    let selection = Selection {
        proposals: &args.proposals,
        only: qrels_apply::only_pairs(&args.only)?,
        min_score: args.min_score,
        overwrite: args.overwrite,
    };
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    write_human(&qrels_apply::apply(tier, &selection, args.yes)?)?;
    Ok(exit_code::SUCCESS)
}

pub(super) fn accept(args: QrelsAcceptArgs) -> Result<i32> {
    if crate::env::is_ci() && !args.force {
        return Err(Error::Usage(
            "refusing to accept drafted queries in CI (CI is set): review them and accept them locally, or pass --force"
                .to_string(),
        ));
    }
    let target = match (&args.into, &args.tier) {
        (Some(into), _) => into.clone(),
        (None, Some(tier)) => {
            let config = config::load(&args.config)?;
            qrels_file(config.tier(tier)?)?
        }
        (None, None) => unreachable!("clap requires --tier or --into"),
    };
    write_human(&qrels_accept::accept(
        &args.draft,
        &args.only,
        &target,
        args.yes,
    )?)?;
    Ok(exit_code::SUCCESS)
}
