//! A judge of the config by name, as a command's `--judge NAME` or `--generator NAME` asks for
//! it: its client, telling what it does on stderr; an unknown name is a usage error with the
//! configured names and a did-you-mean.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::judge::{self, Judge};
use crate::suggest;

/// The judge `name` of `config`, for the command-line flag `flag` (`--judge`).
pub(crate) fn by_name(config: &Config, flag: &str, name: &str) -> Result<Judge> {
    match config.judges.get(name) {
        Some(spec) => Ok(judge::build(spec).reporting_to(crate::app::judge_events::printed())),
        None => {
            let names: Vec<&str> = config.judges.keys().map(String::as_str).collect();
            Err(Error::Usage(suggest::did_you_mean(
                format!(
                    "{flag} {name}: no such judge in {}: expected one of {}",
                    config.path.display(),
                    names.join(", ")
                ),
                name,
                names.iter().copied(),
            )))
        }
    }
}
