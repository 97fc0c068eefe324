//! JUnit XML of a gate run, written with the `junit-report` crate: one `testsuite` per tier
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
//! Workarounds for junit-report 0.9:
//! - it stamps every suite with the current time and sums the testcase durations for its `time`:
//!   both are set from the [`RunClock`] after writing (checks take no measurable time of their
//!   own: every testcase has time 0);
//! - it writes no `skipped` count and no `file` on the testsuite: added after writing, with totals
//!   and the duration on the `testsuites` root too;
//! - it writes CDATA unescaped and attributes without filtering characters XML forbids: text is
//!   cleaned (`]]>` split across two CDATA sections, control and bidi characters shown escaped as
//!   `\u{1b}`, the two non-characters replaced);
//! - it writes a single line: line breaks are added between elements, outside CDATA.

use std::path::{Path, PathBuf};
use std::time::{Duration as StdDuration, Instant, SystemTime, UNIX_EPOCH};

use junit_report::{
    Duration, OffsetDateTime, Report, TestCase, TestCaseBuilder, TestSuite, TestSuiteBuilder,
};

use crate::config::InconclusivePolicy;
use crate::error::{Error, Result};
use crate::gate::GateReport;
use crate::gate::verdict::{CheckOutcome, CheckStatus};
use crate::report::format::{one_line, value};
use crate::report::reported;

/// Every testcase's duration: a check is arithmetic on stored values; the run's time is the suite's.
const ZERO: Duration = Duration::ZERO;

/// Longest query text listed in a failure body, in characters.
const QUERY_CHARS: usize = 500;

/// When the run started and how long it took, as junit.xml reports them (results.json carries
/// neither, so it stays byte-identical between identical runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunClock {
    /// The start, UTC, in whole seconds.
    pub started: OffsetDateTime,
    /// The run's duration in milliseconds.
    pub millis: u128,
}

/// The first second of the year 10000 UTC: RFC 3339 (and so every time ragate writes) has four
/// digits for the year.
const YEAR_10000: u64 = 253_402_300_800;

fn source_date_epoch_error(text: &str) -> Error {
    Error::Usage(format!(
        "SOURCE_DATE_EPOCH is `{}`: expected whole seconds since 1970-01-01 UTC, before the year \
         10000 (reproducible-builds.org); set it to an integer such as `$(git log -1 --format=%ct)`, or unset it",
        crate::error::shorten(text)
    ))
}

/// The seconds of a `SOURCE_DATE_EPOCH` value, read the same way by every command that writes a
/// time (gate, merge, `baseline accept`, `history add`): a whole number of seconds from
/// 1970-01-01 UTC up to the end of the year 9999; anything else is an error naming the value.
pub fn source_date_epoch_seconds(text: &str) -> Result<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|&seconds| seconds < YEAR_10000)
        .ok_or_else(|| source_date_epoch_error(text))
}

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
            let seconds = source_date_epoch_seconds(text)?;
            let started = OffsetDateTime::from_unix_timestamp(seconds as i64)
                .map_err(|_| source_date_epoch_error(text))?;
            return Ok(RunClock { started, millis: 0 });
        }
        let start = now.checked_sub(elapsed).unwrap_or(now);
        let started = start
            .duration_since(UNIX_EPOCH)
            .ok()
            .and_then(|since| i64::try_from(since.as_secs()).ok())
            .and_then(|seconds| OffsetDateTime::from_unix_timestamp(seconds).ok())
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
    fn seconds(&self) -> String {
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
    let mut builder = suite_builder(&suite, run);
    let inconclusive_fails = report.inconclusive == InconclusivePolicy::Fail;
    for outcome in &report.outcomes {
        builder.add_testcase(testcase(outcome, &suite, inconclusive_fails));
    }
    for metric in &report.reported {
        let message = xml_text(&reported::junit_message(metric));
        let mut case =
            TestCaseBuilder::skipped_with_cause(&xml_text(&metric.name()), "reported", &message);
        case.set_classname(&xml_text(&format!("{suite}.{}", metric.metric)));
        builder.add_testcase(case.build());
    }
    builder.set_system_out(&cdata(&suite_output(report)));
    write(builder.build(), run)
}

/// A problem before any check could run: one `setup` testcase with an error.
pub fn render_setup_error(tier: &str, message: &str, run: &RunInfo) -> String {
    let suite = format!("ragate.{tier}");
    let mut case = TestCaseBuilder::error("setup", ZERO, "setup", &xml_text(message));
    case.set_classname(&xml_text(&format!("{suite}.setup")));
    if message.contains('\n') {
        // Attribute values lose their line breaks in XML readers; keep them in the body.
        case.set_trace(&cdata(message));
    }
    let mut builder = suite_builder(&suite, run);
    builder.add_testcase(case.build());
    write(builder.build(), run)
}

fn suite_builder(name: &str, run: &RunInfo) -> TestSuiteBuilder {
    let mut builder = TestSuiteBuilder::new(&xml_text(name));
    builder.set_timestamp(run.clock.started);
    builder
}

fn testcase(outcome: &CheckOutcome, suite: &str, inconclusive_fails: bool) -> TestCase {
    let name = xml_text(&outcome.name);
    let verdict = xml_text(&outcome.verdict);
    let mut case = match outcome.status {
        CheckStatus::Pass | CheckStatus::Improved | CheckStatus::Warn => {
            TestCaseBuilder::success(&name, ZERO)
        }
        CheckStatus::Inconclusive if inconclusive_fails => {
            TestCaseBuilder::failure(&name, ZERO, "not proven (inconclusive: fail)", &verdict)
        }
        CheckStatus::Inconclusive => TestCaseBuilder::success(&name, ZERO),
        CheckStatus::Fail => TestCaseBuilder::failure(&name, ZERO, "regression", &verdict),
        CheckStatus::Error => TestCaseBuilder::error(&name, ZERO, "evaluation", &verdict),
        CheckStatus::Skipped => {
            TestCaseBuilder::skipped_with_cause(&name, "underpowered", &verdict)
        }
    };
    match outcome.status {
        CheckStatus::Improved | CheckStatus::Inconclusive | CheckStatus::Warn => {
            case.set_system_out(&cdata(&outcome.verdict))
        }
        CheckStatus::Fail => case.set_trace(&cdata(&regressed_queries(outcome))),
        _ => &mut case,
    };
    case.set_classname(&xml_text(&format!("{suite}.{}", outcome.metric)));
    case.build()
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
    let mut text = format!(
        "baseline: tier {}, {} paired queries, {} only in the baseline, {} only in the current run\n",
        report.tier,
        report.paired_queries,
        report.baseline_only.len(),
        report.current_only.len()
    );
    for warning in &report.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text
}

/// The characters XML 1.0 forbids or discourages, and bidi controls, shown escaped (`\u{1b}`,
/// as everywhere); the two non-characters replaced.
fn xml_text(text: &str) -> String {
    crate::escape::visible(text)
        .chars()
        .map(|c| match c {
            '\u{FFFE}' | '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// Text for a CDATA section the crate opens and closes: a `]]>` inside is split in two sections.
fn cdata(text: &str) -> String {
    xml_text(text).replace("]]>", "]]]]><![CDATA[>")
}

fn write(suite: TestSuite, run: &RunInfo) -> String {
    let (tests, failures, errors) = (suite.tests(), suite.failures(), suite.errors());
    let skipped = suite.skipped();
    let time = run.clock.seconds();
    let mut report = Report::new();
    report.add_testsuite(suite);
    let mut bytes = Vec::new();
    report
        .write_xml(&mut bytes)
        .expect("writing XML to memory cannot fail");
    let xml = String::from_utf8(bytes).expect("the XML writer writes UTF-8");
    // Jenkins' junit-10.xsd allows only name, time, tests, failures and errors on the root; the
    // skipped count goes on the testsuite.
    let root = format!(
        "<testsuites tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{time}\">"
    );
    let xml = xml.replacen("<testsuites>", &root, 1);
    let mut extra = format!(" skipped=\"{skipped}\"");
    if let Some(config) = &run.config {
        extra.push_str(&format!(
            " file=\"{}\"",
            attribute(&config.to_string_lossy())
        ));
    }
    let xml = complete_suite_tag(&xml, &time, &extra);
    line_breaks(&xml) + "\n"
}

/// The first testsuite start tag with its `time` set to `time` and `extra` attributes appended.
/// Attribute values in it are escaped (no `<` or `>` inside), so the tag ends at the first `>`.
fn complete_suite_tag(xml: &str, time: &str, extra: &str) -> String {
    let start = xml.find("<testsuite ").expect("the report has a testsuite");
    let end = start + xml[start..].find('>').expect("the tag is closed");
    let (tag_end, close) = if xml[..end].ends_with('/') {
        (end - 1, "/>")
    } else {
        (end, ">")
    };
    // The crate writes the sum of the testcase durations, all zero.
    let tag = xml[start..tag_end].replacen(" time=\"0\"", &format!(" time=\"{time}\""), 1);
    format!("{}{tag}{extra}{close}{}", &xml[..start], &xml[end + 1..])
}

/// `text` escaped for an attribute value in double quotes.
fn attribute(text: &str) -> String {
    xml_text(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Starts every suite, testcase and system-out on its own line, leaving CDATA untouched.
fn line_breaks(xml: &str) -> String {
    const BREAK_BEFORE: [&str; 5] = [
        "<testsuite",
        "</testsuite",
        "<testcase",
        "</testcase",
        "<system-out",
    ];
    let mut out = String::with_capacity(xml.len() + 256);
    let mut rest = xml;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if rest.starts_with("<![CDATA[") {
            let end = rest.find("]]>").map_or(rest.len(), |end| end + 3);
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if BREAK_BEFORE.iter().any(|tag| rest.starts_with(tag)) {
            out.push('\n');
        }
        out.push('<');
        rest = &rest[1..];
    }
    out.push_str(rest);
    out
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
                started: OffsetDateTime::from_unix_timestamp(1_796_056_735).unwrap(),
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
        assert_eq!(clock.started.unix_timestamp(), 1_796_056_735);
        assert_eq!(clock.started.nanosecond(), 0);
        assert_eq!(clock.seconds(), "12.345");
        let pinned = RunClock::at(Some("1700000000"), now, elapsed).unwrap();
        assert_eq!(pinned.started.unix_timestamp(), 1_700_000_000);
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
            assert!(run.clock.started.year() >= 2025, "{:?}", run.clock);
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
        let xml = markup(&render_setup_error("smoke", message, &run_info()));
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
    fn junit_snapshot() {
        assert_snapshot(
            &render(&sample_report(), &run_info()),
            include_str!("../../tests/fixtures/snapshots/junit.xml"),
            "tests/fixtures/snapshots/junit.xml",
        );
    }
}
