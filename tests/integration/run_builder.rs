//! [`Ragate`]: one run of the real binary, built up step by step (modelled on just's `Test`).
//!
//! ```ignore
//! let outcome = Ragate::gate("regression", "base.jsonl", "out")
//!     .sha(SHA)
//!     .status(2)
//!     .stderr_has("ragate baseline accept --tier regression")
//!     .run_in(dir);
//! ```
//!
//! The run is in [`crate::clean_command`]'s cleared environment plus the variables given; the
//! files given are written into the folder first; the expectations are checked after the run,
//! a failure naming the unmet ones and the command and showing both streams, at the test's line;
//! the [`Outcome`] is returned for the test's own checks.

use std::path::Path;

use crate::{Outcome, ragate_env};

/// A command line of ragate, its environment, the files it needs and what it must do.
#[must_use = "nothing runs until `run_in`"]
pub struct Ragate {
    args: Vec<String>,
    env: Vec<(String, String)>,
    files: Vec<(String, String)>,
    status: Option<i32>,
    stdout_has: Vec<String>,
    stderr_has: Vec<String>,
    file_has: Vec<(String, String)>,
}

impl Ragate {
    /// `ragate ARGS`.
    pub fn new<S: AsRef<str>>(args: impl IntoIterator<Item = S>) -> Ragate {
        Ragate {
            args: Vec::new(),
            env: Vec::new(),
            files: Vec::new(),
            status: None,
            stdout_has: Vec::new(),
            stderr_has: Vec::new(),
            file_has: Vec::new(),
        }
        .args(args)
    }

    /// `ragate gate --tier TIER --run RUN --out OUT`.
    pub fn gate(tier: &str, run: &str, out: &str) -> Ragate {
        Ragate::new(["gate", "--tier", tier, "--run", run, "--out", out])
    }

    /// More arguments, after those so far.
    pub fn args<S: AsRef<str>>(mut self, args: impl IntoIterator<Item = S>) -> Ragate {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_string()));
        self
    }

    /// Global options, before the subcommand: `ragate FLAGS gate ...`.
    pub fn before(mut self, flags: &[&str]) -> Ragate {
        let flags = flags.iter().map(|flag| flag.to_string());
        self.args.splice(0..0, flags);
        self
    }

    /// An environment variable of the run.
    pub fn env(mut self, name: &str, value: &str) -> Ragate {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// Environment variables of the run.
    pub fn envs(self, env: &[(&str, &str)]) -> Ragate {
        env.iter()
            .fold(self, |command, (name, value)| command.env(name, value))
    }

    /// A run of commit `sha` (`GITHUB_SHA`, which the gate records).
    pub fn sha(self, sha: &str) -> Ragate {
        self.env("GITHUB_SHA", sha)
    }

    /// Writes `text` to `path` (relative to the run's folder) before the run.
    pub fn file(mut self, path: &str, text: &str) -> Ragate {
        self.files.push((path.to_string(), text.to_string()));
        self
    }

    /// The exit code the run must have.
    pub fn status(mut self, code: i32) -> Ragate {
        self.status = Some(code);
        self
    }

    /// Text stdout must contain.
    pub fn stdout_has(mut self, text: &str) -> Ragate {
        self.stdout_has.push(text.to_string());
        self
    }

    /// Text stderr must contain.
    pub fn stderr_has(mut self, text: &str) -> Ragate {
        self.stderr_has.push(text.to_string());
        self
    }

    /// Text the file at `path` (relative to the run's folder) must contain after the run.
    pub fn file_has(mut self, path: &str, text: &str) -> Ragate {
        self.file_has.push((path.to_string(), text.to_string()));
        self
    }

    /// The arguments, joined by spaces.
    pub fn command_line(&self) -> String {
        self.args.join(" ")
    }

    /// Writes the files, runs ragate in `dir` and checks the expectations: a failure names every
    /// one unmet, the command and both streams, at the caller's line.
    #[track_caller]
    pub fn run_in(self, dir: &Path) -> Outcome {
        for (path, text) in &self.files {
            let path = dir.join(path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).unwrap();
            }
            std::fs::write(&path, text)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        }
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        let outcome = ragate_env(dir, &args, &env);

        let mut unmet = Vec::new();
        if let Some(code) = self.status
            && outcome.code != code
        {
            unmet.push(format!("exit code {}, expected {code}", outcome.code));
        }
        for text in &self.stdout_has {
            if !outcome.stdout.contains(text.as_str()) {
                unmet.push(format!("stdout lacks `{text}`"));
            }
        }
        for text in &self.stderr_has {
            if !outcome.stderr.contains(text.as_str()) {
                unmet.push(format!("stderr lacks `{text}`"));
            }
        }
        for (path, text) in &self.file_has {
            match std::fs::read_to_string(dir.join(path)) {
                Ok(contents) if contents.contains(text.as_str()) => {}
                Ok(contents) => unmet.push(format!("{path} lacks `{text}`:\n{contents}")),
                Err(e) => unmet.push(format!("cannot read {path}: {e}")),
            }
        }
        assert!(
            unmet.is_empty(),
            "`ragate {}`:\n{}\n--- stdout\n{}\n--- stderr\n{}",
            self.command_line(),
            unmet.join("\n"),
            outcome.stdout,
            outcome.stderr
        );
        outcome
    }
}
