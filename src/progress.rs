//! Progress of long work (pipeline queries, judge tasks) on stderr: a bar on a terminal, and
//! sparse plain lines elsewhere (CI logs): one at each tenth of the work and at the end.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

/// A counter of finished items that reports itself on stderr.
pub struct Progress {
    label: String,
    total: usize,
    done: AtomicUsize,
    started: Instant,
    bar: Option<ProgressBar>,
    /// The last tenth reported as a plain line.
    reported_tenth: Mutex<usize>,
    quiet: bool,
}

impl Progress {
    /// Progress of `total` items described by `label` ("pipeline: queries").
    pub fn new(label: &str, total: usize) -> Self {
        if crate::term::quiet() {
            return Progress::hidden();
        }
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed}, eta {eta})")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.set_message(label.to_string());
            bar
        });
        Progress {
            label: label.to_string(),
            total,
            done: AtomicUsize::new(0),
            started: Instant::now(),
            bar,
            reported_tenth: Mutex::new(0),
            quiet: false,
        }
    }

    /// Progress that reports nothing (tests, tiny batches).
    pub fn hidden() -> Self {
        Progress {
            label: String::new(),
            total: 0,
            done: AtomicUsize::new(0),
            started: Instant::now(),
            bar: None,
            reported_tenth: Mutex::new(0),
            quiet: true,
        }
    }

    /// One more item done.
    pub fn inc(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.quiet {
            return;
        }
        if let Some(bar) = &self.bar {
            bar.inc(1);
            return;
        }
        let tenth = (done * 10).checked_div(self.total).unwrap_or(10);
        let mut reported = self.reported_tenth.lock().expect("progress lock");
        if tenth > *reported {
            *reported = tenth;
            // Through the terminal's writer, which ignores a closed stderr (`2>&1 | head`):
            // `eprintln!` would panic on it.
            crate::term::info(self.line(done));
        }
    }

    fn line(&self, done: usize) -> String {
        format!(
            "ragate: {} {done}/{} ({:.1} s)",
            self.label,
            self.total,
            self.started.elapsed().as_secs_f64()
        )
    }

    /// A line of ragate's about the work (`ragate: TEXT`), unless `--quiet`; above the bar when
    /// there is one.
    pub fn note(&self, text: &str) {
        if self.quiet {
            return;
        }
        let line = format!("ragate: {text}");
        match &self.bar {
            Some(bar) => bar.suspend(|| crate::term::info(&line)),
            None => crate::term::info(&line),
        }
    }

    /// Prints the stderr lines of the program doing the work as `LABEL: LINE`, sanitised
    /// ([`crate::term::child_line`]), above the bar when there is one; also under `--quiet` and
    /// for hidden progress.
    pub fn child_printer(&self, label: &str) -> impl FnMut(&str) + Send + 'static {
        let bar = self.bar.clone();
        let label = label.to_string();
        move |line| match &bar {
            Some(bar) => bar.suspend(|| crate::term::child_line(&label, line)),
            None => crate::term::child_line(&label, line),
        }
    }

    pub fn done(&self) -> usize {
        self.done.load(Ordering::Relaxed)
    }

    /// Ends the report: clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_items_from_many_threads() {
        let progress = Progress::hidden();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| (0..250).for_each(|_| progress.inc()));
            }
        });
        assert_eq!(progress.done(), 1000);
    }

    #[test]
    fn plain_lines_name_the_work_and_the_count() {
        let progress = Progress::new("pipeline: queries", 40);
        assert!(
            progress
                .line(4)
                .starts_with("ragate: pipeline: queries 4/40 (")
        );
    }
}
