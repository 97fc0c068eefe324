//! The JUnit XML of real gate runs (a pass, a regression, a setup error) and of `compare`
//! against Jenkins xunit's `junit-10.xsd`, checked structurally in Rust (no maintained, light
//! XSD validator crate exists; see tests/fixtures/junit/README.md): the elements, their
//! required and allowed attributes, their allowed children, where text may appear and the
//! `SUREFIRE_TIME` type of the suite durations. Also the attribute values reporters read:
//! `classname="ragate.<tier>.<metric>"`, the config as the suite's `file`, the run's timestamp
//! and duration (pinned by `SOURCE_DATE_EPOCH`).

use std::collections::BTreeMap;
use std::path::Path;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::gate_flow::setup;
use crate::{Ragate, accept_baseline, ragate_env, ragate_in};

/// What junit-10.xsd declares for one element.
struct Rule {
    required: &'static [&'static str],
    optional: &'static [&'static str],
    /// Child elements allowed (in any order, any number, unless `ordered`).
    children: &'static [&'static str],
    /// Children must come in the order of `children`, each at most once (`xs:sequence` of
    /// optional elements).
    ordered: bool,
    /// Character data allowed (a `mixed` complex type or `xs:string`).
    text: bool,
}

/// junit-10.xsd, element by element.
fn rule(element: &str) -> Option<Rule> {
    const OUTCOME: Rule = Rule {
        required: &[],
        optional: &["type", "message"],
        children: &[],
        ordered: false,
        text: true,
    };
    const RERUN: Rule = Rule {
        required: &["type"],
        optional: &["message"],
        children: &["stackTrace", "system-out", "system-err"],
        ordered: true,
        text: true,
    };
    const STRING: Rule = Rule {
        required: &[],
        optional: &[],
        children: &[],
        ordered: false,
        text: true,
    };
    Some(match element {
        "testsuites" => Rule {
            required: &[],
            optional: &["name", "time", "tests", "failures", "errors"],
            children: &["testsuite"],
            ordered: false,
            text: false,
        },
        "testsuite" => Rule {
            required: &["name", "tests", "failures", "errors"],
            optional: &[
                "group",
                "time",
                "skipped",
                "timestamp",
                "hostname",
                "id",
                "package",
                "file",
                "log",
                "url",
            ],
            children: &[
                "testsuite",
                "properties",
                "testcase",
                "system-out",
                "system-err",
            ],
            ordered: false,
            text: false,
        },
        "testcase" => Rule {
            required: &["name"],
            optional: &["time", "classname", "group"],
            children: &[
                "skipped",
                "error",
                "failure",
                "rerunFailure",
                "rerunError",
                "flakyFailure",
                "flakyError",
                "system-out",
                "system-err",
            ],
            ordered: false,
            text: false,
        },
        "properties" => Rule {
            required: &[],
            optional: &[],
            children: &["property"],
            ordered: false,
            text: false,
        },
        "property" => Rule {
            required: &["name", "value"],
            optional: &[],
            children: &[],
            ordered: false,
            text: false,
        },
        "failure" | "error" | "skipped" => OUTCOME,
        "rerunFailure" | "rerunError" | "flakyFailure" | "flakyError" => RERUN,
        "system-out" | "system-err" | "stackTrace" => STRING,
        _ => return None,
    })
}

/// The schema's `SUREFIRE_TIME`, `(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?`: digits
/// (commas only between groups of three), then an optional fraction.
fn is_surefire_time(value: &str) -> bool {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let groups: Vec<&str> = whole.split(',').collect();
    let whole_ok = groups.len() == 1 && digits(whole)
        || groups[1..].iter().all(|g| g.len() == 3 && digits(g))
            && digits(groups[0])
            && !groups[0].is_empty();
    whole_ok && digits(fraction)
}

/// One open element: its name, the children it had so far.
struct Open {
    name: String,
    children: Vec<String>,
}

/// Every way `xml` breaks junit-10.xsd (empty when it is valid), or the parse error.
fn violations(xml: &str) -> Vec<String> {
    let mut reader = Reader::from_str(xml);
    let mut stack: Vec<Open> = Vec::new();
    let mut found = Vec::new();
    let mut root_seen = false;
    loop {
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(error) => {
                found.push(format!(
                    "not well-formed at byte {}: {error}",
                    reader.error_position()
                ));
                return found;
            }
        };
        match event {
            Event::Start(start) | Event::Empty(start) if stack.is_empty() && root_seen => {
                found.push(format!("a second root element <{}>", name_of(&start)));
            }
            Event::Start(start) => {
                open(&start, &mut stack, &mut found, &mut root_seen);
            }
            Event::Empty(start) => {
                open(&start, &mut stack, &mut found, &mut root_seen);
                close(&mut stack, &mut found);
            }
            Event::End(_) => close(&mut stack, &mut found),
            Event::Text(text) => {
                let content = text.decode().map(|t| t.trim().is_empty()).unwrap_or(false);
                text_at(&stack, content, &mut found);
            }
            Event::CData(_) | Event::GeneralRef(_) => text_at(&stack, false, &mut found),
            Event::Eof => break,
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if !root_seen {
        found.push("no root element".to_string());
    }
    found
}

fn name_of(start: &BytesStart) -> String {
    String::from_utf8_lossy(start.name().as_ref()).into_owned()
}

fn open(start: &BytesStart, stack: &mut Vec<Open>, found: &mut Vec<String>, root: &mut bool) {
    let name = name_of(start);
    let path: Vec<&str> = stack.iter().map(|o| o.name.as_str()).collect();
    let at = format!(
        "/{}",
        [path.as_slice(), &[name.as_str()]].concat().join("/")
    );
    if stack.is_empty() {
        *root = true;
        if name != "testsuites" {
            found.push(format!("{at}: the root is <{name}>, expected <testsuites>"));
        }
    }
    if let Some(parent) = stack.last_mut() {
        parent.children.push(name.clone());
    }
    stack.push(Open {
        name: name.clone(),
        children: Vec::new(),
    });
    let Some(rule) = rule(&name) else {
        found.push(format!("{at}: junit-10.xsd declares no element <{name}>"));
        return;
    };
    let mut present = BTreeMap::new();
    for attribute in start.attributes() {
        let attribute = match attribute {
            Ok(attribute) => attribute,
            Err(error) => {
                found.push(format!("{at}: malformed attribute: {error}"));
                continue;
            }
        };
        let key = String::from_utf8_lossy(attribute.key.as_ref()).into_owned();
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map(|v| v.into_owned())
            .unwrap_or_else(|error| {
                found.push(format!("{at}/@{key}: {error}"));
                String::new()
            });
        if !rule.required.contains(&key.as_str()) && !rule.optional.contains(&key.as_str()) {
            found.push(format!("{at}: attribute `{key}` is not allowed"));
        }
        if key == "time"
            && matches!(name.as_str(), "testsuite" | "testsuites")
            && !is_surefire_time(&value)
        {
            found.push(format!("{at}/@time: `{value}` is not a SUREFIRE_TIME"));
        }
        present.insert(key, value);
    }
    for key in rule.required {
        if !present.contains_key(*key) {
            found.push(format!("{at}: required attribute `{key}` is missing"));
        }
    }
}

/// Closes the innermost element, checking its children against its rule.
fn close(stack: &mut Vec<Open>, found: &mut Vec<String>) {
    let Some(element) = stack.pop() else {
        return;
    };
    let Some(rule) = rule(&element.name) else {
        return;
    };
    for child in &element.children {
        if !rule.children.contains(&child.as_str()) {
            found.push(format!("<{}> may not contain <{child}>", element.name));
        }
    }
    if rule.ordered {
        let positions: Vec<usize> = element
            .children
            .iter()
            .filter_map(|c| rule.children.iter().position(|allowed| allowed == c))
            .collect();
        if positions.windows(2).any(|pair| pair[0] >= pair[1]) {
            found.push(format!(
                "<{}>: children {:?} out of the schema's order {:?}",
                element.name, element.children, rule.children
            ));
        }
    }
}

/// Character data inside the innermost element (`blank`: only whitespace).
fn text_at(stack: &[Open], blank: bool, found: &mut Vec<String>) {
    let Some(element) = stack.last() else {
        if !blank {
            found.push("text outside the root element".to_string());
        }
        return;
    };
    if !blank && rule(&element.name).is_some_and(|rule| !rule.text) {
        found.push(format!("<{}> may not contain text", element.name));
    }
}

fn assert_valid(xml: &str, what: &str) {
    let found = violations(xml);
    assert!(
        found.is_empty(),
        "{what} breaks junit-10.xsd:\n{}\n{xml}",
        found.join("\n")
    );
}

/// The start tags of the elements called `name` (outside CDATA; ragate's bodies never hold
/// a `<testcase`).
fn tags<'a>(xml: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name} ");
    xml.match_indices(&open)
        .map(|(at, _)| &xml[at..at + xml[at..].find('>').expect("closed tag")])
        .collect()
}

fn attr(tag: &str, key: &str) -> Option<String> {
    let start = tag.find(&format!(" {key}=\""))? + key.len() + 3;
    Some(tag[start..start + tag[start..].find('"')?].to_string())
}

/// A UTC ISO 8601 time in whole seconds, `YYYY-MM-DDTHH:MM:SSZ`, and not in 1970.
fn assert_recent_utc(timestamp: &str) {
    let shape = timestamp.len() == 20
        && timestamp.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 | 16 => b == b':',
            19 => b == b'Z',
            _ => b.is_ascii_digit(),
        });
    assert!(shape, "timestamp `{timestamp}`");
    let year: u32 = timestamp[..4].parse().unwrap();
    assert!(year >= 2025, "timestamp `{timestamp}`");
}

fn junit(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("out/junit.xml")).expect("junit.xml written")
}

#[test]
fn the_validator_rejects_what_junit_10_xsd_rejects() {
    let valid = "<?xml version=\"1.0\"?>\n<testsuites tests=\"1\" time=\"1,234.5\">\
        <testsuite name=\"s\" tests=\"1\" failures=\"0\" errors=\"0\" time=\"0\" file=\"c.yaml\">\
        <testcase name=\"c\" classname=\"a.b\"><failure message=\"m\">body</failure>\
        <system-out><![CDATA[x]]></system-out></testcase></testsuite></testsuites>";
    assert_valid(valid, "the valid sample");
    for (bad, expected) in [
        // What ragate wrote before: `skipped` on the root (issue 12).
        (
            valid.replace("<testsuites ", "<testsuites skipped=\"0\" "),
            "attribute `skipped` is not allowed",
        ),
        // `file` and `line` are testsuite attributes only.
        (
            valid.replace("classname=\"a.b\"", "classname=\"a.b\" file=\"c.yaml\""),
            "attribute `file` is not allowed",
        ),
        (
            valid.replace(" tests=\"1\" failures", " failures"),
            "required attribute `tests` is missing",
        ),
        (
            valid.replace("time=\"0\"", "time=\"0.5s\""),
            "is not a SUREFIRE_TIME",
        ),
        (
            valid.replace("<testcase name=\"c\"", "<testcase id=\"c\""),
            "attribute `id` is not allowed",
        ),
        (
            valid.replace("body</failure>", "body</failure>stray"),
            "<testcase> may not contain text",
        ),
        (
            valid.replace("<system-out>", "<system-out><b/>"),
            "junit-10.xsd declares no element <b>",
        ),
        (
            valid.replace("</testsuite></testsuites>", "</testsuites>"),
            "not well-formed",
        ),
    ] {
        let found = violations(&bad).join("\n");
        assert!(found.contains(expected), "{expected}: got {found:?}\n{bad}");
    }
    for (time, ok) in [
        ("0", true),
        ("12.345", true),
        ("1,234", true),
        ("", true),
        ("1,23", false),
        ("-1", false),
        ("1e3", false),
    ] {
        assert_eq!(is_surefire_time(time), ok, "{time}");
    }
}

/// A setup error (no baseline yet), a pass and a regression of `gate`, and `compare`: all
/// valid, with the metric in the classname; the files ragate writes itself name the config and
/// the run's time.
#[test]
fn gate_outputs_validate_against_junit_10_xsd() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);

    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir); // no baseline yet
    let setup_error = junit(dir);
    assert_valid(&setup_error, "the setup error");
    let suite = tags(&setup_error, "testsuite")[0];
    assert_eq!(attr(suite, "file").as_deref(), Some("eval-config.yaml"));
    assert_recent_utc(&attr(suite, "timestamp").unwrap());
    let case = tags(&setup_error, "testcase")[0];
    assert_eq!(
        attr(case, "classname").as_deref(),
        Some("ragate.regression.setup")
    );
    assert!(setup_error.contains("<error "), "{setup_error}");

    accept_baseline(dir, "regression", "out/results.json", &[]);
    Ragate::gate("regression", "base.jsonl", "out")
        .status(0)
        .run_in(dir);
    let passing = junit(dir);
    assert_valid(&passing, "a pass");
    // ndcg@10 is listed without a rule: a skipped testcase, "reported, not gated", never a failure.
    let reported = tags(&passing, "testcase")
        .into_iter()
        .find(|case| attr(case, "name").as_deref() == Some("ndcg@10 [all]"))
        .unwrap_or_else(|| panic!("{passing}"));
    assert_eq!(
        attr(reported, "classname").as_deref(),
        Some("ragate.regression.ndcg@10")
    );
    let skipped = tags(&passing, "skipped");
    assert!(
        skipped
            .iter()
            .any(|tag| attr(tag, "type").as_deref() == Some("reported")
                && attr(tag, "message").is_some_and(|m| m.starts_with("reported, not gated: "))),
        "{passing}"
    );
    let results = std::fs::read(dir.join("out/results.json")).unwrap();
    std::fs::copy(dir.join("out/results.json"), dir.join("base-results.json")).unwrap();

    Ragate::gate("regression", "regressed.jsonl", "out")
        .status(1)
        .run_in(dir);
    let failing = junit(dir);
    assert_valid(&failing, "a regression");
    assert!(failing.contains("<failure "), "{failing}");
    for xml in [&passing, &failing] {
        let cases = tags(xml, "testcase");
        assert!(!cases.is_empty());
        for case in cases {
            let name = attr(case, "name").unwrap();
            let metric = name.split(" [").next().unwrap();
            assert_eq!(
                attr(case, "classname"),
                Some(format!("ragate.regression.{metric}")),
                "{case}"
            );
            assert!(name.ends_with(']'), "the slice is in the name: {name}");
        }
    }

    // `compare` of the two results: the same checks, with the config and the run's time.
    std::fs::copy(
        dir.join("out/results.json"),
        dir.join("regressed-results.json"),
    )
    .unwrap();
    let compare = |env: &[(&str, &str)]| {
        let outcome = ragate_env(
            dir,
            &[
                "compare",
                "base-results.json",
                "regressed-results.json",
                "--junit",
                "compare.xml",
            ],
            env,
        );
        assert_eq!(outcome.code, 1, "{}", outcome.stderr);
        std::fs::read_to_string(dir.join("compare.xml")).unwrap()
    };
    let compared = compare(&[]);
    assert_valid(&compared, "compare");
    let suite = tags(&compared, "testsuite")[0];
    assert_eq!(attr(suite, "file").as_deref(), Some("eval-config.yaml"));
    assert_recent_utc(&attr(suite, "timestamp").unwrap());
    assert!(is_surefire_time(&attr(suite, "time").unwrap()), "{suite}");
    assert_eq!(
        tags(&compared, "testcase").len(),
        tags(&failing, "testcase").len()
    );

    // SOURCE_DATE_EPOCH: that time, no duration, the same bytes twice.
    let pinned = [("SOURCE_DATE_EPOCH", "1796056735")];
    let reproducible = compare(&pinned);
    assert_eq!(reproducible, compare(&pinned));
    let suite = tags(&reproducible, "testsuite")[0];
    assert_eq!(
        attr(suite, "timestamp").as_deref(),
        Some("2026-11-30T16:38:55Z")
    );
    assert_eq!(attr(suite, "time").as_deref(), Some("0"));
    let bad = ragate_env(
        dir,
        &[
            "compare",
            "base-results.json",
            "regressed-results.json",
            "--junit",
            "compare.xml",
        ],
        &[("SOURCE_DATE_EPOCH", "yesterday")],
    );
    assert_eq!(bad.code, 2, "an unreadable SOURCE_DATE_EPOCH is an error");
    assert!(
        bad.stderr.contains("SOURCE_DATE_EPOCH is `yesterday`"),
        "{}",
        bad.stderr
    );

    // results.json carries no time: identical runs give identical bytes.
    Ragate::gate("regression", "base.jsonl", "out")
        .status(0)
        .run_in(dir);
    assert_eq!(
        std::fs::read(dir.join("out/results.json")).unwrap(),
        results
    );
}

/// The gate's own junit.xml names the config and the run's time.
#[test]
fn gate_junit_names_the_config_and_the_run_time() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    setup(dir);
    Ragate::gate("regression", "base.jsonl", "out")
        .status(2)
        .run_in(dir);
    accept_baseline(dir, "regression", "out/results.json", &[]);
    let outcome = ragate_in(
        dir,
        &[
            "gate",
            "--tier",
            "regression",
            "--run",
            "regressed.jsonl",
            "--out",
            "out",
        ],
    );
    assert_eq!(outcome.code, 1, "{}", outcome.stderr);
    let xml = junit(dir);
    let suite = tags(&xml, "testsuite")[0];
    assert_eq!(attr(suite, "file").as_deref(), Some("eval-config.yaml"));
    assert_recent_utc(&attr(suite, "timestamp").unwrap());
    let pinned = Ragate::gate("regression", "regressed.jsonl", "out")
        .env("SOURCE_DATE_EPOCH", "1796056735")
        .run_in(dir);
    assert_eq!(pinned.code, 1);
    let suite = tags(&junit(dir), "testsuite")[0].to_string();
    assert_eq!(
        attr(&suite, "timestamp").as_deref(),
        Some("2026-11-30T16:38:55Z")
    );
    assert_eq!(attr(&suite, "time").as_deref(), Some("0"));
}
