//! The probes before a gate run's pipeline runs (and on `ragate plan --probe`): every judge
//! endpoint and embeddings endpoint the run will call answers one `GET /models`
//! ([`crate::http::probe`]), and every `command` judge's program exists and is executable. A
//! dead endpoint fails the run in seconds, not after a pipeline run of an hour. Replay mode calls
//! nothing and probes nothing; a run from a file probes only what its plan still calls after the
//! cache.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::config::{CacheMode, Config, Tier};
use crate::error::{Error, Result};
use crate::http::endpoint::HttpEndpoint;
use crate::http::probe as http_probe;
use crate::input::qrels::Qrels;
use crate::run::judges_called::{embeddings_called, judged_by_judges};
use crate::run::plan::{self, Line, Plan, SourceKind};
use crate::term;

/// Which judges (and whether the embeddings endpoint) a run will call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Called {
    /// Every judge its metrics name, and the embeddings endpoint when it is used: the pipeline
    /// answers anew, so the cache's hits are not known before it has run.
    Every,
    /// Those with calls left after the cache, as a run file's plan counts them.
    Only {
        judges: BTreeSet<String>,
        embeddings: bool,
    },
}

impl Called {
    /// The judges, and the embeddings endpoint, with calls in a plan's `lines`.
    pub(crate) fn of_lines(lines: &[Line]) -> Called {
        let calling = || lines.iter().filter(|line| line.calls > 0);
        Called::Only {
            judges: calling()
                .filter(|line| line.kind != "embeddings")
                .map(|line| line.judge.clone())
                .collect(),
            embeddings: calling().any(|line| line.kind == "embeddings"),
        }
    }

    fn judge(&self, name: &str) -> bool {
        match self {
            Called::Every => true,
            Called::Only { judges, .. } => judges.contains(name),
        }
    }

    fn embeddings(&self) -> bool {
        match self {
            Called::Every => true,
            Called::Only { embeddings, .. } => *embeddings,
        }
    }
}

/// One thing checked before the run, with the judge's name (`embeddings` for that endpoint).
enum Target<'c> {
    Endpoint {
        judge: &'c str,
        key: String,
        endpoint: &'c HttpEndpoint,
    },
    Program {
        judge: &'c str,
        program: &'c str,
        written: &'c str,
    },
}

/// What the run will call, in config order: each judge's endpoint or program, then the
/// embeddings endpoint.
fn targets<'c>(config: &'c Config, tier: &'c Tier, called: &Called) -> Vec<Target<'c>> {
    let mut seen = BTreeSet::new();
    let mut targets = Vec::new();
    for spec in judged_by_judges(config, tier) {
        let judge = spec.judge.as_str();
        if !called.judge(judge) || !seen.insert(judge) {
            continue;
        }
        let settings = &config.judges[judge];
        if let Some(endpoint) = settings.endpoint() {
            let key = format!("judges.{judge}");
            targets.push(Target::Endpoint {
                judge,
                key,
                endpoint,
            });
        }
        if let Some((program, written)) = settings.program() {
            targets.push(Target::Program {
                judge,
                program,
                written,
            });
        }
    }
    if let Some(spec) = embeddings_called(config, tier).filter(|_| called.embeddings()) {
        targets.push(Target::Endpoint {
            judge: "embeddings",
            key: "embeddings".to_string(),
            endpoint: &spec.endpoint,
        });
    }
    targets
}

/// Checks what the run will call, in order: what each check found, or the first failure (an
/// error naming the judge, the URL or program as written, and why).
pub(crate) fn check(config: &Config, tier: &Tier, called: &Called) -> Result<Vec<String>> {
    targets(config, tier, called)
        .iter()
        .map(check_one)
        .collect()
}

fn check_one(target: &Target<'_>) -> Result<String> {
    match *target {
        Target::Endpoint {
            judge,
            ref key,
            endpoint,
        } => match http_probe::probe(endpoint) {
            Ok(status) => Ok(format!(
                "judge `{judge}`: GET {} answered HTTP {status}: the endpoint is up",
                http_probe::written_url(endpoint)
            )),
            Err(failure) => Err(Error::Judge {
                judge: judge.to_string(),
                message: format!(
                    "{failure}; probed before the pipeline runs: {}, or use `cache: {{ mode: \
                     replay }}` with a cache that holds every verdict",
                    advice(&failure, key)
                ),
                cause: Some(Box::new(failure)),
            }),
        },
        Target::Program {
            judge,
            program,
            written,
        } => {
            let path = std::env::var_os("PATH");
            match find_program(program, path.as_deref()) {
                Ok(found) => Ok(format!(
                    "judge `{judge}`: program `{written}` is {}",
                    found.display()
                )),
                Err(reason) => Err(Error::judge(
                    judge,
                    format!(
                        "program `{written}` (judges.{judge}.command[0]) {reason}: expected an \
                         executable program (checked before the pipeline runs); install it or \
                         fix the command"
                    ),
                )),
            }
        }
    }
}

/// What to do about `failure` of the endpoint configured at `key` (`judges.j`, `embeddings`).
fn advice(failure: &http_probe::ProbeFailure, key: &str) -> String {
    match failure {
        http_probe::ProbeFailure::Unreachable { .. } => {
            format!("start the endpoint or fix `{key}.base_url`")
        }
        http_probe::ProbeFailure::KeyRefused { .. } => {
            format!("set a key the endpoint accepts (`{key}.api_key_env`)")
        }
        http_probe::ProbeFailure::NotSent { .. } => format!("fix `{key}`"),
    }
}

/// Where `program` is, as a process start would find it: a name with a `/` as it is (relative
/// to the working directory), a bare name in the first folder of `path` (PATH's value; unset:
/// `/bin:/usr/bin`, an empty entry: the working directory) that has an executable file of
/// that name. Else why not.
fn find_program(program: &str, path: Option<&OsStr>) -> std::result::Result<PathBuf, String> {
    if program.contains('/') {
        let candidate = PathBuf::from(program);
        return if is_executable(&candidate) {
            Ok(candidate)
        } else if candidate.exists() {
            Err("is not an executable file".to_string())
        } else {
            Err("does not exist".to_string())
        };
    }
    let path = path.unwrap_or(OsStr::new("/bin:/usr/bin"));
    std::env::split_paths(path)
        .map(|dir| {
            if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir
            }
        })
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| "is not found on PATH".to_string())
}

/// Whether `path` is a file that may be executed.
#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Whether `path` is a file that may be executed.
#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Before the pipeline of a gate run of `tier` runs: every check, unless replay mode calls
/// nothing; for a run from a file (`run`: `--run` or the configured run file), only of what its
/// plan calls after the cache (a plan that cannot be made, say of a malformed run, checks
/// everything: the run reports its own error later).
pub(crate) fn before_run(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    run: Option<&Path>,
) -> Result<()> {
    if config.cache.mode == CacheMode::Replay || targets(config, tier, &Called::Every).is_empty() {
        return Ok(());
    }
    let called = match run.map(|path| plan::run_lines(config, tier, qrels, path)) {
        Some(Ok(Some(lines))) => Called::of_lines(&lines),
        Some(Ok(None)) => return Ok(()), // a TREC run: nothing is judged
        Some(Err(_)) | None => Called::Every,
    };
    check(config, tier, &called).map(drop)
}

/// `ragate plan --probe`: the checks a gate run of `plan` would make, a note for each one that
/// passed; the first failure as an error.
pub(crate) fn for_plan(config: &Config, tier: &Tier, plan: &Plan) -> Result<()> {
    if config.cache.mode == CacheMode::Replay {
        term::note("cache mode replay: a gate run calls no judge, so nothing is probed");
        return Ok(());
    }
    let called = match plan.source.kind {
        SourceKind::Run => Called::of_lines(&plan.judges),
        SourceKind::Baseline | SourceKind::None => Called::Every,
    };
    let passed = check(config, tier, &called)?;
    if passed.is_empty() {
        term::note("no judge endpoint or program to probe: the run calls none");
    }
    for note in passed {
        term::note(note);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_program_is_found_on_path_or_at_its_path_if_executable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "text").unwrap();
        let path =
            std::env::join_paths(["/nonexistent-dir", dir.path().to_str().unwrap()]).unwrap();
        assert_eq!(find_program("tool", Some(&path)), Ok(tool.clone()));
        assert_eq!(
            find_program("plain", Some(&path)),
            Err("is not found on PATH".to_string())
        );
        assert_eq!(
            find_program("no-such-tool", Some(&path)),
            Err("is not found on PATH".to_string())
        );
        assert_eq!(find_program(tool.to_str().unwrap(), None), Ok(tool));
        assert_eq!(
            find_program(plain.to_str().unwrap(), None),
            Err("is not an executable file".to_string())
        );
        assert_eq!(
            find_program("./no/such/tool", None),
            Err("does not exist".to_string())
        );
        assert!(
            find_program("sh", None).is_ok(),
            "PATH unset: /bin:/usr/bin"
        );
    }

    #[test]
    fn a_plan_calls_the_judges_with_calls_left() {
        let line = |judge: &str, kind: &str, calls: u64| {
            let mut line = Line::named(judge, kind, None);
            line.calls = calls;
            line
        };
        let called = Called::of_lines(&[
            line("llm", "openai", 3),
            line("cached", "openai", 0),
            line("embeddings", "embeddings", 0),
        ]);
        assert!(called.judge("llm") && !called.judge("cached") && !called.embeddings());
        let called = Called::of_lines(&[line("embeddings", "embeddings", 1)]);
        assert!(called.embeddings() && !called.judge("embeddings"));
        assert!(Called::Every.judge("any") && Called::Every.embeddings());
    }
}
