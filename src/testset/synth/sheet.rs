//! The review sheet of `ragate synth` (`review.md`): what was asked, what it cost, and every
//! draft with its class, overlap, answerability and why it was dropped, for a person to review
//! before `ragate qrels accept`. Every text of the generator is untrusted: made inert.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::report::inert;

use super::{Cost, Outcome, Run};

const QUESTION_CHARS: usize = 300;
const ANSWER_CHARS: usize = 400;

/// The review sheet of `run`'s outcomes.
pub(super) fn markdown(run: &Run, outcomes: &[Outcome], draft_file: &str) -> String {
    let kept = outcomes.iter().filter(|o| o.dropped.is_none()).count();
    let mut text = String::from("# Drafted queries: review sheet\n\n");
    writeln!(
        text,
        "Generator {} ({}), seed {}: {} drafts asked from {} documents ({} long enough to draft from); \
         answerability judged by {}.\n",
        inert::code(&run.generator_name, 80),
        inert::text(&run.generator_identity, 200),
        run.seed,
        run.asked,
        run.documents,
        run.eligible,
        inert::code(&run.judge_name, 80),
    )
    .expect("writing to a String");
    let dropped_text = dropped_counts(outcomes);
    writeln!(
        text,
        "**Kept {kept} of {}**{}.\n",
        outcomes.len(),
        if dropped_text.is_empty() {
            String::new()
        } else {
            format!("; dropped: {}", dropped_text.join(", "))
        }
    )
    .expect("writing to a String");
    writeln!(text, "Cost: {}.\n", cost_text(&run.cost)).expect("writing to a String");
    for note in &run.notes {
        writeln!(text, "- {}", inert::text(note, 300)).expect("writing to a String");
    }
    if !run.notes.is_empty() {
        text.push('\n');
    }
    writeln!(
        text,
        "Nothing here is a query of a tier yet. For each kept draft check that the question makes \
         sense on its own, that the answer is right and that the gold documents are the ones that \
         answer it; then add the drafts you accept with `ragate qrels accept {draft_file} --tier T \
         --only QID,...` (or `--into FILE` for a new tier). A drafted query nobody accepted is \
         refused wherever a tier is evaluated.\n"
    )
    .expect("writing to a String");
    text.push_str(
        "| qid | status | class (asked) | overlap | claims supported | question | answer | gold |\n\
         |---|---|---|---:|---:|---|---|---|\n",
    );
    for outcome in outcomes {
        text.push_str(&row(outcome));
    }
    text
}

/// Drafts dropped per reason, as `2 too-long`, by the reason's key.
fn dropped_counts(outcomes: &[Outcome]) -> Vec<String> {
    let mut dropped: BTreeMap<&str, usize> = BTreeMap::new();
    for outcome in outcomes {
        if let Some(reason) = &outcome.dropped {
            *dropped.entry(reason.key()).or_default() += 1;
        }
    }
    dropped
        .iter()
        .map(|(key, count)| format!("{count} {key}"))
        .collect()
}

/// One draft's row of the table, with its line ending.
fn row(outcome: &Outcome) -> String {
    let status = match &outcome.dropped {
        None => "kept".to_string(),
        Some(reason) => format!("dropped: {}", inert::cell(&reason.reason(), 200)),
    };
    let class = if outcome.label == outcome.asked {
        outcome.label.name().to_string()
    } else {
        format!("{} ({})", outcome.label.name(), outcome.asked.name())
    };
    let overlap = outcome
        .overlap
        .map_or_else(|| "-".to_string(), |o| format!("{o:.2}"));
    let (supported, total) = outcome.claims;
    let claims = format!("{supported}/{total}");
    let gold: Vec<String> = outcome
        .doc_ids
        .iter()
        .map(|id| inert::code_cell(id, 80))
        .collect();
    format!(
        "| {} | {status} | {class} | {overlap} | {claims} | {} | {} | {} |\n",
        inert::code_cell(&outcome.qid, 80),
        inert::cell(&outcome.draft.question, QUESTION_CHARS),
        inert::cell(&outcome.draft.answer, ANSWER_CHARS),
        gold.join(" "),
    )
}

/// What the generator's calls cost, as far as it is known.
pub(super) fn cost_text(cost: &Cost) -> String {
    let mut text = format!(
        "{} draft(s) from the generator, {} from the cache",
        cost.asked, cost.cached
    );
    if let Some(usage) = cost.usage {
        write!(
            text,
            "; {} call(s), {} prompt and {} completion tokens",
            usage.calls, usage.prompt_tokens, usage.completion_tokens
        )
        .expect("writing to a String");
        match cost.money {
            Some(money) => write!(text, ", {money:.4} at the configured price_per_1k_tokens"),
            None => write!(text, ", no price_per_1k_tokens configured"),
        }
        .expect("writing to a String");
    } else if cost.asked > 0 {
        text.push_str("; a command generator's cost is its own (ragate counts no tokens)");
    }
    text
}
