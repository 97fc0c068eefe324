//! `ragate synth`: drafts test queries from a corpus for review (the work is in
//! [`crate::testset::synth`]).

use crate::cli::SynthArgs;
use crate::config;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::testset::synth;

pub(super) fn run(args: SynthArgs) -> Result<i32> {
    if args.count == 0 {
        return Err(Error::Usage(
            "--count 0: expected at least one draft".to_string(),
        ));
    }
    if !(0.0..=1.0).contains(&args.literal_overlap) {
        return Err(Error::Usage(format!(
            "--literal-overlap {}: expected a share in [0, 1]",
            args.literal_overlap
        )));
    }
    crate::input::text_file::check_id("qid", &format!("{}0001", args.qid_prefix))
        .map_err(|e| Error::Usage(format!("--qid-prefix: {e}")))?;
    let config = config::load(&args.config)?;
    let corpus_path = args
        .corpus
        .clone()
        .or_else(|| config.corpus.clone())
        .ok_or_else(|| {
            Error::Usage(format!(
                "{}: synth drafts from documents: pass --corpus FILE or set `corpus:` in the config",
                config.path.display()
            ))
        })?;
    synth::run(&config, &args, &corpus_path)?;
    Ok(exit_code::SUCCESS)
}
