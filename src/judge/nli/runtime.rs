//! The `nli` judge's model in memory (feature `nli`): the HuggingFace tokenizer and an ONNX
//! Runtime session, with ONNX Runtime loaded from the user's `libonnxruntime` at run time (the
//! judge's `runtime:` or `ORT_DYLIB_PATH`), never downloaded.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;
use tokenizers::{
    EncodeInput, Encoding, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy,
};

use crate::metrics::claims::split_claims;

use super::NliSpec;
use super::windows::windows;

/// The environment variable that names the ONNX Runtime library when the config does not.
pub(super) const RUNTIME_ENV: &str = "ORT_DYLIB_PATH";

/// ONNX Runtime, loaded once per process: the library it was loaded from, or why it was not.
static ENVIRONMENT: OnceLock<Result<(PathBuf, Environment), String>> = OnceLock::new();

/// The model inputs ragate can give.
const INPUTS: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];

/// A loaded model: tokenizer, session and what the model dir says.
#[derive(Debug)]
pub(super) struct Runtime {
    tokenizer: Tokenizer,
    session: Mutex<Session>,
    inputs: Vec<String>,
    output: String,
    /// Tokens the tokenizer adds around a pair (`[CLS] A [SEP] B [SEP]`: 3).
    special_tokens: usize,
    label_count: usize,
    pad_id: i64,
}

/// The library to load: the spec's, else the environment's, else an error naming the fix.
fn library(spec: &NliSpec) -> Result<PathBuf, String> {
    let path = spec
        .runtime
        .clone()
        .or_else(|| std::env::var_os(RUNTIME_ENV).map(PathBuf::from))
        .ok_or_else(|| {
            format!(
                "no ONNX Runtime library: expected `runtime: /path/to/libonnxruntime.so` in the \
                 judge's config or {RUNTIME_ENV}; `pip install onnxruntime` ships one, printed by \
                 python3 -c \"import onnxruntime, pathlib; print(next(pathlib.Path(onnxruntime.__file__).parent.glob('capi/libonnxruntime.so*')))\""
            )
        })?;
    if !path.is_file() {
        return Err(format!(
            "the ONNX Runtime library {} does not exist: expected the path of libonnxruntime \
             (from `runtime:` or {RUNTIME_ENV})",
            path.display()
        ));
    }
    Ok(path)
}

/// ONNX Runtime from `path`, loaded on the first call; a later call with another path is an
/// error (a process holds one ONNX Runtime).
fn environment(path: &Path) -> Result<&'static Environment, String> {
    let loaded = ENVIRONMENT.get_or_init(|| {
        let builder = ort::init_from(path)
            .map_err(|e| format!("cannot load ONNX Runtime from {}: {e}", path.display()))?;
        let environment = builder
            .with_name("ragate")
            .build()
            .map_err(|e| format!("cannot start ONNX Runtime from {}: {e}", path.display()))?;
        Ok((path.to_path_buf(), environment))
    });
    match loaded {
        Ok((first, environment)) if first == path => Ok(environment),
        Ok((first, _)) => Err(format!(
            "ONNX Runtime was already loaded from {} in this run: expected every nli judge to use the same library, not {}",
            first.display(),
            path.display()
        )),
        Err(message) => Err(message.clone()),
    }
}

impl Runtime {
    /// Loads the spec's model; every message names the file and the fix.
    pub(super) fn load(spec: &NliSpec) -> Result<Runtime, String> {
        let environment = environment(&library(spec)?)?;
        let dir = &spec.model.dir;
        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(|e| {
            format!(
                "{}: {e}: expected a HuggingFace tokenizers file",
                tokenizer_path.display()
            )
        })?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: spec.max_length,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| format!("{}: {e}", tokenizer_path.display()))?;
        let special_tokens = tokenizer
            .get_post_processor()
            .map_or(3, |p| tokenizers::PostProcessor::added_tokens(p, true));
        let threads = match spec.threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        let model_path = dir.join("model.onnx");
        let failed = |e: ort::Error| format!("{}: {e}", model_path.display());
        let session = Session::builder(environment)
            .map_err(failed)?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(|e| failed(e.into()))?
            .with_intra_threads(threads)
            .map_err(|e| failed(e.into()))?
            .with_inter_threads(1)
            .map_err(|e| failed(e.into()))?
            .with_deterministic_compute(true)
            .map_err(|e| failed(e.into()))?
            .commit_from_file(&model_path)
            .map_err(failed)?;
        let inputs: Vec<String> = session
            .inputs()
            .iter()
            .map(|i| i.name().to_string())
            .collect();
        if let Some(unknown) = inputs.iter().find(|i| !INPUTS.contains(&i.as_str())) {
            return Err(format!(
                "{}: the model takes an input `{unknown}`: expected only {}",
                model_path.display(),
                INPUTS.join(", ")
            ));
        }
        let outputs: Vec<String> = session
            .outputs()
            .iter()
            .map(|o| o.name().to_string())
            .collect();
        let output = match outputs.as_slice() {
            [only] => only.clone(),
            _ if outputs.iter().any(|o| o == "logits") => "logits".to_string(),
            _ => {
                return Err(format!(
                    "{}: the model's outputs are {}: expected `logits` or a single output",
                    model_path.display(),
                    outputs.join(", ")
                ));
            }
        };
        Ok(Runtime {
            tokenizer,
            session: Mutex::new(session),
            inputs,
            output,
            special_tokens,
            label_count: spec.model.label_count,
            pad_id: spec.model.pad_id,
        })
    }

    fn encode(&self, inputs: Vec<EncodeInput<'_>>, special: bool) -> Result<Vec<Encoding>, String> {
        self.tokenizer
            .encode_batch(inputs, special)
            .map_err(|e| format!("tokenizing: {e}"))
    }

    /// The premises to ask about `claim`: the context whole when it fits the model's input with
    /// the claim, else its windows of consecutive sentences.
    pub(super) fn windows(
        &self,
        context: &str,
        claim: &str,
        max_length: usize,
    ) -> Result<Vec<String>, String> {
        let sentences = split_claims(context);
        let mut texts: Vec<EncodeInput<'_>> = vec![claim.into()];
        texts.extend(sentences.iter().map(|s| EncodeInput::from(s.as_str())));
        let counts: Vec<usize> = self
            .encode(texts, false)?
            .iter()
            .map(Encoding::len)
            .collect();
        let budget = max_length.saturating_sub(counts[0] + self.special_tokens);
        let ranges = windows(&counts[1..], budget);
        if ranges.len() == 1 {
            return Ok(vec![context.to_string()]);
        }
        Ok(ranges
            .into_iter()
            .map(|range| sentences[range].join(" "))
            .collect())
    }

    /// The label probabilities (softmax of the logits, in f64) of every (premise, hypothesis)
    /// pair, in order. Pairs are batched by length (shortest first, `batch_size` at a time) so
    /// that little padding is computed; padding does not change a pair's logits.
    pub(super) fn probabilities(
        &self,
        pairs: &[(String, String)],
        batch_size: usize,
    ) -> Result<Vec<Vec<f64>>, String> {
        let inputs: Vec<EncodeInput<'_>> = pairs
            .iter()
            .map(|(premise, hypothesis)| (premise.as_str(), hypothesis.as_str()).into())
            .collect();
        let encodings = self.encode(inputs, true)?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut probabilities = vec![Vec::new(); encodings.len()];
        for batch in order.chunks(batch_size.max(1)) {
            let rows: Vec<&Encoding> = batch.iter().map(|&i| &encodings[i]).collect();
            for (&i, row) in batch.iter().zip(self.run(&rows)?) {
                probabilities[i] = row;
            }
        }
        Ok(probabilities)
    }

    /// One batch through the model: right-padded inputs, softmax of each row of logits.
    fn run(&self, rows: &[&Encoding]) -> Result<Vec<Vec<f64>>, String> {
        let width = rows.iter().map(|e| e.len()).max().unwrap_or(0);
        let shape = [rows.len() as i64, width as i64];
        let mut feeds: Vec<(String, SessionInputValue<'_>)> = Vec::new();
        for name in &self.inputs {
            let mut data =
                vec![if name == "input_ids" { self.pad_id } else { 0 }; rows.len() * width];
            for (r, encoding) in rows.iter().enumerate() {
                let values = match name.as_str() {
                    "input_ids" => encoding.get_ids(),
                    "attention_mask" => encoding.get_attention_mask(),
                    _ => encoding.get_type_ids(),
                };
                for (c, &v) in values.iter().enumerate() {
                    data[r * width + c] = i64::from(v);
                }
            }
            let tensor = Tensor::from_array((shape, data)).map_err(|e| e.to_string())?;
            feeds.push((name.clone(), tensor.into()));
        }
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let outputs = session
            .run(feeds)
            .map_err(|e| format!("running the model: {e}"))?;
        let (_, logits) = outputs[self.output.as_str()]
            .try_extract_tensor::<f32>()
            .map_err(|e| format!("the model's output `{}`: {e}", self.output))?;
        if logits.len() != rows.len() * self.label_count {
            return Err(format!(
                "the model gave {} values for {} pairs: expected {} per pair (config.json's id2label)",
                logits.len(),
                rows.len(),
                self.label_count
            ));
        }
        Ok(logits.chunks(self.label_count).map(softmax).collect())
    }
}

/// The softmax of one row of logits, in f64.
fn softmax(row: &[f32]) -> Vec<f64> {
    let max = row
        .iter()
        .fold(f64::NEG_INFINITY, |m, &x| m.max(f64::from(x)));
    let exp: Vec<f64> = row.iter().map(|&x| (f64::from(x) - max).exp()).collect();
    let sum: f64 = exp.iter().sum();
    exp.into_iter().map(|e| e / sum).collect()
}

#[cfg(test)]
mod tests {
    //! Against `tests/fixtures/nli/expected.json` (and `expected_two_label*.json`): the
    //! probabilities onnxruntime and tokenizers (Python) give on the tiny models built by
    //! `make_tiny_model.py` (`reference.py`). These tests need ONNX Runtime: `ORT_DYLIB_PATH`
    //! names it (`.ci/nli-check` installs one).

    use super::*;
    use crate::judge::nli::model::{LabelNames, inspect};

    fn fixture(relative: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/nli")
            .join(relative)
    }

    fn spec(batch_size: usize) -> NliSpec {
        let model = inspect(&fixture("tiny"), &LabelNames::default()).unwrap();
        NliSpec {
            max_length: model.max_length,
            model,
            written_model: "tiny".into(),
            runtime: None,
            batch_size,
            entailment_threshold: 0.5,
            contradiction_threshold: 0.5,
            threads: 1,
            pair_order: super::super::PairOrder::ContextFirst,
        }
    }

    fn runtime() -> Runtime {
        assert!(
            std::env::var_os(RUNTIME_ENV).is_some(),
            "these tests need ONNX Runtime: set {RUNTIME_ENV} (see .ci/nli-check)"
        );
        Runtime::load(&spec(8)).unwrap()
    }

    fn expected() -> (Vec<(String, String)>, serde_json::Value) {
        let pairs = serde_json::from_str(&std::fs::read_to_string(fixture("pairs.json")).unwrap());
        let expected =
            serde_json::from_str(&std::fs::read_to_string(fixture("expected.json")).unwrap());
        (pairs.unwrap(), expected.unwrap())
    }

    #[test]
    #[ignore = "needs ONNX Runtime in ORT_DYLIB_PATH: .ci/nli-check runs it with --ignored"]
    fn probabilities_equal_the_python_reference_in_every_batch_size() {
        let runtime = runtime();
        let (pairs, expected) = expected();
        let first = runtime.probabilities(&pairs, 1).unwrap();
        for (i, row) in first.iter().enumerate() {
            for (j, p) in row.iter().enumerate() {
                let reference = expected["single"][i][j].as_f64().unwrap();
                assert!(
                    (p - reference).abs() < 1e-5,
                    "pair {i} label {j}: {p} vs {reference}"
                );
                let batched = expected["batch"][i][j].as_f64().unwrap();
                assert!(
                    (p - batched).abs() < 1e-5,
                    "pair {i} label {j}: {p} vs {batched}"
                );
            }
        }
        for batch_size in [4, 11, 64] {
            assert_eq!(
                runtime.probabilities(&pairs, batch_size).unwrap(),
                first,
                "batch size {batch_size}: the same bytes"
            );
        }
        // The tokenizer's counts (with [CLS] and two [SEP]) are the reference's, the long pair
        // truncated to the model's 128 positions.
        let inputs: Vec<EncodeInput<'_>> = pairs
            .iter()
            .map(|(p, h)| (p.as_str(), h.as_str()).into())
            .collect();
        let counts: Vec<usize> = runtime
            .encode(inputs, true)
            .unwrap()
            .iter()
            .map(Encoding::len)
            .collect();
        let reference: Vec<usize> =
            serde_json::from_value(expected["token_counts"].clone()).unwrap();
        assert_eq!(counts, reference);
    }

    #[test]
    #[ignore = "needs ONNX Runtime in ORT_DYLIB_PATH: .ci/nli-check runs it with --ignored"]
    fn a_long_context_is_cut_into_overlapping_windows_that_fit() {
        let runtime = runtime();
        let sentence = |i: usize| format!("The man number {i} is eating bread in the old house.");
        let context: String = (0..40).map(sentence).collect::<Vec<_>>().join(" ");
        let claim = "A man eats bread.";
        let windows = runtime.windows(&context, claim, 128).unwrap();
        assert!(windows.len() > 3, "{windows:?}");
        for (i, window) in windows.iter().enumerate() {
            let encoded = runtime
                .encode(vec![(window.as_str(), claim).into()], true)
                .unwrap();
            // Nothing is truncated: each window fits with the claim.
            let untruncated = runtime
                .tokenizer
                .encode((window.as_str(), claim), true)
                .unwrap();
            assert!(
                encoded[0].len() <= 128 && untruncated.get_overflowing().is_empty(),
                "window {i}"
            );
            if i > 0 {
                let last_of_previous = windows[i - 1].rsplit(". ").next().unwrap();
                assert!(
                    window.starts_with(last_of_previous.trim_end_matches('.')),
                    "overlap at {i}"
                );
            }
        }
        assert!(windows.last().unwrap().ends_with(&sentence(39)));
        assert_eq!(
            runtime.windows("Short context.", claim, 128).unwrap(),
            ["Short context."]
        );
    }

    /// The tiny two-label model (`make_tiny_model.py --two-label`, LABEL_1 supported) read in
    /// `pair_order`.
    fn two_label_spec(pair_order: super::super::PairOrder) -> NliSpec {
        let supported = LabelNames {
            entailment: Some("LABEL_1".into()),
            contradiction: None,
        };
        let model = inspect(&fixture("tiny_two_label"), &supported).unwrap();
        NliSpec {
            written_model: "tiny_two_label".into(),
            pair_order,
            model,
            ..spec(8)
        }
    }

    /// `reference.py`'s values for the two-label model: pairs as written, or claim first.
    fn two_label_expected(claim_first: bool) -> serde_json::Value {
        let file = if claim_first {
            "expected_two_label_claim_first.json"
        } else {
            "expected_two_label.json"
        };
        serde_json::from_str(&std::fs::read_to_string(fixture(file)).unwrap()).unwrap()
    }

    /// Whether `row` is within 1e-5 of the reference's `key` (batch or single) row `i`.
    fn near(row: &[f64], expected: &serde_json::Value, key: &str, i: usize) -> bool {
        let reference: Vec<f64> = serde_json::from_value(expected[key][i].clone()).unwrap();
        row.len() == reference.len()
            && row
                .iter()
                .zip(&reference)
                .all(|(a, b)| (a - b).abs() < 1e-5)
    }

    #[test]
    #[ignore = "needs ONNX Runtime in ORT_DYLIB_PATH: .ci/nli-check runs it with --ignored"]
    fn two_label_probabilities_equal_the_python_reference_in_every_batch_size() {
        use super::super::PairOrder;
        assert!(std::env::var_os(RUNTIME_ENV).is_some(), "set {RUNTIME_ENV}");
        let runtime = Runtime::load(&two_label_spec(PairOrder::ContextFirst)).unwrap();
        let (pairs, _) = expected();
        for (claim_first, order) in [
            (false, PairOrder::ContextFirst),
            (true, PairOrder::ClaimFirst),
        ] {
            let expected = two_label_expected(claim_first);
            assert_eq!(
                expected["labels"],
                serde_json::json!(["LABEL_0", "LABEL_1"])
            );
            let ordered: Vec<(String, String)> = pairs
                .iter()
                .map(|(context, claim)| order.arrange(context.clone(), claim))
                .collect();
            for batch_size in [1, 3, 8, 64] {
                let probabilities = runtime.probabilities(&ordered, batch_size).unwrap();
                assert_eq!(probabilities.len(), pairs.len());
                for (i, row) in probabilities.iter().enumerate() {
                    assert!(
                        near(row, &expected, "single", i) && near(row, &expected, "batch", i),
                        "{order:?}, batch size {batch_size}, pair {i}: {row:?} vs {} / {}",
                        expected["single"][i],
                        expected["batch"][i]
                    );
                }
            }
        }
    }

    #[test]
    #[ignore = "needs ONNX Runtime in ORT_DYLIB_PATH: .ci/nli-check runs it with --ignored"]
    fn a_two_label_judge_reads_pairs_in_its_order_and_grades_supported_or_not() {
        use super::super::{NliJudge, PairOrder};
        use crate::judge::task::Task;
        assert!(std::env::var_os(RUNTIME_ENV).is_some(), "set {RUNTIME_ENV}");
        let (pairs, _) = expected();
        let mut scores = Vec::new();
        for (claim_first, order) in [
            (false, PairOrder::ContextFirst),
            (true, PairOrder::ClaimFirst),
        ] {
            let expected = two_label_expected(claim_first);
            // The pairs that fit the model whole (one window each, nothing truncated).
            let fit: Vec<usize> = (0..pairs.len())
                .filter(|&i| expected["token_counts"][i].as_u64().unwrap() < 128)
                .collect();
            let tasks: Vec<Task> = fit
                .iter()
                .map(|&i| Task::Support {
                    claim: pairs[i].1.clone(),
                    context: pairs[i].0.as_str().into(),
                })
                .collect();
            let judge = NliJudge::from_spec(&two_label_spec(order));
            let verdicts = judge.judge_all("nli", &tasks).unwrap();
            for (&i, verdict) in fit.iter().zip(&verdicts) {
                let reference = expected["single"][i][1].as_f64().unwrap();
                let score = verdict.score.unwrap();
                assert!(
                    (score - reference).abs() < 1e-5,
                    "{order:?} pair {i}: {score} vs {reference}"
                );
                if reference >= 0.5 {
                    assert_eq!(
                        (verdict.grade, verdict.positive, &verdict.reason),
                        (2, true, &None)
                    );
                } else {
                    assert_eq!((verdict.grade, verdict.positive), (0, false), "pair {i}");
                    let reason = format!("not supported (score {score:.2})");
                    assert_eq!(verdict.reason.as_deref(), Some(reason.as_str()));
                }
            }
            scores.push(
                verdicts
                    .iter()
                    .map(|v| v.score.unwrap())
                    .collect::<Vec<_>>(),
            );
        }
        // The order reaches the model: the same pairs read claim first score otherwise.
        let moved = scores[0]
            .iter()
            .zip(&scores[1])
            .filter(|(a, b)| (*a - *b).abs() > 0.1);
        assert!(moved.count() >= 3, "{scores:?}");
    }

    #[test]
    fn a_missing_library_names_the_fix() {
        let mut spec = spec(8);
        spec.runtime = Some(PathBuf::from("/nonexistent/libonnxruntime.so"));
        let error = library(&spec).unwrap_err();
        assert!(
            error.contains("/nonexistent/libonnxruntime.so does not exist"),
            "{error}"
        );
    }
}
