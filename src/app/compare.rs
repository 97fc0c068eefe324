//! `ragate compare A.json B.json`: the gate's paired comparison between any two results files.

use crate::app::write_stdout;
use crate::baseline::store;
use crate::cli::CompareArgs;
use crate::config;
use crate::error::{Error, Result};
use crate::gate;
use crate::report::{gate_table, junit};

pub fn run(args: CompareArgs) -> Result<i32> {
    let config = config::load(&args.config)?;
    let a = store::read(&args.a, "pass a results.json written by `ragate gate`")?;
    let b = store::read(&args.b, "pass a results.json written by `ragate gate`")?;
    if a.tier != b.tier {
        return Err(Error::input(
            &args.b,
            format!(
                "results of tier `{}`, but {} holds tier `{}`: expected the same tier",
                b.tier,
                args.a.display(),
                a.tier
            ),
        ));
    }
    let tier = config.tier(&a.tier)?;
    let report = gate::compare(&config, tier, &a, &b);
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    if let Some(path) = &args.junit {
        store::write_atomic(path, &junit::render(&report))?;
    }
    write_stdout(&gate_table::render(&report))?;
    Ok(report.exit_code())
}
