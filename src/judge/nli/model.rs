//! An exported NLI model directory (`model.onnx`, `tokenizer.json`, `config.json`): which output
//! is entailment and which contradiction, the longest input, and the files' digest that names the
//! model in the judge's identity and cache keys. Read when the config is loaded, with or without
//! the `nli` feature, so that a wrong directory is a config error before anything runs.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The files an exported model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["model.onnx", "tokenizer.json", "config.json"];

/// Label names (compared lowercase) that mean "the premise entails the hypothesis".
const ENTAILMENT_NAMES: [&str; 4] = ["entailment", "entailed", "supported", "consistent"];
/// Label names (compared lowercase) that mean "the premise contradicts the hypothesis".
const CONTRADICTION_NAMES: [&str; 3] = ["contradiction", "contradicted", "refuted"];

/// The longest input (tokens, both sequences and the special tokens) ragate gives a model whose
/// config does not say, and the most it gives any model.
pub const DEFAULT_MAX_LENGTH: usize = 512;

/// What ragate knows of an exported model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// The directory.
    pub dir: PathBuf,
    /// How many outputs (labels) the classifier has.
    pub label_count: usize,
    /// The index of the entailment output.
    pub entailment: usize,
    /// The index of the contradiction output, when a model of three or more labels has one (a
    /// two-label model never has one: see [`ModelInfo::is_two_label`]).
    pub contradiction: Option<usize>,
    /// `max_position_embeddings` of config.json, at most [`DEFAULT_MAX_LENGTH`].
    pub max_length: usize,
    /// `pad_token_id` of config.json (default 0): the id that pads a batch's shorter inputs.
    pub pad_id: i64,
    /// SHA-256 over the three files' names and SHA-256s, lowercase hex.
    pub sha256: String,
}

impl ModelInfo {
    /// Whether the model is a two-label "supported / not supported" fact-checker: its score is
    /// the probability of the supported output ([`ModelInfo::entailment`]) and anything below
    /// the threshold is not supported (grade 0), with no contradiction and no neutral.
    pub fn is_two_label(&self) -> bool {
        self.label_count == 2
    }
}

/// Label names chosen in the config instead of the defaults above.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelNames {
    /// The entailment label's name in `id2label`.
    pub entailment: Option<String>,
    /// The contradiction label's name in `id2label`.
    pub contradiction: Option<String>,
}

/// Reads `dir`: every message says which file and what was expected.
pub fn inspect(dir: &Path, names: &LabelNames) -> Result<ModelInfo, String> {
    for file in MODEL_FILES {
        let path = dir.join(file);
        if !path.is_file() {
            return Err(format!(
                "{} is missing: expected an exported NLI model directory with {} \
                 (docs/metrics.md, \"nli\", shows the one-line export)",
                path.display(),
                MODEL_FILES.join(", ")
            ));
        }
    }
    let config_path = dir.join("config.json");
    let text = std::fs::read_to_string(&config_path)
        .map_err(|e| format!("cannot read {}: {e}", config_path.display()))?;
    let config: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: {e}: expected the model's JSON config",
            config_path.display()
        )
    })?;
    let labels =
        id2label(&config).map_err(|message| format!("{}: {message}", config_path.display()))?;
    let find = |wanted: &Option<String>, defaults: &[&str]| -> Option<usize> {
        labels.iter().position(|label| match wanted {
            Some(name) => label == name,
            None => defaults.contains(&label.to_lowercase().as_str()),
        })
    };
    let shown = labels.join(", ");
    let entailment = find(&names.entailment, &ENTAILMENT_NAMES).ok_or_else(|| {
        format!(
            "{}: no entailment label in id2label ({shown}): expected one named {} or \
             `entailment_label:` in the judge's config (for a two-label model, the supported \
             label, e.g. `entailment_label: LABEL_1`)",
            config_path.display(),
            names
                .entailment
                .as_deref()
                .map_or(ENTAILMENT_NAMES.join(", "), |n| format!("`{n}`"))
        )
    })?;
    let contradiction = find(&names.contradiction, &CONTRADICTION_NAMES);
    if let (Some(name), None) = (&names.contradiction, contradiction) {
        return Err(format!(
            "{}: no label `{name}` in id2label ({shown}): expected the contradiction_label to be one of them",
            config_path.display()
        ));
    }
    // A two-label model's other output is "not supported", whatever its name.
    let two_label = labels.len() == 2;
    if two_label && names.contradiction.is_some() {
        return Err(format!(
            "{}: id2label has two labels ({shown}), a supported / not supported classifier \
             without a contradiction: expected no `contradiction_label:`",
            config_path.display()
        ));
    }
    let contradiction = contradiction.filter(|_| !two_label);
    if contradiction == Some(entailment) {
        return Err(format!(
            "{}: the entailment and contradiction labels are the same output: expected two",
            config_path.display()
        ));
    }
    let max_length = config
        .get("max_position_embeddings")
        .and_then(serde_json::Value::as_u64)
        .map_or(DEFAULT_MAX_LENGTH, |n| (n as usize).min(DEFAULT_MAX_LENGTH));
    let pad_id = config
        .get("pad_token_id")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(0);
    Ok(ModelInfo {
        dir: dir.to_path_buf(),
        pad_id,
        label_count: labels.len(),
        entailment,
        contradiction,
        max_length,
        sha256: digest(dir)?,
    })
}

/// The labels of `config.json`'s `id2label` in output order ("0", "1", ... each once).
fn id2label(config: &serde_json::Value) -> Result<Vec<String>, String> {
    let map = config
        .get("id2label")
        .and_then(serde_json::Value::as_object)
        .ok_or("no `id2label` object: expected the classifier's labels, e.g. {\"0\": \"contradiction\", \"1\": \"entailment\", \"2\": \"neutral\"}")?;
    let mut labels = vec![None; map.len()];
    for (index, label) in map {
        let position = index
            .parse::<usize>()
            .ok()
            .filter(|&i| i < map.len())
            .ok_or_else(|| {
                format!(
                    "id2label key `{index}`: expected the indices 0 to {}",
                    map.len() - 1
                )
            })?;
        let name = label
            .as_str()
            .ok_or_else(|| format!("id2label `{index}` is {label}: expected a label name"))?;
        labels[position] = Some(name.to_string());
    }
    let labels: Vec<String> = labels.into_iter().flatten().collect();
    if labels.len() < 2 {
        return Err(format!(
            "id2label has {} label(s): expected a classifier with at least 2",
            labels.len()
        ));
    }
    Ok(labels)
}

/// SHA-256 over each model file's name and SHA-256 (streamed: a model can be large).
fn digest(dir: &Path) -> Result<String, String> {
    let mut combined = Sha256::new();
    for file in MODEL_FILES {
        let path = dir.join(file);
        let mut reader = std::fs::File::open(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let read = reader
                .read(&mut buffer)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
        }
        combined.update(file.as_bytes());
        combined.update(hasher.finalize());
    }
    Ok(crate::digest::hex(&combined.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_dir(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("model.onnx"), b"graph").unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), b"{}").unwrap();
        std::fs::write(dir.path().join("config.json"), config).unwrap();
        dir
    }

    #[test]
    fn the_labels_come_from_id2label_in_any_case_and_order() {
        let dir = model_dir(
            r#"{"id2label": {"2": "NEUTRAL", "0": "CONTRADICTION", "1": "ENTAILMENT"}, "max_position_embeddings": 1024}"#,
        );
        let info = inspect(dir.path(), &LabelNames::default()).unwrap();
        assert_eq!(
            (
                info.label_count,
                info.entailment,
                info.contradiction,
                info.max_length
            ),
            (3, 1, Some(0), DEFAULT_MAX_LENGTH)
        );
        assert_eq!(info.sha256.len(), 64);
        let two_way = model_dir(
            r#"{"id2label": {"0": "unsupported", "1": "supported"}, "max_position_embeddings": 256}"#,
        );
        let info = inspect(two_way.path(), &LabelNames::default()).unwrap();
        assert_eq!(
            (info.entailment, info.contradiction, info.max_length),
            (1, None, 256)
        );
        let generic =
            model_dir(r#"{"id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}}"#);
        let named = LabelNames {
            entailment: Some("LABEL_2".into()),
            contradiction: Some("LABEL_0".into()),
        };
        let info = inspect(generic.path(), &named).unwrap();
        assert_eq!((info.entailment, info.contradiction), (2, Some(0)));
    }

    #[test]
    fn a_two_label_model_has_a_supported_output_and_no_contradiction() {
        let generic = model_dir(r#"{"id2label": {"0": "LABEL_0", "1": "LABEL_1"}}"#);
        let error = inspect(generic.path(), &LabelNames::default()).unwrap_err();
        assert!(
            error.contains("no entailment label in id2label (LABEL_0, LABEL_1)")
                && error.contains("e.g. `entailment_label: LABEL_1`"),
            "{error}"
        );
        let supported = LabelNames {
            entailment: Some("LABEL_1".into()),
            contradiction: None,
        };
        let info = inspect(generic.path(), &supported).unwrap();
        assert_eq!(
            (info.entailment, info.contradiction, info.is_two_label()),
            (1, None, true)
        );
        // Named "contradiction" or not, the other output of two is "not supported".
        let named = model_dir(r#"{"id2label": {"0": "ENTAILMENT", "1": "CONTRADICTION"}}"#);
        let info = inspect(named.path(), &LabelNames::default()).unwrap();
        assert_eq!((info.entailment, info.contradiction), (0, None));
        let with_contradiction = LabelNames {
            entailment: Some("LABEL_1".into()),
            contradiction: Some("LABEL_0".into()),
        };
        let error = inspect(generic.path(), &with_contradiction).unwrap_err();
        assert!(
            error.contains("id2label has two labels (LABEL_0, LABEL_1)")
                && error.contains("expected no `contradiction_label:`"),
            "{error}"
        );
        let three = model_dir(r#"{"id2label": {"0": "LABEL_0", "1": "LABEL_1", "2": "x"}}"#);
        assert!(!inspect(three.path(), &supported).unwrap().is_two_label());
    }

    #[test]
    fn the_digest_changes_with_any_file() {
        let dir = model_dir(r#"{"id2label": {"0": "entailment", "1": "neutral"}}"#);
        let before = inspect(dir.path(), &LabelNames::default()).unwrap().sha256;
        std::fs::write(dir.path().join("tokenizer.json"), b"{ }").unwrap();
        let after = inspect(dir.path(), &LabelNames::default()).unwrap().sha256;
        assert_ne!(before, after);
    }

    #[test]
    fn a_wrong_directory_says_which_file_and_what_was_expected() {
        let empty = tempfile::tempdir().unwrap();
        let error = inspect(empty.path(), &LabelNames::default()).unwrap_err();
        assert!(
            error.contains("model.onnx is missing: expected an exported NLI model directory"),
            "{error}"
        );
        let cases = [
            (r#"{"labels": 3}"#, "no `id2label` object"),
            (
                r#"{"id2label": {"0": "neutral", "1": "contradiction"}}"#,
                "no entailment label in id2label (neutral, contradiction)",
            ),
            (
                r#"{"id2label": {"0": "entailment", "5": "neutral"}}"#,
                "id2label key `5`: expected the indices 0 to 1",
            ),
            (
                r#"{"id2label": {"0": "entailment"}}"#,
                "expected a classifier with at least 2",
            ),
            (
                r#"{"id2label": {"0": "entailment", "1": 7}}"#,
                "id2label `1` is 7: expected a label name",
            ),
            ("not json", "expected the model's JSON config"),
        ];
        for (config, message) in cases {
            let dir = model_dir(config);
            let error = inspect(dir.path(), &LabelNames::default()).unwrap_err();
            assert!(
                error.contains("config.json") && error.contains(message),
                "{config}: {error}"
            );
        }
        let dir = model_dir(r#"{"id2label": {"0": "entailment", "1": "neutral"}}"#);
        let named = LabelNames {
            entailment: None,
            contradiction: Some("refutes".into()),
        };
        let error = inspect(dir.path(), &named).unwrap_err();
        assert!(error.contains("no label `refutes` in id2label"), "{error}");
    }
}
