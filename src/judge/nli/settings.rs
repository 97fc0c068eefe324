//! `kind: nli` in the config: its keys, their validation (the model directory is read) and the
//! settings they give.

use std::path::PathBuf;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::NliJudge;
use super::model::{self, LabelNames, ModelInfo};
use crate::error::Result;
use crate::judge::backend::{JudgeAt, JudgeBackend, JudgeKind, JudgeSpec, KindSettings};

/// `kind: nli`, a cross-encoder NLI model run in-process (needs the `nli` feature).
pub struct Nli;

/// `kind: nli` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping such as `{ kind: nli, model: DIR }`")]
pub struct RawNliJudge {
    /// The `kind` key, read before this struct (listed so that it is an accepted key; never
    /// read back, hence the allowance).
    #[allow(dead_code)]
    #[serde(rename = "kind")]
    kind_key: IgnoredAny,
    /// The exported model directory (model.onnx, tokenizer.json, config.json).
    model: Option<String>,
    /// The ONNX Runtime library (default: $ORT_DYLIB_PATH).
    runtime: Option<String>,
    batch_size: Option<usize>,
    max_length: Option<usize>,
    threads: Option<usize>,
    entailment_threshold: Option<f64>,
    contradiction_threshold: Option<f64>,
    entailment_label: Option<String>,
    contradiction_label: Option<String>,
    pair_order: Option<PairOrder>,
}

/// Which text the model reads first: checkers are trained on one order (an NLI model on
/// premise then hypothesis, that is the context first; some fact-checkers on the claim first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairOrder {
    /// The context (premise) first, then the claim (hypothesis): the default.
    #[default]
    ContextFirst,
    /// The claim first, then the context.
    ClaimFirst,
}

impl PairOrder {
    /// The pair the model reads for a context (or one window of it) and a claim.
    pub fn arrange(self, context: String, claim: &str) -> (String, String) {
        match self {
            PairOrder::ContextFirst => (context, claim.to_string()),
            PairOrder::ClaimFirst => (claim.to_string(), context),
        }
    }
}

impl JudgeKind for Nli {
    const NAME: &'static str = "nli";
    const ARTICLE: &'static str = "an";
    type Raw = RawNliJudge;

    /// See [`validate_nli`]; refused in a build without the `nli` feature.
    fn validate(raw: &RawNliJudge, at: &JudgeAt<'_>) -> Result<JudgeSpec> {
        if !cfg!(feature = "nli") {
            let message = crate::features::missing(
                "nli",
                "an `nli` judge",
                "or use a `lexical`, `command` or `openai` judge",
            );
            return Err(at.error("kind", message));
        }
        validate_nli(raw, at).map(JudgeSpec::new)
    }
}

/// `kind: nli`: the exported model and how it is run and read.
#[derive(Debug, Clone, PartialEq)]
pub struct NliSpec {
    /// What the model directory holds (labels, longest input, digest).
    pub model: ModelInfo,
    /// The model directory as written in the config (the judge's identity records it).
    pub written_model: String,
    /// The ONNX Runtime library (`runtime:`, resolved against the config's folder); None: the
    /// `ORT_DYLIB_PATH` environment variable at run time.
    pub runtime: Option<PathBuf>,
    /// Pairs per model call (default 8); verdicts do not depend on it.
    pub batch_size: usize,
    /// The longest input in tokens (default: the model's, at most 512).
    pub max_length: usize,
    /// Entailment probability at or above which a claim is supported (default 0.5).
    pub entailment_threshold: f64,
    /// Contradiction probability at or above which an unsupported claim is contradicted
    /// (grade 0; default 0.5).
    pub contradiction_threshold: f64,
    /// ONNX Runtime's threads (0, the default: one per core); verdicts do not depend on it.
    pub threads: usize,
    /// Which text the model reads first (`pair_order:`, default the context).
    pub pair_order: PairOrder,
}

impl KindSettings for NliSpec {
    fn kind(&self) -> &'static str {
        Nli::NAME
    }

    fn client(&self) -> Box<dyn JudgeBackend> {
        Box::new(NliJudge::from_spec(self))
    }

    fn judges_support_only(&self) -> bool {
        true
    }
}

/// An `nli` judge: the model directory read (labels, digest), thresholds in (0, 1] (no
/// contradiction threshold for a two-label model), a batch size of 1 to 1024 and a longest input
/// of 8 to the model's.
fn validate_nli(judge: &RawNliJudge, at: &JudgeAt<'_>) -> Result<NliSpec> {
    let written_model = judge.model.clone().filter(|m| !m.is_empty()).ok_or_else(|| {
        at.error(
            "",
            "an nli judge needs `model: DIR`, an exported model directory (model.onnx, tokenizer.json, config.json)",
        )
    })?;
    let names = LabelNames {
        entailment: judge.entailment_label.clone(),
        contradiction: judge.contradiction_label.clone(),
    };
    let model = model::inspect(&at.base.join(&written_model), &names)
        .map_err(|message| at.error("model", message))?;
    if model.is_two_label() && judge.contradiction_threshold.is_some() {
        return Err(at.error(
            "contradiction_threshold",
            "the model has two labels (supported / not supported) and no contradiction: \
             expected no contradiction_threshold (a claim below entailment_threshold is not \
             supported, grade 0)",
        ));
    }
    let threshold = |name: &str, value: Option<f64>| -> Result<f64> {
        let value = value.unwrap_or(0.5);
        if value > 0.0 && value <= 1.0 {
            Ok(value)
        } else {
            Err(at.error(name, format!("{value}: expected a probability in (0, 1]")))
        }
    };
    let batch_size = judge.batch_size.unwrap_or(8);
    if !(1..=1024).contains(&batch_size) {
        return Err(at.error(
            "batch_size",
            format!("{batch_size}: expected 1 to 1024 pairs a model call"),
        ));
    }
    let max_length = judge.max_length.unwrap_or(model.max_length);
    if !(8..=model.max_length).contains(&max_length) {
        return Err(at.error(
            "max_length",
            format!(
                "{max_length}: expected 8 to {} tokens (the model's longest input)",
                model.max_length
            ),
        ));
    }
    Ok(NliSpec {
        written_model,
        runtime: judge.runtime.as_ref().map(|r| at.base.join(r)),
        batch_size,
        max_length,
        entailment_threshold: threshold("entailment_threshold", judge.entailment_threshold)?,
        contradiction_threshold: threshold(
            "contradiction_threshold",
            judge.contradiction_threshold,
        )?,
        threads: judge.threads.unwrap_or(0),
        pair_order: judge.pair_order.unwrap_or_default(),
        model,
    })
}

#[cfg(all(test, feature = "nli"))]
mod nli_tests {
    //! `kind: nli` settings (with the `nli` feature; `.ci/nli-check` runs them).

    use std::path::Path;

    use super::NliSpec;
    use crate::config;

    fn load(judge: &str, metrics: &str) -> crate::error::Result<config::Config> {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nli");
        let path = dir.path().join("eval-config.yaml");
        std::fs::write(
            &path,
            format!(
                "version: 1\nmetrics: {metrics}\njudges: {{ nli: {{ kind: nli, {judge} }} }}\n\
                 tiers: {{ smoke: {{ qrels: q.jsonl, baseline: b.json }} }}\n\
                 gate: {{ rules: [ {{ metric: faithfulness, max_drop: 0.1 }} ] }}\n"
            )
            .replace("FIXTURES", &fixtures.display().to_string()),
        )
        .unwrap();
        config::load(&path)
    }

    #[test]
    fn an_nli_judge_reads_its_model_directory() {
        let config = load(
            "model: \"FIXTURES/tiny\", batch_size: 4, entailment_threshold: 0.7",
            "[{ name: faithfulness, judge: nli }]",
        )
        .unwrap();
        let spec = config.judges["nli"]
            .settings::<NliSpec>()
            .expect("an nli spec");
        assert_eq!(
            (
                spec.model.entailment,
                spec.model.contradiction,
                spec.max_length
            ),
            (1, Some(0), 128)
        );
        assert_eq!((spec.batch_size, spec.entailment_threshold), (4, 0.7));
    }

    #[test]
    fn bad_nli_settings_name_their_key() {
        let cases = [
            (
                "runtime: x",
                "[faithfulness]",
                "judges.nli",
                "needs `model: DIR`",
            ),
            (
                "model: \"FIXTURES/none\"",
                "[faithfulness]",
                "judges.nli.model",
                "model.onnx is missing",
            ),
            (
                "model: \"FIXTURES/tiny\", batch_size: 0",
                "[faithfulness]",
                "judges.nli.batch_size",
                "expected 1 to 1024",
            ),
            (
                "model: \"FIXTURES/tiny\", max_length: 512",
                "[faithfulness]",
                "judges.nli.max_length",
                "expected 8 to 128 tokens",
            ),
            (
                "model: \"FIXTURES/tiny\", entailment_threshold: 0",
                "[faithfulness]",
                "judges.nli.entailment_threshold",
                "(0, 1]",
            ),
            (
                "model: \"FIXTURES/tiny\", entailment_label: yes",
                "[faithfulness]",
                "judges.nli.model",
                "no entailment label",
            ),
            (
                "model: \"FIXTURES/tiny\", modle: x",
                "[faithfulness]",
                "judges.nli.modle",
                "unknown field",
            ),
            (
                "model: \"FIXTURES/tiny\"",
                "[{ name: answer_relevance, judge: nli }]",
                "metrics[0]",
                "an nli judge, which judges whether contexts support claims only",
            ),
            (
                "model: \"FIXTURES/tiny\"",
                "[{ name: faithfulness, judge: nli, claims: llm }]",
                "metrics[0].claims",
                "but `nli` is nli",
            ),
        ];
        for (judge, metrics, key, message) in cases {
            let error = load(judge, metrics).unwrap_err();
            let text = error.to_string();
            // An unknown key is a YAML error at its line and column, the others config errors.
            let at_key = matches!(&error, crate::error::Error::Config { key: k, .. } if k == key)
                || text.contains(&format!(": {key}: "));
            assert!(
                at_key && text.contains(message),
                "{judge} / {metrics}: {text}"
            );
        }
    }

    #[test]
    fn a_two_label_judge_reads_its_supported_label_and_pair_order() {
        let config = load(
            "model: \"FIXTURES/tiny_two_label\", entailment_label: LABEL_1, pair_order: claim_first",
            "[{ name: faithfulness, judge: nli }]",
        )
        .unwrap();
        let spec = config.judges["nli"]
            .settings::<NliSpec>()
            .expect("an nli spec");
        assert_eq!(
            (
                spec.model.is_two_label(),
                spec.model.entailment,
                spec.model.contradiction,
                spec.pair_order
            ),
            (true, 1, None, super::PairOrder::ClaimFirst)
        );
        let default_order = load(
            "model: \"FIXTURES/tiny\"",
            "[{ name: faithfulness, judge: nli }]",
        )
        .unwrap();
        let spec = default_order.judges["nli"].settings::<NliSpec>().unwrap();
        assert_eq!(spec.pair_order, super::PairOrder::ContextFirst);
    }

    #[test]
    fn bad_two_label_settings_name_their_key() {
        let two = "model: \"FIXTURES/tiny_two_label\"";
        let cases = [
            (
                two.to_string(),
                "judges.nli.model",
                "e.g. `entailment_label: LABEL_1`",
            ),
            (
                format!("{two}, entailment_label: LABEL_1, contradiction_label: LABEL_0"),
                "judges.nli.model",
                "expected no `contradiction_label:`",
            ),
            (
                format!("{two}, entailment_label: LABEL_1, contradiction_threshold: 0.7"),
                "judges.nli.contradiction_threshold",
                "expected no contradiction_threshold",
            ),
        ];
        for (judge, key, message) in cases {
            let error = load(&judge, "[faithfulness]").unwrap_err();
            let text = error.to_string();
            let at_key = matches!(&error, crate::error::Error::Config { key: k, .. } if k == key);
            assert!(at_key && text.contains(message), "{judge}: {text}");
        }
    }

    #[test]
    fn an_unknown_pair_order_is_an_error_at_its_line() {
        for value in ["reverse", "Claim_First", "1"] {
            let error = load(
                &format!("model: \"FIXTURES/tiny\", pair_order: {value}"),
                "[faithfulness]",
            )
            .unwrap_err()
            .to_string();
            // The judges are on the config's third line.
            assert!(
                error.contains("eval-config.yaml:3:")
                    && error.contains("judges.nli.pair_order: unknown variant")
                    && error.contains("expected `context_first` or `claim_first`"),
                "{value}: {error}"
            );
        }
    }
}
