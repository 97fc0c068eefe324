//! Reading and writing results and baseline files: atomic writes, strict reads that say what to
//! do next.
//!
//! A missing file is [`Error::Missing`]; every other failure (unreadable, malformed, another
//! format, values out of their metric's range) is another error, so that callers can tell "no
//! baseline yet" from "a baseline that cannot be used".

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::baseline::results::{FORMAT, Results};
use crate::error::{Error, Location, Result};

/// Reads a results or baseline file; `next_step` is the command that would create it.
/// Errors: [`Error::Missing`] when there is no file at `path`; otherwise the file is unreadable.
pub(crate) fn read(path: &Path, next_step: &str) -> Result<Results> {
    read_with_sha256(path, next_step).map(|(results, _)| results)
}

/// Reads a results or baseline file as [`read`] does, with the SHA-256 of its bytes (lowercase
/// hex). The text is dropped once parsed.
pub(crate) fn read_with_sha256(path: &Path, next_step: &str) -> Result<(Results, String)> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing(path, next_step)),
        Err(e) => return Err(Error::io(path, e)),
    };
    let sha256 = crate::digest::sha256_hex(&bytes);
    let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
    let results = match serde_json::from_slice::<Results>(text) {
        Ok(results) => results,
        Err(e) => {
            // Another format is named as such rather than as the field the parser tripped on;
            // only then is the format looked up (every other field skipped, nothing built).
            let format = serde_json::from_slice::<FormatOnly>(text)
                .ok()
                .and_then(|found| found.format);
            check_format(path, format.as_deref(), next_step)?;
            return Err(parse_error(path, &e, next_step));
        }
    };
    check_format(path, Some(&results.format), next_step)?;
    check_results(path, &results, next_step)?;
    Ok((results, sha256))
}

/// The [`Error::Missing`] of a results or baseline file that is not there.
pub(crate) fn missing(path: &Path, next_step: &str) -> Error {
    Error::missing(path, format!("no such file: {next_step}"))
}

/// An error unless `format` (the file's `format` field, when it has one) is the one this
/// ragate reads; a file without one is left to the parser's error.
fn check_format(path: &Path, format: Option<&str>, next_step: &str) -> Result<()> {
    match format {
        Some(other) if other != FORMAT => Err(Error::input(
            path,
            format!(
                "format `{other}` is not `{FORMAT}`, the one this ragate reads: upgrade ragate, or {next_step}"
            ),
        )),
        _ => Ok(()),
    }
}

/// The parser's error `e` for the results file at `path`, at its line and column.
fn parse_error(path: &Path, e: &serde_json::Error, next_step: &str) -> Error {
    Error::Parse {
        location: Location::new(path, e.line() as u64).with_column(e.column() as u64),
        message: format!("{e}: expected a ragate results file ({FORMAT}); {next_step}"),
    }
}

/// Checks what serde cannot: the provenance's hashes and the values' ranges.
fn check_results(path: &Path, results: &Results, next_step: &str) -> Result<()> {
    results.provenance.check().map_err(|message| {
        let message = match next_step {
            "" => message,
            next_step => format!("{message}; {next_step}"),
        };
        Error::input(path, message)
    })?;
    results.check_values().map_err(|message| {
        Error::input(
            path,
            format!("{message} (a results file holds the values ragate computed); {next_step}"),
        )
    })
}

/// The `format` field of a results file, every other field skipped (a first look that does not
/// hold the whole document in memory a second time).
#[derive(serde::Deserialize)]
struct FormatOnly {
    format: Option<String>,
}

/// The name prefix of the temporary files [`write_atomic`] writes beside `path`
/// (`.<file name>.ragate-tmp-`): hidden, recognisable, and ignored by `.gitignore` patterns
/// such as `.*.ragate-tmp-*`.
fn temp_prefix(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy());
    format!(".{name}.ragate-tmp-")
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Removes the temporary files that an interrupted [`write_atomic`] of `path` left beside it
/// (killed between creating and renaming its temporary file); returns how many. Meant for
/// commands a person runs one at a time (`baseline accept`): a concurrent write of the same
/// path would lose its temporary file and fail (never write a partial file).
pub(crate) fn remove_stale_temps(path: &Path) -> Result<usize> {
    remove_temps(path, Duration::ZERO)
}

/// Removes the temporary files of `path` (as [`remove_stale_temps`]) last modified at least
/// `min_age` ago; returns how many. A younger one may belong to a write of `path` running now.
fn remove_temps(path: &Path, min_age: Duration) -> Result<usize> {
    let dir = parent_dir(path);
    let prefix = temp_prefix(path);
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let is_temp = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(&prefix));
        if !is_temp {
            continue;
        }
        // Not followed: a link is no temporary file of ours.
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        let old_enough = min_age.is_zero()
            || metadata
                .modified()
                .ok()
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age >= min_age);
        if metadata.is_file() && old_enough {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                // Removed meanwhile (by another cleaner, or renamed by its writer).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::write(&entry.path(), e)),
            }
        }
    }
    Ok(removed)
}

/// How many symbolic links [`resolve_links`] follows before giving up (as the kernel does).
const MAX_LINKS: usize = 40;

/// The file that `path` names once its symbolic links are followed (the last component only,
/// link after link; a link's relative target is taken from the link's folder). The target need
/// not exist: a dangling link gives the path it points to.
pub(crate) fn resolve_links(path: &Path) -> std::path::PathBuf {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let Ok(target) = std::fs::read_link(&path) else {
            break;
        };
        path = parent_dir(&path).join(target);
    }
    path
}

/// Acceptance time: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now; UTC RFC 3339.
pub(crate) fn accepted_utc() -> Result<String> {
    let time = match crate::env::source_date_epoch()? {
        Some(text) => {
            UNIX_EPOCH + Duration::from_secs(crate::env::source_date_epoch_seconds(&text)?)
        }
        None => SystemTime::now(),
    };
    Ok(humantime::format_rfc3339_seconds(time).to_string())
}

/// How old a temporary file of [`write_atomic`] must be for a later write of the same path to
/// remove it (history's records use the same age). A write killed before its rename (SIGKILL,
/// a full disk) leaves one behind; a younger one may be another write's, running now.
pub(crate) const STALE_TEMP: Duration = Duration::from_secs(10 * 60);

/// What a write does with a symbolic link where it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Links {
    /// A path the user named: the link is followed and its target written (the link stays).
    Follow,
    /// A file ragate names inside an output folder: the link itself is replaced by a regular
    /// file, its target left untouched.
    Replace,
}

/// Writes `text` to `path`, a path the user named (`--junit FILE`, `report --out FILE`, a
/// baseline, qrels). A regular file (or none yet) is written atomically: a temporary file
/// `.<name>.ragate-tmp-XXXXXX` in the same directory, flushed to disk, then renamed over the
/// target; the directory is created when needed, and the temporary files of this path that
/// killed writes left there more than [`STALE_TEMP`] ago are removed. A symbolic link is
/// followed and its target written so (the link stays a link). Anything else that exists
/// (`/dev/null`, `/dev/stdout`, a FIFO, a terminal or another device) is written in place,
/// never replaced by a regular file.
/// `text` is written as it is: the encoder of its format (`json_text`, `report::inert`, the
/// JUnit and HTML writers) redacted every text from outside on its raw form before escaping it;
/// redacting here, after the escaping, would miss escaped forms and could complete a link.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<()> {
    write_file(path, &|out| out.write_all(text.as_bytes()), Links::Follow)
}

/// As [`write_atomic`], with the bytes written by `body` as it makes them (a large results file
/// is encoded straight into the temporary file).
pub(crate) fn write_atomic_with(path: &Path, body: Body<'_>) -> Result<()> {
    write_file(path, body, Links::Follow)
}

/// What writes a file's bytes into the writer it is given (the temporary file, or a device).
pub(crate) type Body<'a> = &'a dyn Fn(&mut dyn Write) -> std::io::Result<()>;

/// Writes `text` to `path`, a file whose name ragate chose inside an output folder (a gate's
/// `summary.md`, synth's `draft.jsonl`): as [`write_atomic`], except that a symbolic link there
/// is replaced by the regular file, never followed (a link planted in the output folder cannot
/// turn an output into a write over a file elsewhere).
pub(crate) fn write_replacing_links(path: &Path, text: &str) -> Result<()> {
    write_file(path, &|out| out.write_all(text.as_bytes()), Links::Replace)
}

/// As [`write_replacing_links`], with the bytes written by `body` as it makes them.
pub(crate) fn write_replacing_links_with(path: &Path, body: Body<'_>) -> Result<()> {
    write_file(path, body, Links::Replace)
}

fn write_file(path: &Path, body: Body<'_>, links: Links) -> Result<()> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    // The kernel follows the links first: `/dev/stdout` is a link to `/proc/self/fd/1`, itself
    // a link to no path when the descriptor is a pipe.
    if !(is_link && links == Links::Replace)
        && let Ok(metadata) = std::fs::metadata(path)
        && !metadata.is_file()
        && !metadata.is_dir()
    {
        return write_in_place(path, body);
    }
    let resolved;
    let path = match links {
        Links::Follow => {
            resolved = resolve_links(path);
            &resolved
        }
        Links::Replace => path,
    };
    let dir = parent_dir(path);
    std::fs::create_dir_all(dir).map_err(|e| Error::write(dir, e))?;
    remove_temps(path, STALE_TEMP)?;
    // Outputs and baselines are meant to be read by others (CI artifacts, reviewers): the
    // temporary file's private mode would stick to them.
    let prefix = temp_prefix(path);
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut file = builder
        .tempfile_in(dir)
        .map_err(|e| Error::write(path, e))?;
    body(&mut file).map_err(|e| Error::write(path, e))?;
    file.as_file()
        .sync_all()
        .map_err(|e| Error::write(path, e))?;
    // A rename replaces a link at `path` with the file; it never writes through it.
    file.persist(path)
        .map_err(|e| Error::write(path, e.error))?;
    Ok(())
}

/// Writes `body`'s bytes into the existing non-regular file `path` (a device or a FIFO: opening a FIFO
/// waits for its reader), without creating, renaming or truncating anything.
fn write_in_place(path: &Path, body: Body<'_>) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Error::write(path, e))?;
    body(&mut file).map_err(|e| Error::write(path, e))?;
    file.flush().map_err(|e| Error::write(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_files_are_named_after_their_target_and_removed_when_stale() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("smoke.json");
        // What a killed write leaves behind, and files that are not its temporaries.
        let stale = dir.path().join(".smoke.json.ragate-tmp-AbC123");
        std::fs::write(&stale, "partial").unwrap();
        std::fs::write(dir.path().join(".deep.json.ragate-tmp-x"), "other").unwrap();
        std::fs::write(dir.path().join("smoke.json.bak"), "kept").unwrap();
        assert_eq!(temp_prefix(&target), ".smoke.json.ragate-tmp-");
        assert_eq!(remove_stale_temps(&target).unwrap(), 1);
        assert!(!stale.exists());
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, [".deep.json.ragate-tmp-x", "smoke.json.bak"]);
        write_atomic(&target, "{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}\n");
        assert_eq!(
            remove_stale_temps(&dir.path().join("none/x.json")).unwrap(),
            0
        );
    }

    #[test]
    fn a_write_removes_its_paths_temporary_files_once_they_are_old() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("qrels.jsonl");
        let old = dir.path().join(".qrels.jsonl.ragate-tmp-Old123");
        let young = dir.path().join(".qrels.jsonl.ragate-tmp-New456");
        let other = dir.path().join(".other.jsonl.ragate-tmp-Old789");
        for path in [&old, &young, &other] {
            std::fs::write(path, "partial").unwrap();
        }
        let long_ago = SystemTime::now() - STALE_TEMP - Duration::from_secs(60);
        for path in [&old, &other] {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        write_atomic(&target, "{}\n").unwrap();
        assert!(!old.exists(), "old enough: a killed write's");
        assert!(young.exists(), "may be a write running now");
        assert!(other.exists(), "another path's");
        assert_eq!(remove_temps(&target, STALE_TEMP).unwrap(), 0);
        assert_eq!(remove_stale_temps(&target).unwrap(), 1, "all, at any age");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_place_and_a_link_is_written_through() {
        write_atomic(Path::new("/dev/null"), "discarded\n").unwrap();
        let null = std::fs::metadata("/dev/null").unwrap();
        assert!(!null.is_file(), "/dev/null is still a device");
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.xml");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.xml");
        std::os::unix::fs::symlink("real.xml", &link).unwrap();
        write_atomic(&link, "new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link gets its target created; the link stays.
        let dangling = dir.path().join("dangling.xml");
        std::os::unix::fs::symlink("created.xml", &dangling).unwrap();
        write_atomic(&dangling, "made").unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("created.xml")).unwrap(),
            "made"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_an_output_folder_is_replaced_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("baseline.json");
        std::fs::write(&target, "kept").unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        for (name, points_to) in [
            ("summary.md", "../baseline.json"),
            ("junit.xml", "../planted.xml"),
            ("null.txt", "/dev/null"),
        ] {
            let link = out.join(name);
            std::os::unix::fs::symlink(points_to, &link).unwrap();
            write_replacing_links(&link, "written").unwrap();
            let metadata = std::fs::symlink_metadata(&link).unwrap();
            assert!(metadata.is_file(), "{name}: a regular file now");
            assert_eq!(std::fs::read_to_string(&link).unwrap(), "written");
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
        assert!(!dir.path().join("planted.xml").exists());
        // A device that is no link is still written in place.
        write_replacing_links(Path::new("/dev/null"), "discarded").unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    }

    #[test]
    fn a_missing_file_is_told_apart_from_an_unreadable_one() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read(&dir.path().join("none.json"), "accept one").unwrap_err();
        assert!(missing.is_missing(), "{missing}");
        let garbage = dir.path().join("garbage.json");
        std::fs::write(&garbage, "{not json").unwrap();
        let unreadable = read(&garbage, "accept one").unwrap_err();
        assert!(!unreadable.is_missing(), "{unreadable}");
        let newer = dir.path().join("newer.json");
        std::fs::write(&newer, "{\"format\":\"ragate-results/2\"}").unwrap();
        let unreadable = read(&newer, "accept one").unwrap_err();
        assert!(!unreadable.is_missing(), "{unreadable}");
        assert!(
            unreadable.to_string().contains("upgrade ragate"),
            "{unreadable}"
        );
    }

    use crate::baseline::collect::{RunContext, results};

    fn results_with(qrels_sha256: &str, config_hash: &str) -> String {
        let context = RunContext {
            tier: "smoke",
            slices: &[],
            qrels_sha256: qrels_sha256.to_string(),
            config_hash: config_hash.to_string(),
            git_commit: None,
            judges: Default::default(),
            embeddings: None,
            conventions: Default::default(),
            sample: None,
        };
        results(vec!["mrr".to_string()], Default::default(), context).to_json()
    }

    #[test]
    fn the_run_to_run_noise_is_stored_and_optional() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        let good = "0123456789abcdef".repeat(4);
        // A file without `noise` (a single run, or written before ragate stored it) reads.
        let plain = results_with(&good, &good);
        assert!(!plain.contains("\"noise\""), "{plain}");
        std::fs::write(&path, &plain).unwrap();
        assert_eq!(read(&path, "run the gate").unwrap().noise, None);
        // With noise: read back as written.
        let with_noise = |noise: &str| {
            plain.replace(
                "\"queries\": {}",
                &format!("\"noise\": {noise},\n  \"queries\": {{}}"),
            )
        };
        let noise = r#"{"repeats": 3, "metrics": {"mrr": {"variance_sum": 0.5, "queries": 4}}}"#;
        std::fs::write(&path, with_noise(noise)).unwrap();
        let stored = read(&path, "run the gate").unwrap().noise.unwrap();
        assert_eq!((stored.repeats, stored.metrics["mrr"].queries), (3, 4));
        for (noise, expected) in [
            (
                r#"{"repeats": 1, "metrics": {}}"#,
                "noise.repeats is 1: expected at least 2",
            ),
            (
                r#"{"repeats": 2, "metrics": {"mrr": {"variance_sum": -1, "queries": 4}}}"#,
                "noise: the variance_sum of `mrr` is -1: expected a finite number >= 0",
            ),
            (
                r#"{"repeats": 2, "metrics": {"ndcg@10": {"variance_sum": 1, "queries": 4}}}"#,
                "noise: metric `ndcg@10` is not in the file's `metrics` list",
            ),
        ] {
            std::fs::write(&path, with_noise(noise)).unwrap();
            let error = read(&path, "run the gate").unwrap_err().to_string();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn a_baseline_mismatch_is_read_only_on_an_error_run_whose_baseline_did_not_fit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        let good = "0123456789abcdef".repeat(4);
        let with = |status: &str, mismatch: &str| {
            results_with(&good, &good)
                .replace("\"status\": \"pass\"", &format!("\"status\": \"{status}\""))
                .replace(
                    "\"queries\": {}",
                    &format!("\"baseline_mismatch\": {mismatch},\n  \"queries\": {{}}"),
                )
        };
        let unpaired =
            r#"{"shared_queries": 0, "queries": 6, "baseline_queries": 6, "min_queries": 3}"#;
        std::fs::write(&path, with("error", unpaired)).unwrap();
        let read_back = read(&path, "run the gate")
            .unwrap()
            .baseline_mismatch
            .unwrap();
        assert_eq!((read_back.shared_queries, read_back.queries), (0, 6));
        for (status, mismatch, expected) in [
            (
                "pass",
                unpaired,
                "`baseline_mismatch` is set, but the status is not `error`",
            ),
            (
                "error",
                r#"{"shared_queries": 6, "queries": 6, "baseline_queries": 6, "min_queries": 3}"#,
                "`baseline_mismatch` says 6 of 6 queries pair",
            ),
            (
                "error",
                r#"{"shared_queries": 7, "queries": 6, "baseline_queries": 9, "min_queries": 9}"#,
                "`baseline_mismatch` says 7 of 6 queries pair",
            ),
        ] {
            std::fs::write(&path, with(status, mismatch)).unwrap();
            let error = read(&path, "run the gate").unwrap_err().to_string();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn provenance_hashes_must_be_sha256_hex() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        let good = "0123456789abcdef".repeat(4);
        std::fs::write(&path, results_with(&good, &good)).unwrap();
        assert!(read(&path, "run the gate").is_ok());
        // A non-ASCII hash made the gate's 12-character excerpt slice inside a character.
        for (qrels, config, key) in [
            ("ééééééééééééééé", good.as_str(), "qrels_sha256"),
            (good.as_str(), "", "config_hash"),
            (&good.to_uppercase(), good.as_str(), "qrels_sha256"),
            (&good[..63], good.as_str(), "qrels_sha256"),
        ] {
            std::fs::write(&path, results_with(qrels, config)).unwrap();
            let error = read(&path, "run the gate").unwrap_err().to_string();
            assert!(
                error.contains("results.json")
                    && error.contains(&format!("provenance.{key}"))
                    && error.contains("64 lowercase hex digits")
                    && error.ends_with("run the gate"),
                "{error}"
            );
        }
    }
}
