//! Progress of long work (pipeline queries, judge tasks) on stderr: a bar on a terminal, and
//! sparse plain lines elsewhere (CI logs). A plain line is printed when the work has passed a new
//! tenth *and* at least [`PLAIN_LINE_GAP`] (10 s) has gone by since the last line (or the start):
//! whichever of "one per tenth" and "one per 10 s" is rarer. The last item always prints its
//! line (its count is new, so no two lines read the same). A pipeline that answers all its queries at
//! once after a long start thus prints one line and the final one, never ten with the same time.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// The least time between two plain progress lines (the final line excepted).
pub(crate) const PLAIN_LINE_GAP: Duration = Duration::from_secs(10);

/// The last plain line printed: the tenth of the work it reached and when.
#[derive(Debug, Clone, Copy)]
struct Reported {
    tenth: usize,
    at: Instant,
}

/// Whether a plain line is due after `done` of `total` items, and the tenth it reaches: the final
/// item once (tenth 10), else a tenth beyond `reported_tenth` once `since_last` (the time since
/// the last line, or the start) reaches [`PLAIN_LINE_GAP`].
fn plain_line_due(
    done: usize,
    total: usize,
    reported_tenth: usize,
    since_last: Duration,
) -> Option<usize> {
    if reported_tenth >= 10 {
        return None;
    }
    if done >= total {
        return Some(10);
    }
    let tenth = done * 10 / total;
    (tenth > reported_tenth && since_last >= PLAIN_LINE_GAP).then_some(tenth)
}

/// A counter of finished items that reports itself on stderr.
pub struct Progress {
    label: String,
    total: usize,
    done: AtomicUsize,
    started: Instant,
    bar: Option<ProgressBar>,
    /// The last plain line printed.
    reported: Mutex<Reported>,
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
            reported: Mutex::new(Reported {
                tenth: 0,
                at: Instant::now(),
            }),
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
            reported: Mutex::new(Reported {
                tenth: 0,
                at: Instant::now(),
            }),
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
        let mut reported = self.reported.lock().expect("progress lock");
        let now = Instant::now();
        let since_last = now.saturating_duration_since(reported.at);
        if let Some(tenth) = plain_line_due(done, self.total, reported.tenth, since_last) {
            *reported = Reported { tenth, at: now };
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

    /// The plain lines a run of `total` items prints when item `i` (1-based) finishes at
    /// `seconds(i)`: their counts.
    fn printed(total: usize, seconds: impl Fn(usize) -> f64) -> Vec<usize> {
        let mut reported = (0, 0.0);
        let mut counts = Vec::new();
        for done in 1..=total {
            let now = seconds(done);
            let since = Duration::from_secs_f64(now - reported.1);
            if let Some(tenth) = plain_line_due(done, total, reported.0, since) {
                reported = (tenth, now);
                counts.push(done);
            }
        }
        counts
    }

    #[test]
    fn plain_lines_come_at_most_once_per_tenth_and_per_ten_seconds() {
        // All 20 answers at 21.7 s (a pipeline that loads a model first): one line when the
        // first tenth is passed, and the final one; not ten lines of the same time.
        assert_eq!(printed(20, |_| 21.7), [2, 20]);
        // A slow run (5 s per item): a line per tenth, as each is at least 10 s after the last.
        assert_eq!(
            printed(20, |i| 5.0 * i as f64),
            [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
        );
        // A fast run (1 s per item of 100): one line per 10 s, each past a new tenth.
        assert_eq!(
            printed(100, |i| i as f64),
            [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
        );
        // Very fast (0.1 s per item of 200): one line per 10 s, at item 100, and the final.
        assert_eq!(printed(200, |i| i as f64 / 10.0), [100, 200]);
        assert_eq!(printed(1, |_| 0.0), [1]);
        assert_eq!(plain_line_due(3, 0, 0, Duration::ZERO), Some(10));
        assert_eq!(
            plain_line_due(20, 20, 10, PLAIN_LINE_GAP),
            None,
            "the final line once"
        );
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
