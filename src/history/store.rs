//! The history directory: `<dir>/<tier>/<UTC time>-<commit>.json`, one record per run, so that
//! a listing is chronological. Written atomically (a temporary file, then a rename that never
//! replaces an existing record; temporaries left by a killed write are skipped on reading and
//! removed by a later write); read strictly (every entry of the tier's folder must be a
//! record of that tier, named after its time and commit, or the read fails naming it).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::baseline::store::STALE_TEMP;
use crate::env::source_date_epoch_seconds;
use crate::error::{Error, Location, Result};
use crate::history::record::{FORMAT, Record};

/// How many characters of the commit a file name keeps.
const COMMIT_CHARS: usize = 12;

/// The run's time for its record: `SOURCE_DATE_EPOCH` when set (pinned, reproducible), else the
/// acceptance time the results at `results` carry (a baseline), else now; UTC RFC 3339 in whole
/// seconds. An acceptance time that is not one is an error naming the results file.
pub fn record_time(
    source_date_epoch: Option<&str>,
    results: &Path,
    accepted_utc: Option<&str>,
) -> Result<String> {
    let time = match (source_date_epoch, accepted_utc) {
        (Some(text), _) => UNIX_EPOCH + Duration::from_secs(source_date_epoch_seconds(text)?),
        (None, Some(accepted)) => humantime::parse_rfc3339(accepted).map_err(|e| {
            Error::input(
                results,
                format!(
                    "the results' provenance.accepted_utc `{}` is not a time ({e}): expected UTC \
                     RFC 3339; set SOURCE_DATE_EPOCH to give the run's time",
                    crate::error::shorten(accepted)
                ),
            )
        })?,
        (None, None) => SystemTime::now(),
    };
    Ok(humantime::format_rfc3339_seconds(time).to_string())
}

/// The folder of `tier`'s records. The tier name becomes a folder name, so it must be a plain one.
pub fn tier_dir(dir: &Path, tier: &str) -> Result<PathBuf> {
    let plain = !tier.is_empty()
        && !tier.starts_with('.')
        && tier
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !plain {
        return Err(Error::Usage(format!(
            "tier `{}` cannot name a history folder: expected letters, digits, `-`, `_` or `.` \
             (not first); rename the tier",
            crate::error::shorten(tier)
        )));
    }
    Ok(dir.join(tier))
}

/// `20261201T030000Z-0123456789ab.json` for a record of 2026-12-01T03:00:00Z at commit
/// 0123456789ab…: sorting the names sorts the runs by time.
pub fn file_name(record: &Record) -> String {
    let stamp: String = record
        .time
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let commit: String = record
        .commit
        .as_deref()
        .unwrap_or("")
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(COMMIT_CHARS)
        .collect();
    let commit = if commit.is_empty() {
        "unknown".to_string()
    } else {
        commit.to_ascii_lowercase()
    };
    format!("{stamp}-{commit}.json")
}

/// The name prefix of the temporary file [`add`] writes and then renames into a record.
const TEMP_PREFIX: &str = ".history-tmp-";

/// Whether the folder entry `name` is a temporary file of [`add`] (never a record).
fn is_temp(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .is_some_and(|name| name.starts_with(TEMP_PREFIX))
}

/// Removes the temporary files of `folder` older than [`STALE_TEMP`], the age at which the atomic
/// writes of `baseline::store` clean theirs: an `add` killed before its rename (SIGKILL, a full
/// disk) leaves one behind, while a younger one may belong to an `add` running now.
fn remove_stale_temps(folder: &Path) -> Result<()> {
    let entries = std::fs::read_dir(folder).map_err(|e| Error::io(folder, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(folder, e))?;
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        let stale = metadata
            .modified()
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age >= STALE_TEMP);
        if is_temp(&entry.file_name()) && metadata.is_file() && stale {
            std::fs::remove_file(entry.path()).map_err(|e| Error::write(&entry.path(), e))?;
        }
    }
    Ok(())
}

/// Whether `name` is the name of a history record (`<time>-<commit>.json`, [`file_name`]): the
/// time's letters and digits (`20261201T030000Z`), a dash, letters and digits.
fn is_record_name(name: &str) -> bool {
    let Some((stamp, commit)) = name
        .strip_suffix(".json")
        .and_then(|stem| stem.split_once('-'))
    else {
        return false;
    };
    let date = stamp.get(..8).unwrap_or_default();
    date.len() == 8
        && date.bytes().all(|b| b.is_ascii_digit())
        && stamp.as_bytes().get(8) == Some(&b'T')
        && stamp.ends_with('Z')
        && stamp.bytes().all(|b| b.is_ascii_alphanumeric())
        && !commit.is_empty()
        && commit.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Whether `folder` holds a history record or a temporary file of [`add`] (by their names): it
/// is a tier's folder of a history, where no other file may go. False for a folder that does not
/// exist or cannot be read.
pub fn holds_records(folder: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        is_temp(&name) || name.to_str().is_some_and(is_record_name)
    })
}

/// Writes `record` as a new file of its tier's folder and returns its path; an existing record
/// of the same name is an error naming it (never replaced).
pub fn add(dir: &Path, record: &Record) -> Result<PathBuf> {
    let folder = tier_dir(dir, &record.tier)?;
    std::fs::create_dir_all(&folder).map_err(|e| Error::write(&folder, e))?;
    let path = folder.join(file_name(record));
    let already = || {
        Error::input(
            &path,
            "a record of this tier, time and commit exists already: history records are never \
             replaced; set SOURCE_DATE_EPOCH to the run's own time, or remove that file if it is wrong",
        )
    };
    if path.exists() {
        return Err(already());
    }
    remove_stale_temps(&folder)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut file = builder
        .tempfile_in(&folder)
        .map_err(|e| Error::write(&path, e))?;
    file.write_all(record.to_json().as_bytes())
        .map_err(|e| Error::write(&path, e))?;
    file.as_file()
        .sync_all()
        .map_err(|e| Error::write(&path, e))?;
    file.persist_noclobber(&path).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            already()
        } else {
            Error::write(&path, e.error)
        }
    })?;
    Ok(path)
}

/// Every record of `tier` under `dir`, oldest first; none when the folder does not exist. The
/// temporary files of [`add`] (`.history-tmp-*`: one being written, or left by a killed add) are
/// skipped; any other entry of the folder (another file, a sub-folder, a corrupt or foreign
/// record, a record of another tier or under another name) is an error naming it.
pub fn read_tier(dir: &Path, tier: &str) -> Result<Vec<Record>> {
    let folder = tier_dir(dir, tier)?;
    let entries = match std::fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&folder, e)),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(&folder, e))?;
        if is_temp(&entry.file_name()) && entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        paths.push(entry.path());
    }
    paths.sort();
    paths.iter().map(|path| read_record(path, tier)).collect()
}

/// One record file, which must be a record of `tier` named after its own time and commit.
pub fn read_record(path: &Path, tier: &str) -> Result<Record> {
    let foreign = |what: &str| {
        Error::input(
            path,
            format!(
                "{what}: expected only history records (`<time>-<commit>.json`, written by \
                 `ragate history add`) in a tier's history folder; move it elsewhere"
            ),
        )
    };
    if !path.is_file() {
        return Err(foreign("not a file"));
    }
    if path.extension().and_then(|e| e.to_str()) != Some("json") {
        return Err(foreign("not a `.json` file"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let record: Record = serde_json::from_str(&text).map_err(|e| Error::Parse {
        location: Location::new(path, e.line() as u64).with_column(e.column() as u64),
        message: format!(
            "{e}: expected a ragate history record ({FORMAT}); move the file out of the history \
             folder, or restore it from git"
        ),
    })?;
    record.check().map_err(|message| {
        Error::input(
            path,
            format!("{message}; move the file out of the history folder, or restore it from git"),
        )
    })?;
    if record.tier != tier {
        return Err(Error::input(
            path,
            format!(
                "a record of tier `{}` in the folder of tier `{tier}`: expected `{tier}`; move it \
                 to its tier's folder",
                crate::error::shorten(&record.tier)
            ),
        ));
    }
    let expected = file_name(&record);
    if path.file_name().and_then(|n| n.to_str()) != Some(expected.as_str()) {
        return Err(Error::input(
            path,
            format!(
                "the record's time and commit give the name `{expected}`: expected the file to \
                 be named so (names order the history); rename it"
            ),
        ));
    }
    Ok(record)
}

/// The records of the current series: the latest ones back to the last break (a change of config
/// hash, judges or embeddings), oldest first.
pub fn current_series(records: &[Record]) -> &[Record] {
    let start = (1..records.len())
        .rev()
        .find(|&i| records[i].break_from(&records[i - 1]).is_some())
        .unwrap_or(0);
    &records[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_time_that_is_not_one_names_the_results_file() {
        let results = Path::new("baselines/smoke/results.json");
        let error = record_time(None, results, Some("yesterday")).unwrap_err();
        assert!(
            matches!(&error, Error::Input { path, .. } if path == results),
            "{error:?}"
        );
        assert!(
            error.to_string().starts_with(
                "baselines/smoke/results.json: the results' provenance.accepted_utc `yesterday` \
                 is not a time ("
            ),
            "{error}"
        );
        assert_eq!(
            record_time(Some("0"), results, Some("yesterday")).unwrap(),
            "1970-01-01T00:00:00Z"
        );
    }

    #[test]
    fn a_tier_folder_is_recognised_by_its_records_names() {
        for name in [
            "20261201T030000Z-0123456789ab.json",
            "20261201T030000Z-unknown.json",
        ] {
            assert!(is_record_name(name), "{name}");
        }
        for name in [
            "results.json",
            "zz.json",
            "20261201T030000Z-.json",
            "20261201T030000Z-0123.md",
            "2026-12-01T030000Z-0123.json",
            "20261201-0123.json",
        ] {
            assert!(!is_record_name(name), "{name}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(!holds_records(dir.path()), "empty");
        assert!(!holds_records(&dir.path().join("none")), "missing");
        std::fs::write(dir.path().join("results.json"), "{}").unwrap();
        assert!(!holds_records(dir.path()), "another file");
        std::fs::write(dir.path().join(".history-tmp-x1"), "").unwrap();
        assert!(holds_records(dir.path()), "a killed add's temporary file");
        let tier = dir.path().join("smoke");
        std::fs::create_dir(&tier).unwrap();
        std::fs::write(tier.join("20261201T030000Z-0123456789ab.json"), "{}").unwrap();
        assert!(holds_records(&tier), "a record");
    }
}
