//! `ragate synth --generator NAME --out DIR` drafts test queries from a corpus. A seeded sample
//! of documents stratified by length ([`sample`]), the question classes in turn (`literal`,
//! `paraphrased`, `multi-topic` from two documents, `numeric`); a generator (an `openai` or
//! `command` judge, [`crate::judge::draft`]) writes each question and its reference answer,
//! through the judge cache; what survives the checks ([`screen`]: content words, the overlap
//! that labels literal vs paraphrased, a stated number, near-duplicates) and the judge's
//! answerability check (every claim of the answer supported by the gold document(s)) is written
//! as a draft tier file (native qrels JSONL, each line with its `drafted_by` provenance) beside
//! a review sheet ([`sheet`]). Nothing becomes a tier here: `ragate qrels accept` adds reviewed
//! drafts, and a tier with unaccepted drafts is refused.

mod sample;
mod screen;
mod sheet;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::cli::SynthArgs;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::input::corpus::{self, Corpus};
use crate::input::judged_by::{DraftedBy, ModelJudgment};
use crate::input::native_qrels::QrelsLine;
use crate::input::text_file::TextFile;
use crate::input::unique_keys::UniqueKeys;
use crate::judge::backend::JudgeUsage;
use crate::judge::cache::JudgeCache;
use crate::judge::draft::{Draft, DraftDocument, DraftTask, QuestionClass};
use crate::judge::lexical::LexicalJudge;
use crate::judge::{Judge, Task};
use crate::metrics::claims::split_claims;
use crate::outputs::hand_edits::{self, Place};
use crate::outputs::output_files;
use crate::outputs::stdout::write_human;
use crate::tier;
use sample::{Profile, Slot};
use screen::Dropped;

/// The draft tier file in the output folder.
pub(crate) const DRAFT_FILE: &str = "draft.jsonl";
/// The review sheet in the output folder.
pub(crate) const REVIEW_FILE: &str = "review.md";

/// What the generator's drafts cost.
pub(crate) struct Cost {
    /// Drafts the generator was asked for.
    asked: usize,
    /// Drafts the cache answered.
    cached: usize,
    /// Calls and tokens, for a generator that counts them (`openai`).
    usage: Option<JudgeUsage>,
    /// At the generator's `price_per_1k_tokens`, when configured and tokens are known.
    money: Option<f64>,
}

/// What the review sheet says of the run.
pub(crate) struct Run {
    generator_name: String,
    generator_identity: String,
    judge_name: String,
    seed: u64,
    asked: usize,
    documents: usize,
    eligible: usize,
    notes: Vec<String>,
    cost: Cost,
    /// The slice fields every draft is given (`--slice FIELD=VALUE`), beside `class`.
    slices: BTreeMap<String, String>,
}

/// One draft and what became of it.
pub(crate) struct Outcome {
    qid: String,
    asked: QuestionClass,
    label: QuestionClass,
    doc_ids: Vec<String>,
    draft: Draft,
    overlap: Option<f64>,
    /// (supported, total) claims of the answer, as the judge found them.
    claims: (usize, usize),
    dropped: Option<Dropped>,
}

/// The classes asked for: `--class`, else every class; repeated ones once, in the given order.
fn classes(args: &SynthArgs) -> Vec<QuestionClass> {
    let mut seen = BTreeSet::new();
    let chosen: Vec<QuestionClass> = args.classes.iter().map(|c| (*c).into()).collect();
    let chosen = if chosen.is_empty() {
        QuestionClass::ALL.to_vec()
    } else {
        chosen
    };
    chosen.into_iter().filter(|c| seen.insert(*c)).collect()
}

/// A document's title and text, as drafts and judges read it.
fn document_text(corpus: &Corpus, index: usize) -> String {
    let document = &corpus.documents[index];
    match document.title.trim() {
        "" => document.text.clone(),
        title => format!("{title}\n{}", document.text),
    }
}

/// The corpus's documents as drafts are made from them: texts and profiles, by corpus index.
struct Documents<'c> {
    corpus: &'c Corpus,
    texts: Vec<String>,
    profiles: Vec<Profile>,
}

impl<'c> Documents<'c> {
    fn new(corpus: &'c Corpus, lexical: &LexicalJudge) -> Self {
        let texts: Vec<String> = (0..corpus.documents.len())
            .map(|i| document_text(corpus, i))
            .collect();
        let profiles = texts
            .iter()
            .map(|text| Profile {
                tokens: lexical.tokens(text),
                has_number: text.chars().any(|c| c.is_ascii_digit()),
            })
            .collect();
        Documents {
            corpus,
            texts,
            profiles,
        }
    }

    /// What the generator is asked for each slot: its class and document(s).
    fn tasks(&self, slots: &[Slot]) -> Vec<DraftTask> {
        slots
            .iter()
            .map(|slot| DraftTask {
                class: slot.class,
                documents: slot_documents(slot)
                    .map(|i| DraftDocument {
                        doc_id: self.corpus.documents[i].doc_id.clone(),
                        text: self.texts[i].clone(),
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Drafts queries from the corpus at `corpus_path` as `args` ask (with `--dry-run`, only says
/// what that would ask), writes the draft file and the review sheet into `--out`, and prints
/// what was kept.
pub(crate) fn run(config: &Config, args: &SynthArgs, corpus_path: &Path) -> Result<()> {
    let slices = slice_fields(args)?;
    let generator = crate::run::config_judge::by_name(config, "--generator", &args.generator)?;
    let judge = crate::run::config_judge::by_name(config, "--judge", &args.judge)?;
    let known = known_queries(config, args.tier.as_deref())?;
    refuse_inputs(config, args, corpus_path)?;
    if !args.dry_run {
        // A reviewer's edits to the previous run's draft or sheet are never replaced.
        for file in [DRAFT_FILE, REVIEW_FILE] {
            hand_edits::check(&args.out.join(file), "--out", args.force)?;
        }
    }
    let corpus = corpus::read(&TextFile::read(corpus_path)?)?;
    let lexical = LexicalJudge::default();
    let documents = Documents::new(&corpus, &lexical);
    let sampled = sample::sample(&documents.profiles, args.count, &classes(args), args.seed);
    let tasks = documents.tasks(&sampled.slots);
    if args.dry_run {
        return dry_run(config, args, &generator, &tasks, &sampled.notes);
    }
    // A previous run's draft and sheet go first (unchanged since it wrote them, or --force): a
    // run that fails leaves none to mistake for its.
    for file in [DRAFT_FILE, REVIEW_FILE] {
        hand_edits::remove(&args.out.join(file))?;
    }
    let cache = crate::run::config_judge::run_cache(config)?;
    let (drafts, asked) = generator.draft_cached(&args.generator, &tasks, cache.as_ref())?;
    let cost = cost(config, &args.generator, &generator, asked, drafts.len());
    let supported = answerability(&judge, &args.judge, &tasks, &drafts, cache.as_ref())?;
    let drafted = Drafted {
        slots: &sampled.slots,
        tasks: &tasks,
        drafts,
        claims: supported,
    };
    let outcomes = screened(args, &documents, &lexical, drafted, known);
    let run = Run {
        generator_name: args.generator.clone(),
        generator_identity: generator.draft_identity(),
        judge_name: args.judge.clone(),
        seed: args.seed,
        asked: args.count,
        documents: corpus.documents.len(),
        eligible: sampled.eligible,
        notes: sampled.notes,
        cost,
        slices,
    };
    write_outputs(&args.out, &run, &outcomes)?;
    print_summary(args, &run, &outcomes)
}

/// What the generator drafted, slot by slot.
struct Drafted<'a> {
    slots: &'a [Slot],
    tasks: &'a [DraftTask],
    drafts: Vec<Draft>,
    /// (supported, total) claims of each draft's answer.
    claims: Vec<(usize, usize)>,
}

/// Every draft with what became of it: kept, or dropped by the first check it fails.
fn screened(
    args: &SynthArgs,
    documents: &Documents<'_>,
    lexical: &LexicalJudge,
    drafted: Drafted<'_>,
    known: Vec<(String, BTreeSet<String>)>,
) -> Vec<Outcome> {
    let Drafted {
        slots,
        tasks,
        drafts,
        claims: supported,
    } = drafted;
    let mut outcomes = Vec::with_capacity(drafts.len());
    let mut seen = known;
    for (index, (((slot, task), draft), claims)) in slots
        .iter()
        .zip(tasks)
        .zip(drafts)
        .zip(supported)
        .enumerate()
    {
        let gold_tokens: BTreeSet<String> = slot_documents(slot)
            .flat_map(|i| documents.profiles[i].tokens.iter().cloned())
            .collect();
        let question_tokens = lexical.tokens(&draft.question);
        let overlap = screen::overlap(&question_tokens, &gold_tokens);
        let label = screen::label(slot.class, overlap.unwrap_or(0.0), args.literal_overlap);
        let qid = format!("{}{:04}", args.qid_prefix, index + 1);
        let dropped = why_dropped(&draft, overlap, claims, (slot, task))
            .or_else(|| screen::duplicate_of(&question_tokens, &seen));
        if dropped.is_none() {
            seen.push((qid.clone(), question_tokens));
        }
        outcomes.push(Outcome {
            qid,
            asked: slot.class,
            label,
            doc_ids: slot_documents(slot)
                .map(|i| documents.corpus.documents[i].doc_id.clone())
                .collect(),
            draft,
            overlap,
            claims,
            dropped,
        });
    }
    outcomes
}

/// Why a draft is dropped before the duplicate check, if it is: too long, no content words, an
/// unsupported claim, or (`numeric`) no number of the answer stated by its document.
fn why_dropped(
    draft: &Draft,
    overlap: Option<f64>,
    claims: (usize, usize),
    (slot, task): (&Slot, &DraftTask),
) -> Option<Dropped> {
    if let Some((field, chars, limit)) = draft.too_long() {
        Some(Dropped::TooLong {
            field,
            chars,
            limit,
        })
    } else if overlap.is_none() {
        Some(Dropped::NoContentWords)
    } else if claims.0 < claims.1 {
        Some(Dropped::Unsupported {
            claims: claims.1,
            supported: claims.0,
        })
    } else if slot.class == QuestionClass::Numeric
        && !screen::states_a_number_of(&draft.answer, &task.gold_text())
    {
        Some(Dropped::NoNumberFromDocument)
    } else {
        None
    }
}

/// What a run drafted and kept, what it cost, where to review it, and the sample's notes.
fn print_summary(args: &SynthArgs, run: &Run, outcomes: &[Outcome]) -> Result<()> {
    let kept = outcomes.iter().filter(|o| o.dropped.is_none()).count();
    write_human(&format!(
        "drafted {} of {} queries asked; kept {kept} ({})\n{}\nreview {}, then `ragate qrels accept {} --tier T` (or --into FILE)\n",
        outcomes.len(),
        args.count,
        class_counts(outcomes),
        sheet::cost_text(&run.cost),
        args.out.join(REVIEW_FILE).display(),
        args.out.join(DRAFT_FILE).display(),
    ))?;
    for note in &run.notes {
        write_human(&format!("note: {note}\n"))?;
    }
    Ok(())
}

/// `--dry-run`: what drafting `tasks` would ask the generator, from a read-only look at the
/// cache (no file created); nothing is asked or written.
fn dry_run(
    config: &Config,
    args: &SynthArgs,
    generator: &Judge,
    tasks: &[DraftTask],
    notes: &[String],
) -> Result<()> {
    let cache = crate::run::config_judge::read_only_cache(config)?;
    let planned = generator.plan_drafts(tasks, cache.as_ref())?;
    let Some(requests) = planned.requests else {
        return Err(Error::judge(
            &args.generator,
            format!(
                "a {} judge cannot draft questions: expected an openai or command judge as the generator",
                generator.kind()
            ),
        ));
    };
    let mut text = format!(
        "synth --dry-run: generator `{}`: {} drafts of {} asked, {} from the cache; {} call(s)",
        args.generator, planned.tasks, args.count, planned.cached, requests.calls
    );
    match (requests.tokens, price(config, &args.generator)) {
        (Some(tokens), Some(price)) => text.push_str(&format!(
            ", about {} prompt and {} completion tokens, about {:.4} at its price_per_1k_tokens",
            tokens.input,
            tokens.output,
            price.cost(tokens)
        )),
        (Some(tokens), None) => text.push_str(&format!(
            ", about {} prompt and {} completion tokens (no price_per_1k_tokens configured)",
            tokens.input, tokens.output
        )),
        (None, _) => text.push_str(" (a command generator's tokens are its own)"),
    }
    text.push_str(&format!(
        "\nthen the judge `{}` checks every claim of each answer (how many is known once the drafts exist); nothing asked or written\n",
        args.judge
    ));
    for note in notes {
        text.push_str(&format!("note: {note}\n"));
    }
    write_human(&text)
}

/// The corpus indices of a slot's documents: the sampled one, then a multi-topic partner.
fn slot_documents(slot: &Slot) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(slot.primary).chain(slot.partner)
}

/// Kept drafts per label, as `4 literal, 3 paraphrased`.
fn class_counts(outcomes: &[Outcome]) -> String {
    let mut counts: BTreeMap<QuestionClass, usize> = BTreeMap::new();
    for outcome in outcomes.iter().filter(|o| o.dropped.is_none()) {
        *counts.entry(outcome.label).or_default() += 1;
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(class, n)| format!("{n} {}", class.name()))
        .collect();
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

/// The tier's queries (`--tier`), as (qid, content tokens), that a draft must not duplicate.
fn known_queries(config: &Config, tier: Option<&str>) -> Result<Vec<(String, BTreeSet<String>)>> {
    let Some(name) = tier else {
        return Ok(Vec::new());
    };
    let queries = tier::load(config, config.tier(name)?)?;
    let lexical = LexicalJudge::default();
    Ok(queries
        .qrels
        .queries()
        .iter()
        .filter_map(|q| {
            let text = q.text.as_deref()?;
            Some((format!("tier query {}", q.qid), lexical.tokens(text)))
        })
        .collect())
}

/// `--slice FIELD=VALUE`, each field once: not `class` (synth sets it from the question's
/// class), not `all` (the slice of every query) and not a field of the qrels format.
fn slice_fields(args: &SynthArgs) -> Result<BTreeMap<String, String>> {
    let mut fields = BTreeMap::new();
    for assignment in &args.slices {
        let field = assignment.field.as_str();
        let escaped = field.escape_debug().to_string();
        let shown = crate::error::shorten(&escaped);
        let problem = if field == "class" {
            Some("synth sets `class` from each question's class".to_string())
        } else if field == "all" {
            Some("`all` is the slice of every query".to_string())
        } else if QrelsLine::fields().iter().any(|f| f == field) {
            Some(format!(
                "`{shown}` is a field of the qrels format, not a slice"
            ))
        } else if fields.contains_key(field) {
            Some(format!("`{shown}` is given twice"))
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(Error::Usage(format!(
                "--slice {shown}=...: {problem}: expected a slice field such as length=short"
            )));
        }
        fields.insert(field.to_string(), assignment.value.clone());
    }
    Ok(fields)
}

/// The output folder's files must not be an input of the run (the corpus, a tier's files).
fn refuse_inputs(config: &Config, args: &SynthArgs, corpus: &Path) -> Result<()> {
    let mut inputs = vec![output_files::Input {
        path: corpus.to_path_buf(),
        named_by: "the corpus".to_string(),
    }];
    for tier in config.tiers.values() {
        inputs.extend(output_files::inputs(config, tier, None));
    }
    for file in [DRAFT_FILE, REVIEW_FILE] {
        output_files::refuse_input("--out", &args.out.join(file), &inputs)?;
    }
    Ok(())
}

/// (supported, total) claims of every draft's answer, judged against its document(s) by the
/// judge `name`, through the cache.
fn answerability(
    judge: &Judge,
    name: &str,
    tasks: &[DraftTask],
    drafts: &[Draft],
    cache: Option<&JudgeCache>,
) -> Result<Vec<(usize, usize)>> {
    let mut support_tasks = Vec::new();
    let mut owners = Vec::new();
    for (index, (task, draft)) in tasks.iter().zip(drafts).enumerate() {
        let context: std::sync::Arc<str> = task.gold_text().into();
        for claim in split_claims(&draft.answer) {
            support_tasks.push(Task::Support {
                claim,
                context: context.clone(),
            });
            owners.push(index);
        }
    }
    let (verdicts, _) = judge.judge_cached(name, &support_tasks, cache, 0)?;
    let mut counts = vec![(0, 0); drafts.len()];
    for (owner, verdict) in owners.into_iter().zip(verdicts) {
        counts[owner].1 += 1;
        if verdict.positive {
            counts[owner].0 += 1;
        }
    }
    Ok(counts)
}

/// The `price_per_1k_tokens` of the config's judge `name`, when configured.
fn price(config: &Config, name: &str) -> Option<crate::judge::cost::Price> {
    config
        .judges
        .get(name)
        .and_then(|spec| spec.cost_hints().price)
}

/// The generator's cost: its usage and, with a price, its money.
fn cost(config: &Config, name: &str, generator: &Judge, asked: usize, total: usize) -> Cost {
    let usage = generator.usage();
    let money = match (usage, price(config, name)) {
        (Some(usage), Some(price)) => Some(price.cost(crate::judge::cost::Tokens {
            input: usage.prompt_tokens,
            output: usage.completion_tokens,
        })),
        _ => None,
    };
    Cost {
        asked,
        cached: total - asked,
        usage,
        money,
    }
}

/// Writes the draft tier file (kept drafts, in order) and the review sheet (every draft), each
/// with the record of what was written ([`hand_edits`]).
fn write_outputs(out: &Path, run: &Run, outcomes: &[Outcome]) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let mut lines = String::new();
    for outcome in outcomes.iter().filter(|o| o.dropped.is_none()) {
        lines.push_str(&draft_line(run, outcome));
        lines.push('\n');
    }
    let draft_path = out.join(DRAFT_FILE);
    hand_edits::write(&draft_path, &lines, Place::InFolder)?;
    let review = sheet::markdown(run, outcomes, &draft_path.display().to_string());
    hand_edits::write(&out.join(REVIEW_FILE), &review, Place::InFolder)
}

/// One kept draft as a native qrels line: the gold document(s) graded 3 (one document: the
/// question was written from it) or 2 each (multi-topic: each answers part), marked as the
/// generator's judgments; the class as the `class` slice; the provenance in `drafted_by`.
fn draft_line(run: &Run, outcome: &Outcome) -> String {
    let grade = if outcome.doc_ids.len() == 1 { 3 } else { 2 };
    let judged_by = outcome.doc_ids.iter().map(|id| {
        let judgment = ModelJudgment {
            judge: run.generator_identity.clone(),
            at: None,
        };
        (id.clone(), judgment)
    });
    let mut line = QrelsLine {
        qid: outcome.qid.clone(),
        query: outcome.draft.question.clone(),
        gold_doc_ids: Some(outcome.doc_ids.clone()),
        graded_relevance: None,
        gold_answer_substring: None,
        reference_answer: Some(outcome.draft.answer.clone()),
        must_pass: None,
        slices: UniqueKeys(
            run.slices
                .iter()
                .map(|(field, value)| (field.clone(), value.as_str().into()))
                .chain([("class".to_string(), outcome.label.name().into())])
                .collect(),
        ),
        judged_by: Some(UniqueKeys(judged_by.collect())),
        drafted_by: Some(DraftedBy {
            generator: run.generator_identity.clone(),
            seed: Some(run.seed),
            lexical_overlap: outcome.overlap.map(|o| (o * 1000.0).round() / 1000.0),
            accepted_at: None,
        }),
    };
    for id in &outcome.doc_ids {
        line.grade(id, grade);
    }
    line.to_json()
}
