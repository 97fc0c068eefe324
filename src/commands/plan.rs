//! `ragate plan --tier T`: what a gate run of the tier will cost before it spends anything (the
//! plan is made by [`crate::run::plan`]), as a table or the `ragate-plan/1` document; with
//! `--probe`, after the gate's probes of its judges ([`crate::run::probe`]).

use crate::cli::{GateFormat, PlanArgs};
use crate::config;
use crate::error::Result;
use crate::exit_code;
use crate::outputs::stdout::{write_document, write_human};
use crate::run::{plan, probe};
use crate::tier::{self, TierQueries};

pub(super) fn run(args: PlanArgs) -> Result<i32> {
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    let TierQueries { qrels, .. } = tier::load(&config, tier)?;
    let plan = plan::plan(&config, tier, &qrels, args.run.as_deref())?;
    if args.probe {
        probe::for_plan(&config, tier, &plan)?;
    }
    match args.format {
        GateFormat::Table => write_human(&plan::table(&plan))?,
        GateFormat::Json => write_document(&plan::json(&plan))?,
    }
    Ok(exit_code::SUCCESS)
}
