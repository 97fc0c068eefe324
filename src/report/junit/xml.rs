//! The JUnit XML writer: the only module that names the `junit-report` crate. It takes the suite
//! that [`super`] decided (plain data) and returns the file's text, cleaned for XML and patched
//! where the crate falls short of what Jenkins' junit-10.xsd and CI reporters read.
//!
//! Workarounds for junit-report 0.9:
//! - it stamps every suite with the current time and sums the testcase durations for its `time`:
//!   both are set from the [`RunClock`](super::RunClock) after writing (checks take no
//!   measurable time of their own: their testcases have time 0; a `setup` error's has the run's
//!   time until it stopped);
//! - it writes no `skipped` count and no `file` on the testsuite: added after writing, with totals
//!   and the duration on the `testsuites` root too;
//! - it writes CDATA unescaped and attributes without filtering characters XML forbids: text is
//!   cleaned (`]]>` split across two CDATA sections, control and bidi characters shown escaped as
//!   `\u{1b}`, the two non-characters replaced);
//! - it writes a single line: line breaks are added between elements, outside CDATA.
//!
//! The alternative, should the crate go: a writer over `quick-xml` (already a dev-dependency, the
//! tests read the output with it), about 150 lines that write the attributes and CDATA sections
//! directly; the workarounds above would disappear with it. The tests below pin what any writer
//! must produce.

use junit_report::{Duration, OffsetDateTime, Report, TestCaseBuilder, TestSuiteBuilder};

use super::RunInfo;

/// One `testsuite`: its cases in order and its system-out (left out when empty).
pub(super) struct Suite<'a> {
    pub name: String,
    pub cases: Vec<Case>,
    pub system_out: String,
    pub run: &'a RunInfo,
}

/// One `testcase`.
pub(super) struct Case {
    pub name: String,
    pub classname: String,
    pub outcome: Outcome,
    /// The case's system-out, if any.
    pub system_out: Option<String>,
    /// How long the case took, in milliseconds, where ragate knows it: a `setup` error's is the
    /// run's until it stopped; a check takes no measurable time of its own (0).
    pub millis: u128,
}

/// How a testcase ended; `kind` is the element's `type`, `body` its text (a CDATA section).
pub(super) enum Outcome {
    Passed,
    Failure {
        kind: &'static str,
        message: String,
        body: Option<String>,
    },
    Error {
        kind: &'static str,
        message: String,
        body: Option<String>,
    },
    Skipped {
        kind: &'static str,
        message: String,
    },
}

/// The text of a JUnit XML file holding `suite`, ending with a line break.
pub(super) fn write(suite: &Suite) -> String {
    let mut builder = TestSuiteBuilder::new(&xml_text(&suite.name));
    // Whole seconds before the year 10000 (RunClock's invariant), which `time` always represents.
    let started = i64::try_from(suite.run.clock.started)
        .ok()
        .and_then(|seconds| OffsetDateTime::from_unix_timestamp(seconds).ok())
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    builder.set_timestamp(started);
    for case in &suite.cases {
        builder.add_testcase(testcase(case));
    }
    if !suite.system_out.is_empty() {
        builder.set_system_out(&cdata(&suite.system_out));
    }
    finish(builder, suite.run)
}

fn testcase(case: &Case) -> junit_report::TestCase {
    let name = xml_text(&case.name);
    let took = Duration::milliseconds(i64::try_from(case.millis).unwrap_or(i64::MAX));
    let (mut builder, body) = match &case.outcome {
        Outcome::Passed => (TestCaseBuilder::success(&name, took), None),
        Outcome::Failure {
            kind,
            message,
            body,
        } => (
            TestCaseBuilder::failure(&name, took, kind, &xml_text(message)),
            body.as_deref(),
        ),
        Outcome::Error {
            kind,
            message,
            body,
        } => (
            TestCaseBuilder::error(&name, took, kind, &xml_text(message)),
            body.as_deref(),
        ),
        Outcome::Skipped { kind, message } => (
            TestCaseBuilder::skipped_with_cause(&name, kind, &xml_text(message)),
            None,
        ),
    };
    if let Some(text) = &case.system_out {
        builder.set_system_out(&cdata(text));
    }
    if let Some(text) = body {
        builder.set_trace(&cdata(text));
    }
    builder.set_classname(&xml_text(&case.classname));
    builder.build()
}

fn finish(builder: TestSuiteBuilder, run: &RunInfo) -> String {
    let suite = builder.build();
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

/// `text` redacted ([`crate::secrets::redact`], on the raw text, before anything is escaped),
/// then the characters XML 1.0 forbids or discourages, and bidi controls, shown escaped
/// (`\u{1b}`, as everywhere); the two non-characters replaced. Every text of the file passes
/// here once (the crate escapes element text and attributes after it).
fn xml_text(text: &str) -> String {
    crate::escape::visible(&crate::secrets::redact(text))
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
    // The crate writes the sum of the testcase durations: the run's own time replaces it.
    let mut tag = xml[start..tag_end].to_string();
    if let Some(at) = tag.find(" time=\"") {
        let value = at + " time=\"".len();
        let end = value + tag[value..].find('"').unwrap_or(0);
        tag.replace_range(value..end, time);
    }
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
    use std::path::PathBuf;

    use super::*;
    use crate::report::junit::RunClock;

    fn run(config: Option<&str>, millis: u128) -> RunInfo {
        RunInfo {
            config: config.map(PathBuf::from),
            clock: RunClock {
                started: 1_796_056_735,
                millis,
            },
        }
    }

    fn case(name: &str, outcome: Outcome) -> Case {
        Case {
            name: name.to_string(),
            classname: format!("ragate.smoke.{name}"),
            outcome,
            system_out: None,
            millis: 0,
        }
    }

    fn suite_of(cases: Vec<Case>, system_out: &str, run: &RunInfo) -> String {
        write(&Suite {
            name: "ragate.smoke".to_string(),
            cases,
            system_out: system_out.to_string(),
            run,
        })
    }

    #[test]
    fn totals_time_file_and_timestamp_are_patched_in() {
        let info = run(Some("cfg/\"eval\".yaml"), 12_345);
        let cases = vec![
            case("a", Outcome::Passed),
            case(
                "b",
                Outcome::Failure {
                    kind: "regression",
                    message: "dropped".to_string(),
                    body: Some("q1: 1 -> 0\n".to_string()),
                },
            ),
            case(
                "c",
                Outcome::Error {
                    kind: "evaluation",
                    message: "no values".to_string(),
                    body: None,
                },
            ),
            case(
                "d",
                Outcome::Skipped {
                    kind: "underpowered",
                    message: "too few".to_string(),
                },
            ),
        ];
        let xml = suite_of(cases, "baseline: tier smoke\n", &info);
        assert!(
            xml.contains("<testsuites tests=\"4\" failures=\"1\" errors=\"1\" time=\"12.345\">"),
            "{xml}"
        );
        let suite_tag = xml.lines().find(|l| l.starts_with("<testsuite ")).unwrap();
        for wanted in [
            " time=\"12.345\"",
            " skipped=\"1\"",
            " file=\"cfg/&quot;eval&quot;.yaml\"",
            " timestamp=\"2026-11-30T16:38:55Z\"",
        ] {
            assert!(suite_tag.contains(wanted), "{wanted} in {suite_tag}");
        }
        // Every suite, testcase and system-out starts a line; the file ends with one.
        assert_eq!(xml.matches("\n<testcase").count(), 4, "{xml}");
        assert_eq!(xml.matches("\n<system-out").count(), 1, "{xml}");
        assert!(xml.ends_with("</testsuites>\n"), "{xml}");
        assert!(xml.contains("<![CDATA[q1: 1 -> 0\n]]>"), "{xml}");
    }

    #[test]
    fn text_is_cleaned_for_xml_and_cdata_cannot_be_closed() {
        let info = run(None, 0);
        let mut hostile = case(
            "x\u{1b}[31m\u{202e}",
            Outcome::Failure {
                kind: "regression",
                message: "a <b> & \"c\" \u{FFFF}".to_string(),
                body: Some("ends ]]> here".to_string()),
            },
        );
        hostile.system_out = Some("\u{7}bell".to_string());
        let xml = suite_of(vec![hostile], "", &info);
        assert!(!xml.contains('\u{1b}') && !xml.contains('\u{202e}') && !xml.contains('\u{7}'));
        assert!(xml.contains("x\\u{1b}[31m\\u{202e}"), "{xml}");
        assert!(xml.contains("\u{FFFD}"), "{xml}");
        assert!(xml.contains("ends ]]]]><![CDATA[> here"), "{xml}");
        assert!(xml.contains("a &lt;b&gt; &amp;"), "{xml}");
        // No suite system-out when there is nothing to say, and no `file` without a config.
        assert_eq!(xml.matches("<system-out").count(), 1, "{xml}");
        assert!(!xml.contains(" file="), "{xml}");
        assert!(xml.contains(" time=\"0\""), "{xml}");
    }
}
