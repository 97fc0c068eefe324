//! Validation of the `judges` section into judge specs: each judge is validated by its kind
//! (see `judge::kinds`), into settings only, no clients (`judge::build` makes a client of a
//! spec where the app needs one).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Result;
use crate::judge::Clients;
use crate::judge::backend::{JudgeAt, JudgeSpec, RawJudge};
use crate::judge::events::Events;
use crate::judge::kinds;
use crate::settings::keys::Keys;
use crate::settings::yaml;

use super::Config;

/// The judge every judged metric uses unless it names another.
pub const DEFAULT_JUDGE: &str = "default";

/// The configured judges by name; `default` is the lexical judge unless configured otherwise.
pub(super) fn validate_judges(
    keys: &Keys<'_>,
    raw: &BTreeMap<String, RawJudge>,
    written: &yaml::Value,
    base: &Path,
) -> Result<BTreeMap<String, JudgeSpec>> {
    let mut judges = BTreeMap::new();
    judges.insert(DEFAULT_JUDGE.to_string(), kinds::default_judge());
    for (name, judge) in raw {
        let at = JudgeAt {
            keys,
            name,
            key: format!("judges.{name}"),
            written,
            base,
        };
        judges.insert(name.clone(), judge.validate(&at)?);
    }
    Ok(judges)
}

impl Config {
    /// The clients of this config's judges (telling `events`) and of its embeddings endpoint,
    /// built once for a run.
    pub fn judge_clients(&self, events: &Events) -> Clients {
        Clients::build(&self.judges, self.embeddings.as_ref(), events)
    }
}
