//! JUnit XML of a gate run: one `testsuite` per tier
//! (`ragate.<tier>`), one `testcase` per check in outcome order, with `classname`
//! `ragate.<tier>.<metric>` (CI servers group the cases per metric) and the slice in the name
//! (`recall@10 [class=literal]`); a regression is a `failure` (message: the verdict; body: the
//! regressed queries), an evaluation problem an `error`, an underpowered check `skipped`; an
//! inconclusive check passes with its verdict in system-out (a `failure` of type `not proven
//! (inconclusive: fail)` under `inconclusive: fail`, where a check must be proven within its limit). The suite's system-out carries the baseline counts and the
//! warnings; its `file` names the config the checks come from, its `timestamp` and `time` the
//! run's start (UTC) and duration ([`RunClock`]: pinned by `SOURCE_DATE_EPOCH`).
//!
//! The output validates against Jenkins xunit's `junit-10.xsd` (see tests/fixtures/junit/). That
//! schema allows no `file` or `line` on a `testcase`, so the config's path goes on the
//! `testsuite` (where mikepenz/action-junit-report also looks for it) and no line is given.
//!
//! This module decides what the file says (suites, cases, outcomes, texts); [`xml`] writes it and
//! is the only module that names the `junit-report` crate, so swapping the writer is one file.

use std::path::{Path, PathBuf};
use std::time::{Duration as StdDuration, Instant, SystemTime, UNIX_EPOCH};

use crate::config::InconclusivePolicy;
use crate::error::{Error, Result};
use crate::gate::GateReport;
use crate::gate::verdict::{CheckOutcome, CheckStatus};
use crate::report::format::{one_line, value};
use crate::report::reported;

mod xml;

use xml::{Case, Outcome, Suite};

/// Longest query text listed in a failure body, in characters.
const QUERY_CHARS: usize = 500;

/// When the run started and how long it took, as junit.xml reports them (results.json carries
/// neither, so it stays byte-identical between identical runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunClock {
    /// The start: whole seconds since 1970-01-01 UTC, before the year 10000.
    pub started: u64,
    /// The run's duration in milliseconds.
    pub millis: u128,
}

use crate::env::YEAR_10000;
pub use crate::env::source_date_epoch_seconds;

impl RunClock {
    /// The clock of a run that started at `started` and ends now; with `SOURCE_DATE_EPOCH` set,
    /// that time and a zero duration, so that the output is reproducible.
    pub fn of_run(started: Instant) -> Result<RunClock> {
        let epoch = crate::env::source_date_epoch()?;
        RunClock::at(epoch.as_deref(), SystemTime::now(), started.elapsed())
    }

    /// The clock from the value of `SOURCE_DATE_EPOCH` (if set), the time now and the time the
    /// run took; an unreadable `SOURCE_DATE_EPOCH` is an error, never a silent "now".
    pub fn at(
        source_date_epoch: Option<&str>,
        now: SystemTime,
        elapsed: StdDuration,
    ) -> Result<RunClock> {
        if let Some(text) = source_date_epoch {
            let started = source_date_epoch_seconds(text)?;
            return Ok(RunClock { started, millis: 0 });
        }
        let start = now.checked_sub(elapsed).unwrap_or(now);
        let started = start
            .duration_since(UNIX_EPOCH)
            .ok()
            .map(|since| since.as_secs())
            .filter(|&seconds| seconds < YEAR_10000)
            .ok_or_else(|| {
                Error::Usage(
                    "the system clock is outside the years 1970-9999: set the clock, or set SOURCE_DATE_EPOCH"
                        .to_string(),
                )
            })?;
        Ok(RunClock {
            started,
            millis: elapsed.as_millis(),
        })
    }

    /// The duration in seconds as the schema's `time` wants it (`12.345`; `0` for none).
    pub(crate) fn seconds(&self) -> String {
        if self.millis == 0 {
            return "0".to_string();
        }
        format!("{}.{:03}", self.millis / 1000, self.millis % 1000)
    }
}

/// What junit.xml says about the run besides its checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// The config file the checks come from, as given on the command line (the suite's `file`;
    /// left out when unknown).
    pub config: Option<PathBuf>,
    /// When the run started and how long it took.
    pub clock: RunClock,
}

impl RunInfo {
    /// The run of `config` that started at `started` (see [`RunClock::of_run`]).
    pub fn of_run(config: &Path, started: Instant) -> Result<RunInfo> {
        Ok(RunInfo {
            config: Some(config.to_path_buf()),
            clock: RunClock::of_run(started)?,
        })
    }
}

/// The JUnit XML of a gate run of `run`.
pub fn render(report: &GateReport, run: &RunInfo) -> String {
    let suite = format!("ragate.{}", report.tier);
    let inconclusive_fails = report.inconclusive == InconclusivePolicy::Fail;
    let mut cases: Vec<Case> = (report.outcomes.iter())
        .map(|outcome| testcase(outcome, &suite, inconclusive_fails))
        .collect();
    for metric in &report.reported {
        cases.push(Case {
            name: metric.name(),
            classname: format!("{suite}.{}", metric.metric),
            outcome: Outcome::Skipped {
                kind: "reported",
                message: reported::junit_message(metric),
            },
            system_out: None,
            millis: 0,
        });
    }
    xml::write(&Suite {
        name: suite,
        cases,
        system_out: suite_output(report),
        run,
    })
}

/// A problem before any check could run: one `setup` testcase with an error whose body holds
/// the message and, when a child program failed, the last lines of its stderr (what summary.md
/// shows: Jenkins and GitLab show the body, not summary.md). Its `type` is `setup`, or
/// `setup (retryable)` when a retry may fix the cause (an endpoint down, a timeout, a 429).
pub fn render_setup_error(
    tier: &str,
    message: &str,
    stderr_tail: &[String],
    retryable: bool,
    run: &RunInfo,
) -> String {
    let suite = format!("ragate.{tier}");
    let mut body = message.to_string();
    if !stderr_tail.is_empty() {
        body.push_str(&format!(
            "\n\nThe last {} of its stderr (secrets redacted):\n",
            if stderr_tail.len() == 1 {
                "line".to_string()
            } else {
                format!("{} lines", stderr_tail.len())
            }
        ));
        for line in stderr_tail {
            body.push_str(line);
            body.push('\n');
        }
    }
    let case = Case {
        name: "setup".to_string(),
        classname: format!("{suite}.setup"),
        outcome: Outcome::Error {
            kind: if retryable {
                "setup (retryable)"
            } else {
                "setup"
            },
            message: message.to_string(),
            // Attribute values lose their line breaks in XML readers; keep them in the body.
            body: (body.contains('\n')).then_some(body),
        },
        system_out: None,
        millis: run.clock.millis,
    };
    xml::write(&Suite {
        name: suite,
        cases: vec![case],
        system_out: String::new(),
        run,
    })
}

fn testcase(outcome: &CheckOutcome, suite: &str, inconclusive_fails: bool) -> Case {
    let verdict = || outcome.verdict.clone();
    let result = match outcome.status {
        CheckStatus::Pass | CheckStatus::Improved | CheckStatus::Warn => Outcome::Passed,
        CheckStatus::Inconclusive if inconclusive_fails => Outcome::Failure {
            kind: "not proven (inconclusive: fail)",
            message: verdict(),
            body: None,
        },
        CheckStatus::Inconclusive => Outcome::Passed,
        CheckStatus::Fail => Outcome::Failure {
            kind: "regression",
            message: verdict(),
            body: Some(regressed_queries(outcome)),
        },
        CheckStatus::Error => Outcome::Error {
            kind: "evaluation",
            message: verdict(),
            body: None,
        },
        CheckStatus::Skipped => Outcome::Skipped {
            kind: "underpowered",
            message: verdict(),
        },
    };
    let system_out = match outcome.status {
        CheckStatus::Improved | CheckStatus::Inconclusive | CheckStatus::Warn => Some(verdict()),
        _ => None,
    };
    Case {
        name: outcome.name.clone(),
        classname: format!("{suite}.{}", outcome.metric),
        outcome: result,
        system_out,
        millis: 0,
    }
}

/// The failure body: the queries that dropped most.
fn regressed_queries(outcome: &CheckOutcome) -> String {
    if outcome.worst.is_empty() {
        return "No paired query got worse.\n".to_string();
    }
    let mut text = format!(
        "{} queries got worse; the {} that dropped most:\n",
        outcome.worse_count,
        outcome.worst.len()
    );
    for drop in &outcome.worst {
        let flag = if drop.hit_to_miss {
            " (hit -> miss)"
        } else {
            ""
        };
        let query = (drop.query.as_deref()).map_or(String::new(), |q| {
            format!("  \"{}\"", one_line(q, QUERY_CHARS))
        });
        let (before, now) = (value(drop.baseline), value(drop.current));
        text.push_str(&format!("{}: {before} -> {now}{flag}{query}\n", drop.qid));
        for detail in &drop.details {
            text.push_str(&format!("    {}\n", one_line(detail, QUERY_CHARS * 4)));
        }
    }
    let more = outcome.worse_count.saturating_sub(outcome.worst.len());
    if more > 0 {
        text.push_str(&format!("... and {more} more\n"));
    }
    text
}

fn suite_output(report: &GateReport) -> String {
    let mut text = report
        .compared()
        .map(|c| format!("{c} of the tier with the baseline\n"))
        .unwrap_or_default();
    text.push_str(&format!(
        "baseline: tier {}, {} paired queries, {} only in the baseline, {} only in the current run\n",
        report.tier,
        report.paired_queries,
        report.baseline_only.len(),
        report.current_only.len()
    ));
    for warning in &report.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::annotations::{assert_snapshot, sample_report};

    /// The XML outside CDATA sections, where a reporter looks for elements.
    fn markup(xml: &str) -> String {
        let mut out = String::new();
        let mut rest = xml;
        while let Some(start) = rest.find("<![CDATA[") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("]]>").expect("closed CDATA") + start + 3;
            rest = &rest[end..];
        }
        out + rest
    }

    /// The start tags of the elements called `name`.
    fn tags<'a>(markup: &'a str, name: &str) -> Vec<&'a str> {
        let open = format!("<{name}");
        let mut found = Vec::new();
        for (at, _) in markup.match_indices(&open) {
            let tag = &markup[at..at + markup[at..].find('>').expect("closed tag") + 1];
            if matches!(tag.as_bytes()[open.len()], b' ' | b'/' | b'>') {
                found.push(tag);
            }
        }
        found
    }

    fn attr(tag: &str, key: &str) -> Option<String> {
        let start = tag.find(&format!(" {key}=\""))? + key.len() + 3;
        let raw = &tag[start..start + tag[start..].find('"')?];
        let text = raw
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"");
        Some(text.replace("&apos;", "'").replace("&amp;", "&"))
    }

    /// A run of `eval-config.yaml` that started at 2026-11-30T16:38:55Z and took 12.345 s.
    fn run_info() -> RunInfo {
        RunInfo {
            config: Some(PathBuf::from("configs/eval-config.yaml")),
            clock: RunClock {
                started: 1_796_056_735,
                millis: 12_345,
            },
        }
    }

    #[test]
    fn junit_shape_is_what_reporters_read() {
        let report = sample_report();
        let xml = markup(&render(&report, &run_info()));
        let root = tags(&xml, "testsuites");
        let suites = tags(&xml, "testsuite");
        let cases = tags(&xml, "testcase");
        assert_eq!((root.len(), suites.len(), cases.len()), (1, 1, 6));
        let suite = suites[0];
        assert_eq!(attr(suite, "name").as_deref(), Some("ragate.smoke"));
        for (key, element) in [
            ("tests", "testcase"),
            ("failures", "failure"),
            ("errors", "error"),
            ("skipped", "skipped"),
        ] {
            let children = tags(&xml, element).len().to_string();
            assert_eq!(attr(suite, key), Some(children.clone()), "{key}");
            let on_root = if key == "skipped" {
                None
            } else {
                Some(children)
            };
            assert_eq!(attr(root[0], key), on_root, "{key} on the root");
        }
        // Jenkins' junit-10.xsd: the root takes name, time, tests, failures and errors only.
        let root_keys: Vec<&str> = root[0]
            .split(' ')
            .skip(1)
            .filter_map(|part| part.split_once('=').map(|(key, _)| key))
            .collect();
        assert_eq!(
            root_keys,
            ["tests", "failures", "errors", "time"],
            "{}",
            root[0]
        );
        assert_eq!(attr(suite, "failures").as_deref(), Some("1"));
        for (case, outcome) in cases.iter().zip(&report.outcomes) {
            // The slice is in the name, the metric in the class: one group per metric.
            assert_eq!(attr(case, "name"), Some(outcome.name.clone()));
            assert_eq!(
                attr(case, "classname"),
                Some(format!("ragate.smoke.{}", outcome.metric))
            );
            // junit-10.xsd allows no `file` or `line` on a testcase: the suite carries the file.
            assert_eq!((attr(case, "file"), attr(case, "line")), (None, None));
        }
        let classes: Vec<String> = cases.iter().filter_map(|c| attr(c, "classname")).collect();
        assert_eq!(
            classes,
            [
                "ragate.smoke.recall@5",
                "ragate.smoke.ndcg@10",
                "ragate.smoke.recall@5",
                "ragate.smoke.mrr",
                "ragate.smoke.recall@5",
                "ragate.smoke.mrr"
            ]
        );
        let message = |element| attr(tags(&xml, element)[0], "message");
        assert_eq!(message("failure"), Some(report.outcomes[2].verdict.clone()));
        assert_eq!(message("error"), Some(report.outcomes[5].verdict.clone()));
    }

    #[test]
    fn junit_suite_names_the_config_and_the_run_time() {
        let mut run = run_info();
        let xml = markup(&render(&sample_report(), &run));
        let (root, suite) = (tags(&xml, "testsuites")[0], tags(&xml, "testsuite")[0]);
        assert_eq!(
            attr(suite, "file").as_deref(),
            Some("configs/eval-config.yaml")
        );
        assert_eq!(
            attr(suite, "timestamp").as_deref(),
            Some("2026-11-30T16:38:55Z")
        );
        assert_eq!(attr(suite, "time").as_deref(), Some("12.345"));
        assert_eq!(attr(root, "time").as_deref(), Some("12.345"));
        assert!(
            tags(&xml, "testcase")
                .iter()
                .all(|case| attr(case, "time").as_deref() == Some("0")),
            "{xml}"
        );
        // A path with characters XML escapes stays one attribute value.
        run.config = Some(PathBuf::from("a \"b\" <&>.yaml"));
        let xml = render(&sample_report(), &run);
        assert!(
            xml.contains(" file=\"a &quot;b&quot; &lt;&amp;&gt;.yaml\">"),
            "{xml}"
        );
        let suite = tags(&markup(&xml), "testsuite")[0].to_string();
        assert_eq!(attr(&suite, "file").as_deref(), Some("a \"b\" <&>.yaml"));
        run.config = None;
        let xml = markup(&render(&sample_report(), &run));
        assert_eq!(attr(tags(&xml, "testsuite")[0], "file"), None);
    }

    #[test]
    fn run_clock_is_the_start_and_duration_or_source_date_epoch() {
        let now = UNIX_EPOCH + StdDuration::from_millis(1_796_056_747_500);
        let elapsed = StdDuration::from_millis(12_345);
        let clock = RunClock::at(None, now, elapsed).unwrap();
        // Started 12.345 s before now, whole seconds.
        assert_eq!(clock.started, 1_796_056_735);
        assert_eq!(clock.seconds(), "12.345");
        let pinned = RunClock::at(Some("1700000000"), now, elapsed).unwrap();
        assert_eq!(pinned.started, 1_700_000_000);
        assert_eq!(pinned.seconds(), "0");
        for bad in ["", "soon", "-5", "1.5", "99999999999999999999"] {
            let error = RunClock::at(Some(bad), now, elapsed)
                .unwrap_err()
                .to_string();
            assert!(
                error.starts_with(&format!(
                    "SOURCE_DATE_EPOCH is `{bad}`: expected whole seconds"
                )),
                "{error}"
            );
        }
        let run = RunInfo::of_run(Path::new("eval-config.yaml"), Instant::now()).unwrap();
        if std::env::var_os("SOURCE_DATE_EPOCH").is_none() {
            // 2025-01-01T00:00:00Z
            assert!(run.clock.started >= 1_735_689_600, "{:?}", run.clock);
        }
        for (millis, text) in [(0, "0"), (7, "0.007"), (61_005, "61.005"), (1_000, "1.000")] {
            let clock = RunClock { millis, ..clock };
            assert_eq!(clock.seconds(), text);
        }
    }

    #[test]
    fn junit_is_deterministic_and_well_formed() {
        let mut report = sample_report();
        let xml = render(&report, &run_info());
        assert_eq!(xml, render(&report, &run_info()));
        assert!(!xml.contains("1970"), "{xml}");
        assert!(!xml.contains("NaN"));
        report.outcomes[2].worst[0].query = Some("a ]]> b \u{1}".to_string());
        let xml = render(&report, &run_info());
        assert!(xml.contains("a ]]]]><![CDATA[> b \\u{1}"), "{xml}");
        assert!(
            !markup(&xml).contains("b \\u{1}"),
            "the query stays in CDATA"
        );
        report.outcomes[2].name = "recall@5 [class=\u{1b}]0;t\u{7}\u{202e}\u{85}]".to_string();
        report.outcomes[2].verdict = "v \u{0} \u{fffe}".to_string();
        let xml = render(&report, &run_info());
        assert!(
            xml.contains("name=\"recall@5 [class=\\u{1b}]0;t\\u{7}\\u{202e}\\u{85}]\""),
            "{xml}"
        );
        assert!(xml.contains("message=\"v \\u{0} \u{fffd}\""), "{xml}");
        assert!(
            !xml.chars().any(|c| c < ' ' && !matches!(c, '\n' | '\t')),
            "no control character: {xml:?}"
        );
    }

    #[test]
    fn junit_setup_error_is_one_error_testcase() {
        let message = "no baseline: run `ragate baseline accept`";
        let xml = markup(&render_setup_error(
            "smoke",
            message,
            &[],
            false,
            &run_info(),
        ));
        let (suite, cases) = (tags(&xml, "testsuite")[0], tags(&xml, "testcase"));
        assert_eq!(attr(suite, "name").as_deref(), Some("ragate.smoke"));
        assert_eq!(
            (attr(suite, "tests"), attr(suite, "errors")),
            (Some("1".into()), Some("1".into()))
        );
        assert_eq!(
            attr(suite, "file").as_deref(),
            Some("configs/eval-config.yaml")
        );
        assert_eq!(
            attr(suite, "timestamp").as_deref(),
            Some("2026-11-30T16:38:55Z")
        );
        assert_eq!(cases.len(), 1);
        assert_eq!(attr(cases[0], "name").as_deref(), Some("setup"));
        assert_eq!(
            attr(cases[0], "classname").as_deref(),
            Some("ragate.smoke.setup")
        );
        assert_eq!(
            attr(tags(&xml, "error")[0], "message").as_deref(),
            Some(message)
        );
    }

    #[test]
    fn a_crashed_pipeline_s_stderr_tail_is_in_the_error_body_and_a_retry_is_marked() {
        let tail = [
            "Traceback (most recent call last):".to_string(),
            "  File \"pipeline.py\", line 3".to_string(),
            "KeyError: 'answer'".to_string(),
        ];
        let message = "pipeline (command): `python3 pipeline.py`: exited with exit status: 1";
        let xml = render_setup_error("smoke", message, &tail, false, &run_info());
        let error = tags(&markup(&xml), "error")[0].to_string();
        assert_eq!(attr(&error, "type").as_deref(), Some("setup"));
        assert!(
            xml.contains("The last 3 lines of its stderr (secrets redacted):\nTraceback"),
            "{xml}"
        );
        assert!(xml.contains("KeyError: 'answer'\n"), "{xml}");
        let xml = render_setup_error("smoke", "endpoint down", &[], true, &run_info());
        let error = tags(&markup(&xml), "error")[0].to_string();
        assert_eq!(attr(&error, "type").as_deref(), Some("setup (retryable)"));
        // The setup case took the run's time until it stopped; the suite says the same.
        let markup = markup(&xml);
        assert_eq!(
            attr(tags(&markup, "testcase")[0], "time").as_deref(),
            Some("12.345")
        );
        assert_eq!(
            attr(tags(&markup, "testsuite")[0], "time").as_deref(),
            Some("12.345")
        );
    }

    #[test]
    fn junit_snapshot() {
        assert_snapshot(
            &render(&sample_report(), &run_info()),
            include_str!("../../../tests/fixtures/snapshots/junit.xml"),
            "tests/fixtures/snapshots/junit.xml",
        );
    }
}
