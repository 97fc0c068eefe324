//! `ragate judge-eval`: a judge measured against labels: balanced accuracy, TPR, TNR,
//! precision, F1, accuracy and AUC with 95% intervals, the confusion matrix, the threshold that
//! would maximise balanced accuracy (reported, never applied), per class, and the items it got
//! wrong.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use crate::cli::{GateFormat, JudgeEvalArgs};
use crate::config::{self, CacheMode, Config, DEFAULT_JUDGE, discover};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::gate::calibration::AGREEMENT_CUT;
use crate::input::judge_items::{self, JudgeItem, Subject};
use crate::input::labels::{self, Label};
use crate::input::text_file::TextFile;
use crate::judge::cache::JudgeCache;
use crate::judge::lexical::LexicalJudge;
use crate::judge::{self, Judge, Task, Verdict, kinds};
use crate::metrics::claims::split_claims;
use crate::metrics::labelled::check_label_metric;
use crate::metrics::metric::Metric;
use crate::outputs::stdout::write_document;
use crate::outputs::stdout::write_human;
use crate::report::format::one_line;
use crate::run::judged_run::JudgedRun;
use crate::stats::classification::{self, BOOTSTRAP_RESAMPLES, Estimate, Prediction, Scores};
use crate::suggest;

/// How many misjudged items are listed per judge.
const SHOWN: usize = 10;

/// The built-in lexical judges, usable by name when the config has no judge of that name.
const BUILT_IN: [(&str, u8); 3] = [("lexical-1", 1), ("lexical-2", 2), ("lexical-3", 3)];

/// One judge's verdict on one item.
struct Judged {
    prediction: Prediction,
    /// Why the judge found the item unsupported (the first unsupported claim's reason).
    reason: Option<String>,
}

/// One judge's measurement.
struct Measured {
    name: String,
    identity: String,
    /// The items measured (with --tier: one per current label).
    items: Vec<JudgeItem>,
    scores: Scores,
    classes: BTreeMap<String, Scores>,
    judged: Vec<Judged>,
}

impl Measured {
    /// The scores of `judged` (one per item) overall and per class.
    fn of(
        name: &str,
        judge: &Judge,
        items: Vec<JudgeItem>,
        judged: Vec<Judged>,
        seed: u64,
    ) -> Self {
        let predictions: Vec<Prediction> = judged.iter().map(|j| j.prediction).collect();
        let scores = classification::scores(&predictions, seed, name);
        let mut by_class: BTreeMap<String, Vec<Prediction>> = BTreeMap::new();
        for (item, j) in items.iter().zip(&judged) {
            if let Some(class) = &item.class {
                by_class
                    .entry(class.clone())
                    .or_default()
                    .push(j.prediction);
            }
        }
        let classes = by_class
            .into_iter()
            .map(|(class, predictions)| {
                let stream = format!("{name} [class={class}]");
                (class, classification::scores(&predictions, seed, &stream))
            })
            .collect();
        Measured {
            name: name.to_string(),
            identity: judge.describe(),
            items,
            scores,
            classes,
            judged,
        }
    }
}

pub(super) fn run(args: JudgeEvalArgs) -> Result<i32> {
    let config = config_of(&args)?;
    if let Some(min) = args.min_balanced_accuracy
        && !(0.0..=1.0).contains(&min)
    {
        return Err(Error::Usage(format!(
            "--min-balanced-accuracy {min}: expected a number in [0, 1]"
        )));
    }
    let names = if args.judges.is_empty() {
        vec![DEFAULT_JUDGE.to_string()]
    } else {
        args.judges.clone()
    };
    let judges: Vec<(String, Judge)> = names
        .iter()
        .map(|name| Ok((name.clone(), resolve(config.as_ref(), name)?)))
        .collect::<Result<_>>()?;
    let (source, measured) = measure(&args, config.as_ref(), &judges)?;
    let below = measured.iter().any(|m| {
        args.min_balanced_accuracy.is_some_and(|min| {
            m.scores
                .balanced_accuracy
                .is_none_or(|estimate| estimate.value < min)
        })
    });
    let code = if below {
        exit_code::REGRESSION
    } else {
        exit_code::SUCCESS
    };
    if args.format == GateFormat::Json {
        write_document(&document_of(&measured, &source, &args, code))?;
    } else {
        write_human(&text_of(&measured, &source, &args))?;
    }
    Ok(code)
}

/// `--config`, else the config found here or above, else none.
fn config_of(args: &JudgeEvalArgs) -> Result<Option<Config>> {
    let path = match &args.config {
        Some(path) => Some(path.clone()),
        None => std::env::current_dir()
            .ok()
            .and_then(|dir| discover::config_file(&dir)),
    };
    path.map(|path| config::load(&path)).transpose()
}

/// The judges measured on `--items`, or on `--tier`'s labels of `--run`'s answers; the source
/// named, and the measurements.
fn measure(
    args: &JudgeEvalArgs,
    config: Option<&Config>,
    judges: &[(String, Judge)],
) -> Result<(String, Vec<Measured>)> {
    match (&args.items, &args.tier, &args.run) {
        (Some(path), _, _) => Ok((
            path.display().to_string(),
            on_items(path, config, judges, args.seed)?,
        )),
        (None, Some(tier), Some(run)) => {
            let config = config.ok_or_else(|| {
                Error::Usage(
                    "--tier needs a config (--config, or eval-config.yaml here or above)".into(),
                )
            })?;
            on_labels(config, tier, run, args, judges)
        }
        _ => Err(Error::Usage(
            "expected --items FILE, or --tier NAME --run FILE".into(),
        )),
    }
}

/// `--format json`: the `ragate-judge-eval/1` document.
fn document_of(measured: &[Measured], source: &str, args: &JudgeEvalArgs, code: i32) -> String {
    let first = &measured[0];
    let document = json!({
        "format": "ragate-judge-eval/1",
        "status": if code == exit_code::SUCCESS { "pass" } else { "fail" },
        "exit_code": code,
        "source": source,
        "items": first.items.len(),
        "supported": first.items.iter().filter(|i| i.supported).count(),
        "unsupported": first.items.iter().filter(|i| !i.supported).count(),
        "seed": args.seed,
        "bootstrap_resamples": BOOTSTRAP_RESAMPLES,
        "min_balanced_accuracy": args.min_balanced_accuracy,
        "judges": measured.iter().map(json_of).collect::<Vec<_>>(),
    });
    crate::json_text::document(&document)
}

/// Every judge on the labelled items of `path`, through the config's cache.
fn on_items(
    path: &Path,
    config: Option<&Config>,
    judges: &[(String, Judge)],
    seed: u64,
) -> Result<Vec<Measured>> {
    let items = judge_items::read(&TextFile::read(path)?)?;
    let cache = match config {
        Some(config) if config.cache.mode != CacheMode::Off => {
            Some(JudgeCache::open(&config.cache.path, config.cache.mode)?)
        }
        _ => None,
    };
    let (claims, owners) = claims_of(&items, path)?;
    judges
        .iter()
        .map(|(name, judge)| {
            let (verdicts, _) = judge.judge_cached(name, &claims, cache.as_ref(), 1)?;
            let judged = per_item(&items, &owners, &verdicts);
            Ok(Measured::of(name, judge, items.clone(), judged, seed))
        })
        .collect()
}

/// Every judge's values of `--metric` on the answers of `run` against the tier's human labels
/// of the same answers (a value of at least [`AGREEMENT_CUT`] is positive on both sides); the
/// source named, and the measurements.
fn on_labels(
    config: &Config,
    tier: &str,
    run: &Path,
    args: &JudgeEvalArgs,
    judges: &[(String, Judge)],
) -> Result<(String, Vec<Measured>)> {
    let metric = args.metric;
    if !matches!(metric, Metric::Judged(_)) {
        return Err(Error::Usage(format!(
            "--metric {metric}: expected a judged metric (faithfulness, faithfulness_graded, answer_relevance)"
        )));
    }
    let labels_path = labels_path(config, tier, args)?;
    let labels = labels::read(&TextFile::read(&labels_path)?, check_label_metric)?;
    let mut judged_run = JudgedRun::open(config, tier, run)?;
    let mut measured = Vec::new();
    // Labels not compared (the same for every judge: they depend on the run's answers only).
    let mut left_out = String::new();
    for (name, judge) in judges {
        judged_run.add_judge(name, judge);
        let scores = judged_run.judge(name, metric)?;
        let answers: BTreeMap<String, String> = scores
            .iter()
            .filter_map(|q| Some((q.qid.clone(), q.answer.clone()?)))
            .collect();
        let values: BTreeMap<&str, Option<f64>> = scores
            .iter()
            .map(|q| (q.qid.as_str(), q.values[0]))
            .collect();
        let matched = labels::current_labels(&labels, &answers, &metric.to_string());
        let (items, judged, without_value) = labelled(&matched.usable, &values, metric);
        if items.is_empty() {
            return Err(Error::input(
                &labels_path,
                format!(
                    "no current {metric} label: expected labels whose answer is the run's \
                     ({} stale, {} of queries not in the run)",
                    matched.stale, matched.unknown_qid
                ),
            ));
        }
        left_out = left_out_text(matched.stale, matched.unknown_qid, without_value);
        measured.push(Measured::of(name, judge, items, judged, args.seed));
    }
    let left_out = if left_out.is_empty() {
        String::new()
    } else {
        format!("; labels left out: {left_out}")
    };
    let source = format!(
        "{} ({metric} labels of tier `{tier}`, answers of {}{left_out})",
        labels_path.display(),
        run.display()
    );
    Ok((source, measured))
}

/// The labels not compared, by why: stale, of queries not in the run, without a judge value.
fn left_out_text(stale: usize, unknown_qid: usize, without_value: usize) -> String {
    [
        (stale, "stale (the answer changed)"),
        (unknown_qid, "of queries not in the run"),
        (
            without_value,
            "without a judge value (an empty answer left out)",
        ),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, why)| format!("{n} {why}"))
    .collect::<Vec<_>>()
    .join(", ")
}

/// The labels file: `--labels`, else the tier's `labels:`.
fn labels_path(config: &Config, tier: &str, args: &JudgeEvalArgs) -> Result<PathBuf> {
    match (&args.labels, &config.tier(tier)?.labels) {
        (Some(path), _) | (None, Some(path)) => Ok(path.clone()),
        (None, None) => Err(Error::Usage(format!(
            "tier `{tier}` has no `labels:` in {}: expected --labels FILE",
            config.path.display()
        ))),
    }
}

/// The usable labels with a judge value of the same answer, as items (the human's value cut at
/// [`AGREEMENT_CUT`]) and the judge's predictions of them; and how many labels had no value.
fn labelled(
    usable: &[&Label],
    values: &BTreeMap<&str, Option<f64>>,
    metric: Metric,
) -> (Vec<JudgeItem>, Vec<Judged>, usize) {
    let mut items = Vec::new();
    let mut judged = Vec::new();
    let mut without_value = 0;
    for label in usable {
        let (Some(human), Some(Some(value))) = (
            label.value(&metric.to_string()),
            values.get(label.qid.as_str()),
        ) else {
            without_value += 1;
            continue;
        };
        items.push(JudgeItem {
            id: label.qid.clone(),
            qid: Some(label.qid.clone()),
            subject: Subject::Answer(label.answer.clone()),
            context: "".into(),
            supported: human >= AGREEMENT_CUT,
            class: None,
            line: label.line,
        });
        judged.push(Judged {
            prediction: Prediction {
                label: human >= AGREEMENT_CUT,
                predicted: *value >= AGREEMENT_CUT,
                score: Some(*value),
            },
            reason: None,
        });
    }
    (items, judged, without_value)
}

/// The judge named `name`: the config's, else a built-in lexical judge (`default` without a
/// config is the default lexical judge).
fn resolve(config: Option<&Config>, name: &str) -> Result<Judge> {
    if let Some(spec) = config.and_then(|c| c.judges.get(name)) {
        return Ok(judge::build(spec).reporting_to(crate::run::judge_events::printed()));
    }
    if config.is_none() && name == DEFAULT_JUDGE {
        return Ok(judge::build(&kinds::default_judge()));
    }
    if let Some((_, version)) = BUILT_IN.iter().find(|(built_in, _)| *built_in == name) {
        return Ok(Judge::new(LexicalJudge {
            version: *version,
            ..LexicalJudge::default()
        }));
    }
    let mut names: Vec<&str> = config
        .map(|c| c.judges.keys().map(String::as_str).collect())
        .unwrap_or_else(|| vec![DEFAULT_JUDGE]);
    names.extend(BUILT_IN.iter().map(|(built_in, _)| *built_in));
    let place = config.map_or("no config file was found".to_string(), |c| {
        format!("not in {}", c.path.display())
    });
    Err(Error::Usage(suggest::did_you_mean(
        format!(
            "no judge `{name}` ({place}): expected one of {}",
            names.join(", ")
        ),
        name,
        names.iter().copied(),
    )))
}

/// The support tasks of every item (an answer gives one per claim) and, per task, its item.
fn claims_of(items: &[JudgeItem], path: &Path) -> Result<(Vec<Task>, Vec<usize>)> {
    let mut tasks = Vec::new();
    let mut owners = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let claims = match &item.subject {
            Subject::Claim(claim) => vec![claim.clone()],
            Subject::Answer(answer) => split_claims(answer),
        };
        if claims.is_empty() {
            return Err(Error::parse(
                path,
                item.line,
                "the answer has no claim to judge (only punctuation or markup): expected at least one sentence",
            ));
        }
        let context: Arc<str> = item.context.as_str().into();
        for claim in claims {
            tasks.push(Task::Support {
                claim,
                context: Arc::clone(&context),
            });
            owners.push(index);
        }
    }
    Ok((tasks, owners))
}

/// Per item: supported when every claim is; the score is the lowest claim score (none when a
/// claim has none); the reason is the first unsupported claim's.
fn per_item(items: &[JudgeItem], owners: &[usize], verdicts: &[Verdict]) -> Vec<Judged> {
    let mut judged: Vec<Judged> = items
        .iter()
        .map(|item| Judged {
            prediction: Prediction {
                label: item.supported,
                predicted: true,
                score: Some(1.0),
            },
            reason: None,
        })
        .collect();
    for (&owner, verdict) in owners.iter().zip(verdicts) {
        let j = &mut judged[owner];
        if !verdict.positive {
            j.prediction.predicted = false;
            if j.reason.is_none() {
                j.reason = verdict.reason.clone();
            }
        }
        j.prediction.score = match (j.prediction.score, verdict.score) {
            (Some(a), Some(b)) => Some(a.min(b)),
            _ => None,
        };
    }
    judged
}

fn estimate_text(estimate: Option<Estimate>) -> String {
    estimate.map_or("-".to_string(), |e| {
        format!("{:.3}  [{:.3}, {:.3}]", e.value, e.low, e.high)
    })
}

fn text_of(measured: &[Measured], source: &str, args: &JudgeEvalArgs) -> String {
    let items = &measured[0].items;
    let supported = items.iter().filter(|i| i.supported).count();
    let mut out = format!(
        "{} labelled items in {source} ({supported} supported, {} unsupported)\n\
         95% intervals: Wilson for proportions; stratified bootstrap ({BOOTSTRAP_RESAMPLES} resamples, seed {}) for balanced accuracy, F1 and AUC\n",
        items.len(),
        items.len() - supported,
        args.seed,
    );
    for m in measured {
        out.push_str(&scores_text(m));
        if let Some(min) = args.min_balanced_accuracy {
            let pass = m.scores.balanced_accuracy.is_some_and(|e| e.value >= min);
            out.push_str(&format!(
                "  {}: balanced accuracy {} --min-balanced-accuracy {min}\n",
                if pass { "PASS" } else { "FAIL" },
                if pass { "at or above" } else { "below" },
            ));
        }
        out.push_str(&classes_text(m));
        out.push_str(&misjudged_text(m));
    }
    out
}

/// A judge's scores with their intervals, and the best threshold on these labels.
fn scores_text(m: &Measured) -> String {
    let c = &m.scores.confusion;
    let s = &m.scores;
    let mut out = format!(
        "\njudge `{}` ({})\n\
         \x20 balanced accuracy  {}\n\
         \x20 TPR                {}  {}/{} supported items judged supported\n\
         \x20 TNR                {}  {}/{} unsupported items judged unsupported\n\
         \x20 precision          {}  {}/{} items judged supported are supported\n\
         \x20 F1                 {}\n\
         \x20 accuracy           {}\n\
         \x20 AUC                {}\n",
        m.name,
        m.identity,
        estimate_text(s.balanced_accuracy),
        estimate_text(s.tpr),
        c.true_positive,
        c.positives(),
        estimate_text(s.tnr),
        c.true_negative,
        c.negatives(),
        estimate_text(s.precision),
        c.true_positive,
        c.true_positive + c.false_positive,
        estimate_text(s.f1),
        estimate_text(s.accuracy),
        if s.auc.is_some() {
            format!("{} (from the judge's scores)", estimate_text(s.auc))
        } else {
            "- (needs both labels and a score on every item)".to_string()
        },
    );
    if let Some(best) = s.best_threshold {
        out.push_str(&format!(
            "  best threshold     score >= {:.4} gives balanced accuracy {:.3} on these labels (reported, not applied)\n",
            best.at, best.balanced_accuracy
        ));
    }
    out
}

/// Per class of the items (when they have classes): how many, judged supported, agreement.
fn classes_text(m: &Measured) -> String {
    if m.classes.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n  {:<28} {:>6} {:>17}  {}\n",
        "class", "items", "judged supported", "agreement with the labels [95%]"
    );
    for (class, scores) in &m.classes {
        let judged_supported = scores.confusion.true_positive + scores.confusion.false_positive;
        out.push_str(&format!(
            "  {:<28} {:>6} {:>17}  {}\n",
            one_line(class, 28),
            scores.n,
            judged_supported,
            estimate_text(scores.accuracy)
        ));
    }
    out
}

/// The items the judge got wrong (the first [`SHOWN`]).
fn misjudged_text(m: &Measured) -> String {
    let items = &m.items;
    let wrong: Vec<(&JudgeItem, &Judged)> = items
        .iter()
        .zip(&m.judged)
        .filter(|(_, j)| j.prediction.label != j.prediction.predicted)
        .collect();
    if wrong.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n  misjudged: {} of {} items{}\n",
        wrong.len(),
        items.len(),
        if wrong.len() > SHOWN {
            format!(" (the first {SHOWN})")
        } else {
            String::new()
        }
    );
    for (item, j) in wrong.iter().take(SHOWN) {
        let (Subject::Claim(text) | Subject::Answer(text)) = &item.subject;
        out.push_str(&format!(
            "  - {} (line {}, labelled {}): \"{}\"{}\n",
            one_line(&item.id, 60),
            item.line,
            label_text(item.supported),
            one_line(text, 100),
            j.reason
                .as_deref()
                .map_or(String::new(), |r| format!(" ({})", one_line(r, 100)))
        ));
    }
    out
}

fn label_text(supported: bool) -> &'static str {
    if supported {
        "supported"
    } else {
        "unsupported"
    }
}

fn json_of(m: &Measured) -> serde_json::Value {
    let misjudged: Vec<serde_json::Value> = m
        .items
        .iter()
        .zip(&m.judged)
        .filter(|(_, j)| j.prediction.label != j.prediction.predicted)
        .map(|(item, j)| {
            json!({
                "id": item.id,
                "line": item.line,
                "class": item.class,
                "label": label_text(item.supported),
                "score": j.prediction.score,
                "reason": j.reason,
            })
        })
        .collect();
    json!({
        "name": m.name,
        "judge": m.identity,
        "scores": m.scores,
        "classes": m.classes,
        "misjudged": misjudged,
    })
}
