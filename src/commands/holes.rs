//! `ragate holes`: the holes of a tier's runs listed, or with `--judge` a judge's proposed grades
//! written to `--out` (the work is in [`crate::testset::holes`]).

use crate::cli::HolesArgs;
use crate::config;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::run::gate_options::default_threads;
use crate::testset::holes;

pub(super) fn run(args: HolesArgs) -> Result<i32> {
    if args.depth == Some(0) {
        return Err(Error::Usage(
            "--depth 0: expected a depth of at least 1".to_string(),
        ));
    }
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    let threads = args.threads.unwrap_or_else(default_threads);
    let pooled = holes::pool(&config, tier, &args.runs, args.depth, threads, args.limit)?;
    let Some(judge) = &args.judge else {
        holes::print(&pooled, args.format)?;
        return Ok(exit_code::SUCCESS);
    };
    let out = args.out.as_deref().ok_or_else(|| {
        Error::Usage("--judge writes a proposals file: pass --out FILE".to_string())
    })?;
    holes::propose_grades(&config, tier, &pooled, (judge, out), &args.runs, args.force)?;
    Ok(exit_code::SUCCESS)
}
