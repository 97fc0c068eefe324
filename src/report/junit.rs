//! JUnit XML of a gate run, written with the `junit-report` crate: one `testsuite` per tier
//! (`ragate.<tier>`), one `testcase` per check in outcome order; a regression is a `failure`
//! (message: the verdict; body: the regressed queries), an evaluation problem an `error`, an
//! underpowered check `skipped`; an inconclusive check passes with its verdict in system-out (a
//! `failure` of type `inconclusive` under `inconclusive: fail`). The suite's system-out carries the
//! baseline counts and the warnings.
//!
//! The output is a function of the report alone. Workarounds for junit-report 0.9:
//! - it stamps every suite with the current time: the timestamp is pinned to the Unix epoch and
//!   all durations are zero;
//! - it writes no `skipped` count on the testsuite: added after writing, with totals on the
//!   `testsuites` root too;
//! - it writes CDATA unescaped and attributes without filtering characters XML forbids: text is
//!   cleaned (`]]>` split across two CDATA sections, forbidden control characters replaced);
//! - it writes a single line: line breaks are added between elements, outside CDATA.

use junit_report::{
    Duration, OffsetDateTime, Report, TestCase, TestCaseBuilder, TestSuite, TestSuiteBuilder,
};

use crate::config::InconclusivePolicy;
use crate::gate::GateReport;
use crate::gate::verdict::{CheckOutcome, CheckStatus};
use crate::report::gate_table::{one_line, value};

/// Every duration: the report is about metrics, and the output must not depend on timing.
const ZERO: Duration = Duration::ZERO;

/// Longest query text listed in a failure body, in characters.
const QUERY_CHARS: usize = 500;

pub fn render(report: &GateReport) -> String {
    let suite = format!("ragate.{}", report.tier);
    let mut builder = suite_builder(&suite);
    let inconclusive_fails = report.inconclusive == InconclusivePolicy::Fail;
    for outcome in &report.outcomes {
        builder.add_testcase(testcase(outcome, &suite, inconclusive_fails));
    }
    builder.set_system_out(&cdata(&suite_output(report)));
    write(builder.build())
}

/// A problem before any check could run: one `setup` testcase with an error.
pub fn render_setup_error(tier: &str, message: &str) -> String {
    let suite = format!("ragate.{tier}");
    let mut case = TestCaseBuilder::error("setup", ZERO, "setup", &xml_text(message));
    case.set_classname(&xml_text(&suite));
    if message.contains('\n') {
        // Attribute values lose their line breaks in XML readers; keep them in the body.
        case.set_trace(&cdata(message));
    }
    let mut builder = suite_builder(&suite);
    builder.add_testcase(case.build());
    write(builder.build())
}

fn suite_builder(name: &str) -> TestSuiteBuilder {
    let mut builder = TestSuiteBuilder::new(&xml_text(name));
    builder.set_timestamp(OffsetDateTime::UNIX_EPOCH);
    builder
}

fn testcase(outcome: &CheckOutcome, classname: &str, inconclusive_fails: bool) -> TestCase {
    let name = xml_text(&outcome.name);
    let verdict = xml_text(&outcome.verdict);
    let mut case = match outcome.status {
        CheckStatus::Pass | CheckStatus::Improved => TestCaseBuilder::success(&name, ZERO),
        CheckStatus::Inconclusive if inconclusive_fails => {
            TestCaseBuilder::failure(&name, ZERO, "inconclusive", &verdict)
        }
        CheckStatus::Inconclusive => TestCaseBuilder::success(&name, ZERO),
        CheckStatus::Fail => TestCaseBuilder::failure(&name, ZERO, "regression", &verdict),
        CheckStatus::Error => TestCaseBuilder::error(&name, ZERO, "evaluation", &verdict),
        CheckStatus::Skipped => {
            TestCaseBuilder::skipped_with_cause(&name, "underpowered", &verdict)
        }
    };
    match outcome.status {
        CheckStatus::Improved | CheckStatus::Inconclusive => {
            case.set_system_out(&cdata(&outcome.verdict))
        }
        CheckStatus::Fail => case.set_trace(&cdata(&regressed_queries(outcome))),
        _ => &mut case,
    };
    case.set_classname(&xml_text(classname));
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

/// Replaces the characters XML 1.0 forbids.
fn xml_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// Text for a CDATA section the crate opens and closes: a `]]>` inside is split in two sections.
fn cdata(text: &str) -> String {
    xml_text(text).replace("]]>", "]]]]><![CDATA[>")
}

fn write(suite: TestSuite) -> String {
    let failures = format!(" failures=\"{}\"", suite.failures());
    let skipped = format!(" skipped=\"{}\"", suite.skipped());
    let (tests, errors) = (suite.tests(), suite.errors());
    // Jenkins' junit-10.xsd allows only name, time, tests, failures and errors on the root; the
    // skipped count goes on the testsuite.
    let root = format!("<testsuites tests=\"{tests}\"{failures} errors=\"{errors}\">");
    let mut report = Report::new();
    report.add_testsuite(suite);
    let mut bytes = Vec::new();
    report
        .write_xml(&mut bytes)
        .expect("writing XML to memory cannot fail");
    let xml = String::from_utf8(bytes).expect("the XML writer writes UTF-8");
    // The first ` failures="N"` is the testsuite's: attribute values before it are escaped.
    let xml = xml.replacen(&failures, &format!("{failures}{skipped}"), 1);
    let xml = xml.replacen("<testsuites>", &root, 1);
    line_breaks(&xml) + "\n"
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

    #[test]
    fn junit_shape_is_what_reporters_read() {
        let report = sample_report();
        let xml = markup(&render(&report));
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
        assert_eq!(root_keys, ["tests", "failures", "errors"], "{}", root[0]);
        assert_eq!(attr(suite, "failures").as_deref(), Some("1"));
        for (case, outcome) in cases.iter().zip(&report.outcomes) {
            assert_eq!(attr(case, "name"), Some(outcome.name.clone()));
            assert_eq!(attr(case, "classname").as_deref(), Some("ragate.smoke"));
        }
        let message = |element| attr(tags(&xml, element)[0], "message");
        assert_eq!(message("failure"), Some(report.outcomes[2].verdict.clone()));
        assert_eq!(message("error"), Some(report.outcomes[5].verdict.clone()));
    }

    #[test]
    fn junit_is_deterministic_and_well_formed() {
        let mut report = sample_report();
        let xml = render(&report);
        assert_eq!(xml, render(&report));
        assert!(xml.contains("timestamp=\"1970-01-01T00:00:00Z\""), "{xml}");
        let times = markup(&xml);
        assert!(
            times
                .split(" time=\"")
                .skip(1)
                .all(|t| t.starts_with("0\""))
        );
        assert!(!xml.contains("NaN"));
        report.outcomes[2].worst[0].query = Some("a ]]> b \u{1}".to_string());
        let xml = render(&report);
        assert!(xml.contains("a ]]]]><![CDATA[> b \u{FFFD}"), "{xml}");
        assert!(
            !markup(&xml).contains("b \u{FFFD}"),
            "the query stays in CDATA"
        );
    }

    #[test]
    fn junit_setup_error_is_one_error_testcase() {
        let message = "no baseline: run `ragate baseline accept`";
        let xml = markup(&render_setup_error("smoke", message));
        let (suite, cases) = (tags(&xml, "testsuite")[0], tags(&xml, "testcase"));
        assert_eq!(attr(suite, "name").as_deref(), Some("ragate.smoke"));
        assert_eq!(
            (attr(suite, "tests"), attr(suite, "errors")),
            (Some("1".into()), Some("1".into()))
        );
        assert_eq!(cases.len(), 1);
        assert_eq!(attr(cases[0], "name").as_deref(), Some("setup"));
        assert_eq!(attr(cases[0], "classname").as_deref(), Some("ragate.smoke"));
        assert_eq!(
            attr(tags(&xml, "error")[0], "message").as_deref(),
            Some(message)
        );
    }

    #[test]
    fn junit_snapshot() {
        assert_snapshot(
            &render(&sample_report()),
            include_str!("../../tests/fixtures/snapshots/junit.xml"),
            "tests/fixtures/snapshots/junit.xml",
        );
    }
}
