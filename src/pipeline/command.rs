//! The `command` pipeline adapter: a program started once per run (argv, never a shell, in the
//! config's directory) that reads `{"qid","query"}` lines on stdin until EOF and writes one native
//! run line per query on stdout, in any order (a line that is not one, such as a log line, stops
//! the run with an error that shows it, cut and inert, and says logs go to stderr). Its stderr is
//! forwarded line by line as it comes, as `pipeline: LINE` with control characters shown escaped,
//! so a pipeline that builds itself first (`cargo run`) shows its build instead of a silent wait;
//! its last lines go with an error (the exit-2 summary shows them).
//!
//! Latency: a query's `latency_ms` is the time from when it was available to the program (written
//! to its stdin, and the previous answer read) to when its answer was read. For a program that
//! answers one query at a time this is its per-query service time; a program that works on many
//! queries at once should report `latency_ms` itself, which is kept.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::pipeline::{Collector, LOG_LINE_HINT, ProducedRun, Request, bare_message};
use crate::progress::Progress;
use crate::subprocess::{LineProcess, Next};

#[derive(Debug, Clone, PartialEq)]
pub struct CommandPipeline {
    pub argv: Vec<String>,
    /// The argv as written in the config, before `${VAR}` expansion: what errors print, so that
    /// values from the environment never reach a log.
    pub shown: String,
    /// The whole run's time limit.
    pub timeout: Duration,
}

impl CommandPipeline {
    fn error(&self, message: String) -> Error {
        Error::pipeline("command", format!("`{}`: {message}", self.shown))
    }

    pub fn produce(
        &self,
        requests: &[Request],
        dir: &Path,
        progress: &Progress,
    ) -> Result<ProducedRun> {
        let input = requests
            .iter()
            .map(|r| format!("{}\n", r.to_json()))
            .collect();
        let stderr = progress.child_printer("pipeline");
        let process = LineProcess::start(&self.argv, Some(dir), input, self.timeout, stderr)
            .map_err(|e| self.error(format!("cannot start in {}: {e}", dir.display())))?;
        progress.note(&format!(
            "pipeline: started `{}`, waiting for its first answer",
            self.shown
        ));
        let stderr = process.stderr_tail();
        self.run(requests, process, progress)
            .map_err(|e| e.with_stderr(stderr.lines()))
    }

    /// Reads the answers of the started `process` and waits for it to exit.
    fn run(
        &self,
        requests: &[Request],
        process: LineProcess,
        progress: &Progress,
    ) -> Result<ProducedRun> {
        let collector = match self.read_answers(requests, &process, progress) {
            Ok(collector) => collector,
            Err(error) => {
                process.kill();
                return Err(error);
            }
        };
        match process.wait() {
            Ok(Some(status)) if status.success() => {}
            Ok(Some(status)) => {
                return Err(self.error(format!("exited with {status}: expected exit code 0")));
            }
            Ok(None) => {
                return Err(self.error(format!(
                    "did not exit within timeout_s ({} s) after closing its output",
                    self.timeout.as_secs()
                )));
            }
            Err(e) => return Err(self.error(format!("cannot wait for it: {e}"))),
        }
        collector
            .finish(requests)
            .map_err(|e| self.error(bare_message(&e)))
    }

    fn read_answers<'a>(
        &self,
        requests: &'a [Request],
        process: &LineProcess,
        progress: &Progress,
    ) -> Result<Collector<'a>> {
        let mut collector = Collector::new("command", requests).with_not_object_hint(LOG_LINE_HINT);
        let mut line_number = 0u64;
        let mut previous_answer = Instant::now();
        loop {
            let line = match process.next() {
                Next::Line(line) => line,
                Next::End => return Ok(collector),
                Next::ReadFailed(e) => {
                    return Err(self.error(format!("cannot read its output: {e}")));
                }
                Next::TimedOut => {
                    return Err(self.error(format!(
                        "timed out after timeout_s ({} s) with {} of {} queries answered",
                        self.timeout.as_secs(),
                        collector.len(),
                        requests.len()
                    )));
                }
            };
            let now = Instant::now();
            line_number += 1;
            if line.trim().is_empty() {
                continue;
            }
            let whence = format!("output line {line_number}");
            let index = collector
                .accept(&whence, &line)
                .map_err(|e| self.error(bare_message(&e)))?;
            let available = process
                .written_at(index)
                .map_or(previous_answer, |written| written.max(previous_answer));
            collector.set_latency(
                &requests[index].qid,
                now.saturating_duration_since(available),
            );
            previous_answer = now;
            progress.inc();
        }
    }
}
