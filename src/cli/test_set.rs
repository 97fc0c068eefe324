//! The arguments of the commands that build and budget a test set: `holes`, `synth`, `qrels
//! apply`, `qrels accept` and `plan`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{GateFormat, default_config, tier_name};

#[derive(Debug, Args)]
pub(crate) struct HolesArgs {
    /// The tier whose qrels have the holes (and whose queries and corpus the judge reads).
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// A run to pool (native JSONL or TREC; repeatable): the holes are the union of every run's
    /// top documents per query that the qrels do not judge [default: the config's pipeline, run
    /// over the tier's queries now, or its run file].
    #[arg(long = "run", value_name = "FILE")]
    pub runs: Vec<PathBuf>,
    /// How deep each run is pooled [default: the largest cut-off of the tier's gated retrieval
    /// metrics; 10 for one without a cut-off, such as mrr, or when none is gated].
    #[arg(long, value_name = "K")]
    pub depth: Option<usize>,
    /// Only the first N holes (listed, or judged).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// A judge of the config (`openai` or `command`) to propose a grade 0-3 for every hole.
    #[arg(long, value_name = "NAME", requires = "out")]
    pub judge: Option<String>,
    /// The proposals file to write (JSONL), with --judge. A file there is replaced only while it
    /// is what ragate wrote (its sha256 is kept in `.<name>.ragate-sha256` beside it).
    #[arg(long, value_name = "FILE", requires = "judge")]
    pub out: Option<PathBuf>,
    /// Replace the --out file even when it changed since ragate wrote it (edited by hand) or
    /// was not written by ragate.
    #[arg(long, requires = "out")]
    pub force: bool,
    /// What to print on stdout without --judge: a table, one JSON object, or one JSON object a
    /// hole (`{"qid", "doc_id", "priority", "best_rank", "runs"}`).
    #[arg(long, value_enum, default_value_t = HolesFormat::Table)]
    pub format: HolesFormat,
    /// Worker threads for TREC runs (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// What `ragate holes` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum HolesFormat {
    Table,
    Json,
    Jsonl,
}

#[derive(Debug, Subcommand)]
pub(crate) enum QrelsCommand {
    /// Write the accepted proposals of a proposals file into the tier's qrels, in the qrels'
    /// own format, each marked with the judge that proposed it; shows the diff first and writes
    /// only with --yes.
    Apply(QrelsApplyArgs),
    /// Add reviewed drafted queries (`ragate synth`) to a tier's qrels (native JSONL) or to a
    /// new qrels file, stamped as accepted; shows the diff first and writes only with --yes.
    Accept(QrelsAcceptArgs),
}

#[derive(Debug, Args)]
pub(crate) struct QrelsAcceptArgs {
    /// The draft file (`ragate synth --out DIR` writes DIR/draft.jsonl).
    #[arg(value_name = "DRAFT")]
    pub draft: PathBuf,
    /// The tier whose qrels file (native JSONL; created when the config names one that does not
    /// exist yet) the accepted drafts are added to.
    #[arg(long, value_parser = tier_name, required_unless_present = "into", conflicts_with = "into")]
    pub tier: Option<String>,
    /// A native qrels JSONL file to add them to instead (created when absent): a new tier's.
    #[arg(long, value_name = "FILE")]
    pub into: Option<PathBuf>,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// Accept only these drafts, by qid (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "QID")]
    pub only: Vec<String>,
    /// Write (without it, only the diff is shown).
    #[arg(long)]
    pub yes: bool,
    /// Accept even in CI (`CI` set, but not to 0 or false).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SynthArgs {
    /// A judge of the config (`openai` or `command`) that writes each question and its answer.
    #[arg(long, value_name = "NAME")]
    pub generator: String,
    /// The folder to write the draft tier file (draft.jsonl) and the review sheet (review.md)
    /// into. A previous run's files there are replaced only while they are what ragate wrote
    /// (their sha256 is kept in `.<name>.ragate-sha256` beside them).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace draft.jsonl and review.md in --out even when they changed since ragate wrote
    /// them (a reviewer's edits are lost) or were not written by ragate.
    #[arg(long)]
    pub force: bool,
    /// The judge that checks every answer is supported by its document(s) (answerability).
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub judge: String,
    /// The corpus to draft from (JSONL `{doc_id, title?, text}`) [default: the config's
    /// `corpus:`].
    #[arg(long, value_name = "FILE")]
    pub corpus: Option<PathBuf>,
    /// How many drafts to ask for (before the checks drop some).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub count: usize,
    /// Question classes, in turn (repeatable, or comma-separated) [default: all four].
    #[arg(
        long = "class",
        value_enum,
        value_delimiter = ',',
        value_name = "CLASS"
    )]
    pub classes: Vec<QuestionClassArg>,
    /// A slice field given to every drafted query (repeatable): `--slice length=short --slice
    /// form=question` writes `"length": "short", "form": "question"` on each line of draft.jsonl
    /// beside the `class` synth sets, so that the drafts carry the fields the config's `slices:`
    /// name. A field of the qrels format (`qid`, `query`, ...), `class` or `all` is refused.
    #[arg(long = "slice", value_name = "FIELD=VALUE", value_parser = slice_assignment)]
    pub slices: Vec<SliceAssignment>,
    /// The seed of the document sample.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// The share of a question's content words found in its document from which a literal or
    /// paraphrased draft is labelled literal.
    #[arg(long, value_name = "SHARE", default_value_t = crate::judge::draft::LITERAL_OVERLAP)]
    pub literal_overlap: f64,
    /// A tier whose queries a draft must not duplicate.
    #[arg(long, value_parser = tier_name)]
    pub tier: Option<String>,
    /// Before spending: print what the generator would be asked (drafts, cache hits, calls,
    /// tokens, money at its `price_per_1k_tokens`) and stop; nothing is asked or written.
    #[arg(long)]
    pub dry_run: bool,
    /// The drafts' qids: this prefix and a 4-digit number.
    #[arg(long, value_name = "PREFIX", default_value = "synth-")]
    pub qid_prefix: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
}

/// `--slice FIELD=VALUE` of `ragate synth`: a slice field and its value for every draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SliceAssignment {
    /// The query field (e.g. `length`).
    pub field: String,
    /// Its value on every draft (e.g. `short`).
    pub value: String,
}

fn slice_assignment(text: &str) -> Result<SliceAssignment, String> {
    match text.split_once('=') {
        Some((field, value)) if !field.trim().is_empty() && !value.trim().is_empty() => {
            Ok(SliceAssignment {
                field: field.to_string(),
                value: value.to_string(),
            })
        }
        _ => Err(format!(
            "`{text}`: expected FIELD=VALUE with both parts, e.g. length=short"
        )),
    }
}

/// `--class`: the question classes of `ragate synth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum QuestionClassArg {
    Literal,
    Paraphrased,
    MultiTopic,
    Numeric,
}

impl From<QuestionClassArg> for crate::judge::draft::QuestionClass {
    fn from(arg: QuestionClassArg) -> Self {
        use crate::judge::draft::QuestionClass;
        match arg {
            QuestionClassArg::Literal => QuestionClass::Literal,
            QuestionClassArg::Paraphrased => QuestionClass::Paraphrased,
            QuestionClassArg::MultiTopic => QuestionClass::MultiTopic,
            QuestionClassArg::Numeric => QuestionClass::Numeric,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct QrelsApplyArgs {
    /// The proposals file (`ragate holes --judge NAME --out FILE`).
    #[arg(value_name = "PROPOSALS")]
    pub proposals: PathBuf,
    /// The tier whose qrels file the accepted proposals are written into.
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// Accept only these proposals: qid:doc_id pairs (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "QID:DOC")]
    pub only: Vec<String>,
    /// Accept only proposals whose score (the judge's confidence) is at least S; one without a
    /// score is left out.
    #[arg(long, value_name = "S")]
    pub min_score: Option<f64>,
    /// Replace existing judgments (human or model) with the proposals; without it they are kept.
    #[arg(long)]
    pub overwrite: bool,
    /// Write the qrels (without it, only the diff is shown).
    #[arg(long)]
    pub yes: bool,
    /// Apply even in CI (`CI` set, but not to 0 or false).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The tier to plan.
    #[arg(long, value_parser = tier_name)]
    pub tier: String,
    /// The config [default: $RAGATE_CONFIG, else eval-config.yaml in this directory or the
    /// nearest parent up to the repository root].
    #[arg(long, env = "RAGATE_CONFIG", default_value_os_t = default_config(), hide_default_value = true, hide_env = true, value_name = "FILE")]
    pub config: PathBuf,
    /// The answers to plan for (a native run); default: the configured run file, else the
    /// baseline's stored answers (an estimate).
    #[arg(long, value_name = "FILE")]
    pub run: Option<PathBuf>,
    /// What to print on stdout: a table with notes, or one JSON object (`ragate-plan/1`).
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
    /// Also probe what the gate would call, as it does before its pipeline runs: one `GET
    /// {base_url}/models` per judge and embeddings endpoint, and each `command` judge's program
    /// (without it, plan makes no network call).
    #[arg(long)]
    pub probe: bool,
}
