//! Runs the RAG pipeline under test over a tier's queries and collects its run: a program speaking
//! JSON lines (`command`), an HTTP endpoint (`http`), or a precomputed file (`run_file`).
//!
//! Both adapters send `{"qid","query"}` per query and take back one native run object per query
//! (`{"qid","retrieved":[...],"answer"?,"contexts"?,"usage"?,"cost"?}`), check it against the
//! native run format, and add the `latency_ms` they measured unless the pipeline reported its own.
//! The collected run is written out as `run.jsonl` (sorted by qid), so that a failure can be
//! reproduced with `--run`.

pub(crate) mod command;
pub(crate) mod http;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::input::run::RunQuery;
use crate::progress::Progress;

pub(crate) use command::CommandPipeline;
pub(crate) use http::HttpPipeline;

/// How a tier's run is obtained.
#[derive(Debug, Clone, PartialEq)]
pub enum Pipeline {
    /// A precomputed run, `{tier}` standing for the tier's name.
    RunFile(String),
    Command(CommandPipeline),
    Http(HttpPipeline),
}

/// One query sent to the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub qid: String,
    pub query: String,
}

impl Request {
    /// The request as one JSON object (no newline).
    pub fn to_json(&self) -> String {
        serde_json::json!({"qid": self.qid, "query": self.query}).to_string()
    }
}

/// The run a pipeline produced: one native run object per query, by qid.
#[derive(Debug, Default)]
pub struct ProducedRun {
    lines: BTreeMap<String, Map<String, Value>>,
}

impl ProducedRun {
    /// The run as native JSONL, sorted by qid.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for object in self.lines.values() {
            out.push_str(&Value::Object(object.clone()).to_string());
            out.push('\n');
        }
        out
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// The most characters of a pipeline's output line that an error shows.
const SHOWN_LINE_CHARS: usize = 120;

/// What the `command` adapter adds when a line of the program's stdout is not a run object: the
/// usual cause is a log line (`print("loaded", n, "docs")`) on stdout.
pub(crate) const LOG_LINE_HINT: &str =
    "; pipelines write logs to stderr: stdout carries one JSON object per query";

/// `line` of a pipeline's output as an error shows it: secrets redacted, cut to
/// [`SHOWN_LINE_CHARS`] characters on one line, control characters written as escapes.
fn shown_line(line: &str) -> String {
    crate::escape::visible(&crate::format::one_line(line, SHOWN_LINE_CHARS)).into_owned()
}

/// Collects answers while checking them against the requests: every answer is a native run
/// object of a requested qid, answered once.
struct Collector<'a> {
    adapter: &'static str,
    index: BTreeMap<&'a str, usize>,
    run: ProducedRun,
    /// Added after the shown text of an answer that is not a JSON object (`LOG_LINE_HINT`).
    not_object_hint: &'static str,
}

impl<'a> Collector<'a> {
    fn new(adapter: &'static str, requests: &'a [Request]) -> Self {
        Collector {
            adapter,
            index: requests
                .iter()
                .enumerate()
                .map(|(i, r)| (r.qid.as_str(), i))
                .collect(),
            run: ProducedRun::default(),
            not_object_hint: "",
        }
    }

    /// The collector, adding `hint` to the error of an answer that is not a JSON object.
    fn with_not_object_hint(mut self, hint: &'static str) -> Self {
        self.not_object_hint = hint;
        self
    }

    fn error(&self, message: String) -> Error {
        Error::pipeline(self.adapter, message)
    }

    /// Checks and records the reply `text` (`whence` names where it came from, in errors);
    /// returns the index of the request it answers.
    fn accept(&mut self, whence: &str, text: &str) -> Result<usize> {
        let expected = "expected a native run object {\"qid\", \"retrieved\": [{\"doc_id\", \"score\"?, \"text\"?}], \"answer\"?, \"contexts\"?, \"usage\"?, \"cost\"?, \"latency_ms\"?}";
        let not_object = |why: String| {
            self.error(format!(
                "{whence} is not a native run object ({why}): `{}`{}: {expected}",
                shown_line(text),
                self.not_object_hint
            ))
        };
        let value: Value = serde_json::from_str(text).map_err(|e| not_object(e.to_string()))?;
        let Value::Object(object) = value else {
            return Err(not_object("not a JSON object".to_string()));
        };
        let qid = match object.get("qid") {
            Some(Value::String(qid)) => qid.clone(),
            _ => return Err(self.error(format!("{whence}: no string `qid`: {expected}"))),
        };
        let shown = crate::error::shorten(&qid).into_owned();
        let index = *self.index.get(qid.as_str()).ok_or_else(|| {
            self.error(format!(
                "{whence}: qid `{shown}` was not asked for (not a query of this tier)"
            ))
        })?;
        if self.run.lines.contains_key(&qid) {
            return Err(self.error(format!("{whence}: qid `{shown}` answered twice")));
        }
        serde_json::from_value::<RunQuery>(Value::Object(object.clone()))
            .map_err(|e| self.error(format!("{whence} (qid `{shown}`): {e}: {expected}")))?;
        self.run.lines.insert(qid, object);
        Ok(index)
    }

    /// Records the measured latency of `qid`'s answer, unless the pipeline reported its own.
    fn set_latency(&mut self, qid: &str, latency: Duration) {
        let object = self.run.lines.get_mut(qid).expect("set after accept");
        if !object.contains_key("latency_ms") {
            let millis = (latency.as_secs_f64() * 1e6).round() / 1e3;
            object.insert("latency_ms".into(), Value::from(millis));
        }
    }

    fn len(&self) -> usize {
        self.run.len()
    }

    fn answered(&self, qid: &str) -> bool {
        self.run.lines.contains_key(qid)
    }

    /// The run, or an error naming the first query without an answer.
    fn finish(self, requests: &[Request]) -> Result<ProducedRun> {
        if let Some(missing) = requests.iter().find(|r| !self.answered(&r.qid)) {
            return Err(self.error(format!(
                "no answer for qid `{}` ({} of {} queries answered)",
                missing.qid,
                self.run.len(),
                requests.len()
            )));
        }
        Ok(self.run)
    }
}

/// The message of a collector error without its `pipeline (adapter): ` prefix, for adapters that
/// add their own context.
fn bare_message(error: &Error) -> String {
    match error {
        Error::Pipeline { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

impl Pipeline {
    /// Runs the pipeline over `requests`; `dir` is the directory a command runs in (the config's).
    pub fn produce(
        &self,
        requests: &[Request],
        dir: &Path,
        progress: &Progress,
    ) -> Result<ProducedRun> {
        match self {
            Pipeline::RunFile(_) => unreachable!("a run file is read, not produced"),
            Pipeline::Command(command) => command.produce(requests, dir, progress),
            Pipeline::Http(http) => http.produce(requests, progress),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requests() -> Vec<Request> {
        ["q1", "q2"]
            .iter()
            .map(|qid| Request {
                qid: qid.to_string(),
                query: format!("query {qid}"),
            })
            .collect()
    }

    #[test]
    fn collects_checked_lines_sorted_by_qid_with_latency() {
        let requests = requests();
        let mut collector = Collector::new("test", &requests);
        let index = collector
            .accept(
                "line 1",
                r#"{"qid":"q2","retrieved":[{"doc_id":"d"}],"answer":"a"}"#,
            )
            .unwrap();
        assert_eq!(index, 1);
        collector.set_latency("q2", Duration::from_micros(12_345));
        collector
            .accept(
                "line 2",
                r#"{"qid":"q1","retrieved":[],"latency_ms":7.5,"usage":{"prompt_tokens":3,"completion_tokens":2}}"#,
            )
            .unwrap();
        collector.set_latency("q1", Duration::from_secs(1));
        let run = collector.finish(&requests).unwrap();
        assert_eq!(
            run.to_jsonl(),
            "{\"qid\":\"q1\",\"retrieved\":[],\"latency_ms\":7.5,\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\
             {\"qid\":\"q2\",\"retrieved\":[{\"doc_id\":\"d\"}],\"answer\":\"a\",\"latency_ms\":12.345}\n"
        );
    }

    #[test]
    fn a_log_line_is_shown_cut_and_inert_with_the_hint() {
        let requests = requests();
        let mut collector =
            Collector::new("command", &requests).with_not_object_hint(LOG_LINE_HINT);
        let message = collector
            .accept("output line 1", "loaded 3 docs")
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with(
                "pipeline (command): output line 1 is not a native run object (expected value at \
                 line 1 column 1): `loaded 3 docs`; pipelines write logs to stderr: stdout \
                 carries one JSON object per query: expected a native run object {"
            ),
            "{message}"
        );
        let hostile = format!("\u{1b}]0;title\u{7}{}", "x".repeat(500));
        let message = collector
            .accept("output line 2", &hostile)
            .unwrap_err()
            .to_string();
        let shown = format!(
            "`\\u{{1b}}]0;title\\u{{7}}{}…`",
            "x".repeat(SHOWN_LINE_CHARS - 10)
        );
        assert!(message.contains(&shown), "{message}");
        assert!(!message.contains('\u{1b}') && !message.contains(&"x".repeat(SHOWN_LINE_CHARS)));
        let number = collector
            .accept("output line 3", "42")
            .unwrap_err()
            .to_string();
        assert!(
            number.contains("(not a JSON object): `42`; pipelines write logs"),
            "{number}"
        );
    }

    #[test]
    fn rejects_unknown_repeated_malformed_and_missing_answers() {
        let requests = requests();
        let mut collector = Collector::new("test", &requests);
        let err = |c: &mut Collector, text: &str| c.accept("line 9", text).unwrap_err().to_string();
        assert_eq!(
            err(&mut collector, "not json"),
            "pipeline (test): line 9 is not a native run object (expected ident at line 1 \
             column 2): `not json`: expected a native run object {\"qid\", \"retrieved\": \
             [{\"doc_id\", \"score\"?, \"text\"?}], \"answer\"?, \"contexts\"?, \"usage\"?, \
             \"cost\"?, \"latency_ms\"?}"
        );
        assert!(err(&mut collector, "[1]").contains("(not a JSON object): `[1]`"));
        assert!(err(&mut collector, r#"{"retrieved":[]}"#).contains("no string `qid`"));
        assert!(
            err(&mut collector, r#"{"qid":"q9","retrieved":[]}"#)
                .contains("`q9` was not asked for")
        );
        assert!(
            err(&mut collector, r#"{"qid":"q1"}"#)
                .contains("(qid `q1`): missing field `retrieved`")
        );
        assert!(
            err(&mut collector, r#"{"qid":"q1","retrieved":[],"extra":1}"#)
                .contains("unknown field `extra`")
        );
        collector
            .accept("line 1", r#"{"qid":"q1","retrieved":[]}"#)
            .unwrap();
        assert!(
            err(&mut collector, r#"{"qid":"q1","retrieved":[]}"#).contains("`q1` answered twice")
        );
        let message = collector.finish(&requests).unwrap_err().to_string();
        assert_eq!(
            message,
            "pipeline (test): no answer for qid `q2` (1 of 2 queries answered)"
        );
    }
}
