//! ir_measures' and trec_eval's metric names, read as the ragate metric with the same convention.
//!
//! One table, [`ALIASES`]: each row is a tool's name for a measure, how it takes a cut-off, and
//! the ragate metric it reads as (or, for a measure ragate does not compute, the closest metric
//! and why it is not the same). ragate's own names always win: trec_eval's `ndcg` (gain g) is
//! only an output name, since `ndcg` is ragate's nDCG with gain 2^g - 1.

use crate::metrics::retrieval::{Persistence, RetrievalMetric};

/// The tool whose name an alias is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// The `ir_measures` Python package: `nDCG@10`, `P@5`, `RR`.
    IrMeasures,
    /// NIST's `trec_eval`: `ndcg_cut_10` (printed) or `ndcg_cut.10` (as `-m` writes it).
    TrecEval,
}

impl Tool {
    /// The tool's name, possessive, for messages.
    pub fn possessive(self) -> &'static str {
        match self {
            Tool::IrMeasures => "ir_measures'",
            Tool::TrecEval => "trec_eval's",
        }
    }

    /// Whether `separator` separates a name from its cut-off (trec_eval prints `_` and reads `.`).
    pub fn separates_with(self, separator: char) -> bool {
        match self {
            Tool::IrMeasures => separator == '@',
            Tool::TrecEval => matches!(separator, '_' | '.'),
        }
    }
}

/// Whether an alias takes a cut-off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Never (`Rprec`, `recip_rank`).
    None,
    /// With or without (`nDCG`, `nDCG@10`).
    Optional,
    /// Always (`P@5`, `P_5`).
    Required,
}

/// What an alias reads as in ragate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The ragate metric of this base name, with the alias's cut-off.
    Same(&'static str),
    /// No ragate metric computes it: the closest one (None if none is close) and why it differs.
    NotComputed {
        /// The closest ragate metric, as a name with `K` for the cut-off.
        closest: Option<&'static str>,
        /// How the measure differs from it, or where ragate reports it instead.
        why: &'static str,
    },
}

/// Another tool's name for a measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alias {
    /// Whose name it is.
    pub tool: Tool,
    /// The name without its cut-off (`nDCG`, `ndcg_cut`).
    pub name: &'static str,
    /// Whether it takes a cut-off.
    pub cut: Cut,
    /// What it reads as.
    pub reading: Reading,
    /// The convention the names share, said in the note (`gain g, as ir_measures and trec_eval`).
    pub convention: &'static str,
}

const fn alias(
    tool: Tool,
    name: &'static str,
    cut: Cut,
    ours: &'static str,
    convention: &'static str,
) -> Alias {
    Alias {
        tool,
        name,
        cut,
        reading: Reading::Same(ours),
        convention,
    }
}

const fn not_computed(
    tool: Tool,
    name: &'static str,
    cut: Cut,
    closest: Option<&'static str>,
    why: &'static str,
) -> Alias {
    Alias {
        tool,
        name,
        cut,
        reading: Reading::NotComputed { closest, why },
        convention: "",
    }
}

const GAIN_G: &str = "gain g, as ir_measures and trec_eval";
const SAME: &str = "the same definition";
const RBP_GAIN: &str = "binary gain, a relevant doc gains 1; trec_eval scales graded gains into \
[0, 1], the same on binary qrels";
const JUDGED_NEGATIVE: &str = "a negative grade, pooled but not judged, counts as unjudged, as in \
trec_eval's unj (ir_measures counts it judged)";
const SET_P_WHY: &str = "set precision reads the whole retrieved list, precision@K its top K";

/// Every alias. The trec_eval rows that read as a ragate metric come in trec_eval's output order
/// (`--format trec_eval` prints them so).
pub const ALIASES: [Alias; 30] = [
    // trec_eval, in the order trec_eval prints its measures.
    alias(Tool::TrecEval, "map", Cut::None, "map", SAME),
    alias(Tool::TrecEval, "Rprec", Cut::None, "r_precision", SAME),
    // `bpref` is ragate's own name too: this row only names the output.
    alias(Tool::TrecEval, "bpref", Cut::None, "bpref", SAME),
    alias(Tool::TrecEval, "recip_rank", Cut::None, "mrr", SAME),
    alias(Tool::TrecEval, "P", Cut::Required, "precision", SAME),
    alias(Tool::TrecEval, "recall", Cut::Required, "recall", SAME),
    // `ndcg` itself is ragate's own name (gain 2^g - 1): this row only names the output.
    alias(Tool::TrecEval, "ndcg", Cut::None, "ndcg_linear", GAIN_G),
    alias(
        Tool::TrecEval,
        "ndcg_cut",
        Cut::Required,
        "ndcg_linear",
        GAIN_G,
    ),
    alias(Tool::TrecEval, "map_cut", Cut::Required, "map", SAME),
    alias(Tool::TrecEval, "success", Cut::Required, "hit_rate", SAME),
    alias(Tool::TrecEval, "rbp", Cut::None, "rbp@0.9", RBP_GAIN),
    not_computed(
        Tool::TrecEval,
        "rbp_resid",
        Cut::None,
        Some("rbp_residual@0.9"),
        "trec_eval 10.0's rbp_resid leaves out p^n, the weight of the ranks below the ranking, \
         when no retrieved doc is unjudged (it says 0 where RBP could still grow)",
    ),
    not_computed(
        Tool::TrecEval,
        "unj",
        Cut::Required,
        Some("judged@K"),
        "unj_k is the share of the top k left unjudged, out of k even when fewer docs were \
         retrieved: 1 - judged@k when at least k were",
    ),
    not_computed(
        Tool::TrecEval,
        "gm_map",
        Cut::None,
        Some("map"),
        "gm_map is the geometric mean of the queries' average precision, map the arithmetic mean",
    ),
    not_computed(
        Tool::TrecEval,
        "set_P",
        Cut::None,
        Some("precision@K"),
        SET_P_WHY,
    ),
    // ir_measures.
    alias(
        Tool::IrMeasures,
        "nDCG",
        Cut::Optional,
        "ndcg_linear",
        GAIN_G,
    ),
    alias(
        Tool::IrMeasures,
        "NDCG",
        Cut::Optional,
        "ndcg_linear",
        GAIN_G,
    ),
    alias(Tool::IrMeasures, "P", Cut::Required, "precision", SAME),
    alias(Tool::IrMeasures, "R", Cut::Required, "recall", SAME),
    alias(Tool::IrMeasures, "AP", Cut::Optional, "map", SAME),
    alias(Tool::IrMeasures, "RR", Cut::Optional, "mrr", SAME),
    alias(Tool::IrMeasures, "MRR", Cut::Optional, "mrr", SAME),
    alias(Tool::IrMeasures, "Success", Cut::Required, "hit_rate", SAME),
    alias(Tool::IrMeasures, "Rprec", Cut::None, "r_precision", SAME),
    alias(
        Tool::IrMeasures,
        "Judged",
        Cut::Required,
        "judged",
        JUDGED_NEGATIVE,
    ),
    alias(Tool::IrMeasures, "Bpref", Cut::None, "bpref", SAME),
    alias(Tool::IrMeasures, "RBP", Cut::None, "rbp@0.8", RBP_GAIN),
    not_computed(
        Tool::IrMeasures,
        "SetP",
        Cut::None,
        Some("precision@K"),
        SET_P_WHY,
    ),
    not_computed(
        Tool::IrMeasures,
        "ERR",
        Cut::Optional,
        Some("ndcg@K"),
        "ERR discounts by the chance that a higher doc satisfied the user, nDCG by log2(rank + 1)",
    ),
    not_computed(
        Tool::IrMeasures,
        "infAP",
        Cut::None,
        Some("map"),
        "infAP skips pooled-but-unjudged docs (grade -1) and infers average precision from the \
         judged ones, while map counts every unjudged doc as non-relevant",
    ),
];

/// ir_measures' `RBP(p=0.95)`: its `RBP` with the persistence given, and that metric.
fn ir_measures_rbp(text: &str) -> Option<(&'static Alias, RetrievalMetric)> {
    let persistence = text.strip_prefix("RBP(p=")?.strip_suffix(')')?;
    let alias = ALIASES
        .iter()
        .find(|alias| alias.tool == Tool::IrMeasures && alias.name == "RBP")?;
    Some((
        alias,
        RetrievalMetric::Rbp(Persistence::parse(persistence)?),
    ))
}

/// The alias `text` spells, with its cut-off: `nDCG@10`, `ndcg_cut.10`, `RR`.
pub fn lookup(text: &str) -> Option<(&'static Alias, Option<usize>)> {
    if let Some((alias, _)) = ir_measures_rbp(text) {
        return Some((alias, None));
    }
    ALIASES.iter().find_map(|alias| {
        if text == alias.name {
            return (alias.cut != Cut::Required).then_some((alias, None));
        }
        let rest = text.strip_prefix(alias.name)?;
        let mut chars = rest.chars();
        let separator = chars.next()?;
        let cut: usize = chars.as_str().parse().ok().filter(|&k| k > 0)?;
        let digits_only = chars.as_str().bytes().all(|b| b.is_ascii_digit());
        (alias.cut != Cut::None && digits_only && alias.tool.separates_with(separator))
            .then_some((alias, Some(cut)))
    })
}

/// The ragate metric `text` reads as when it is an alias of one, `Some(None)` when it names a
/// measure ragate does not compute ([`not_computed_reason`] says why), None when it is no alias.
pub(crate) fn resolve(text: &str) -> Option<Option<RetrievalMetric>> {
    if let Some((_, metric)) = ir_measures_rbp(text) {
        return Some(Some(metric));
    }
    let (alias, cut) = lookup(text)?;
    Some(match alias.reading {
        Reading::Same(ours) => ours_with_cut(ours, cut),
        Reading::NotComputed { .. } => None,
    })
}

fn ours_with_cut(ours: &str, cut: Option<usize>) -> Option<RetrievalMetric> {
    match cut {
        Some(k) => format!("{ours}@{k}").parse().ok(),
        None => ours.parse().ok(),
    }
}

/// Why `text` is not a metric, when it is another tool's name for a measure ragate does not
/// compute: `trec_eval's bpref is not computed by ragate: the closest metric is map, ...`.
pub(crate) fn not_computed_reason(text: &str) -> Option<String> {
    let (alias, _) = lookup(text)?;
    let Reading::NotComputed { closest, why } = alias.reading else {
        return None;
    };
    let tool = alias.tool.possessive();
    Some(match closest {
        Some(closest) => format!(
            "{tool} {} has no ragate metric; the closest is `{closest}`, which is not the same: \
             {why}",
            alias.name
        ),
        None => format!("{tool} {} has no ragate metric: {why}", alias.name),
    })
}

/// `nDCG@10 is read as ndcg_linear@10 (gain g, as ir_measures and trec_eval)` when `text` is an
/// alias rather than ragate's own name of its metric; None for ragate's names and non-metrics.
pub fn note(text: &str) -> Option<String> {
    if text.parse::<RetrievalMetric>().is_ok() {
        return None;
    }
    let (alias, _) = lookup(text)?;
    let metric = resolve(text)??;
    let convention = match alias.convention {
        SAME => format!("{} name, the same definition", alias.tool.possessive()),
        convention => convention.to_string(),
    };
    Some(format!("{text} is read as {metric} ({convention})"))
}

/// The names [`crate::suggest`] may propose beside ragate's own, as `(name, separators)`: the
/// aliases of ragate metrics (not the measures ragate does not compute).
pub(crate) fn suggestable() -> impl Iterator<Item = &'static Alias> {
    ALIASES
        .iter()
        .filter(|alias| matches!(alias.reading, Reading::Same(_)))
}

/// trec_eval's name of `metric` (`P_5`, `ndcg_cut_10`, `recip_rank`, `ndcg` for `ndcg_linear`)
/// and its place in trec_eval's output order; None when trec_eval has no such measure.
pub fn trec_eval_name(retrieval: RetrievalMetric) -> Option<(usize, String)> {
    let cut = retrieval.cutoff();
    ALIASES
        .iter()
        .filter(|alias| alias.tool == Tool::TrecEval)
        .enumerate()
        .find_map(|(order, alias)| {
            let Reading::Same(ours) = alias.reading else {
                return None;
            };
            let fits = match (alias.cut, cut) {
                (Cut::None, None) | (Cut::Optional, _) | (Cut::Required, Some(_)) => true,
                (Cut::None, Some(_)) | (Cut::Required, None) => false,
            };
            (fits && ours_with_cut(ours, cut) == Some(retrieval)).then(|| {
                let name = match cut {
                    Some(k) => format!("{}_{k}", alias.name),
                    None => alias.name.to_string(),
                };
                (order, name)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::metric::Metric;

    fn reads_as(text: &str) -> String {
        text.parse::<Metric>()
            .map(|m| m.to_string())
            .unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn the_brief_s_aliases_read_as_the_metric_of_the_same_convention() {
        for (alias, ours) in [
            ("nDCG@10", "ndcg_linear@10"),
            ("nDCG", "ndcg_linear"),
            ("P@5", "precision@5"),
            ("R@100", "recall@100"),
            ("AP", "map"),
            ("AP@10", "map@10"),
            ("RR", "mrr"),
            ("RR@10", "mrr@10"),
            ("Success@5", "hit_rate@5"),
            ("Rprec", "r_precision"),
            ("ndcg_cut.10", "ndcg_linear@10"),
            ("ndcg_cut_10", "ndcg_linear@10"),
            ("P.5", "precision@5"),
            ("P_5", "precision@5"),
            ("recall.100", "recall@100"),
            ("recall_100", "recall@100"),
            ("recip_rank", "mrr"),
            ("map", "map"),
            ("map_cut.10", "map@10"),
            ("map_cut_10", "map@10"),
            ("success.5", "hit_rate@5"),
            ("success_5", "hit_rate@5"),
            ("bpref", "bpref"),
            ("Bpref", "bpref"),
            ("Judged@10", "judged@10"),
            ("rbp", "rbp@0.9"),
            ("RBP", "rbp@0.8"),
            ("RBP(p=0.95)", "rbp@0.95"),
        ] {
            assert_eq!(reads_as(alias), ours, "{alias}");
        }
        // ragate's own `ndcg` keeps its gain 2^g - 1.
        assert_eq!(reads_as("ndcg"), "ndcg");
        assert_eq!(
            "ndcg".parse::<Metric>(),
            Ok(Metric::Retrieval(RetrievalMetric::Ndcg(None)))
        );
    }

    #[test]
    fn a_cut_off_is_taken_only_where_the_tool_writes_one() {
        for bad in [
            "P",
            "P_",
            "P_0",
            "P@x",
            "P_5x",
            "Rprec@5",
            "recip_rank_5",
            "ndcg_cut",
            "R",
            "P@-1",
            "nDCG_10",
            "P#5",
            "map_cut@10",
        ] {
            assert!(bad.parse::<Metric>().is_err(), "{bad}");
        }
    }

    #[test]
    fn measures_ragate_does_not_compute_say_the_closest_metric_and_why() {
        let message = |name: &str| name.parse::<Metric>().unwrap_err().to_string();
        let unj = message("unj_10");
        assert!(
            unj.starts_with("unknown metric `unj_10`: trec_eval's unj has no ragate metric; the closest is `judged@K`, which is not the same: unj_k is the share"),
            "{unj}"
        );
        assert!(message("rbp_resid").contains("the closest is `rbp_residual@0.9`"));
        for bad in [
            "RBP(p=1)",
            "RBP(p=0.8",
            "RBP(0.8)",
            "rbp@1",
            "rbp@0",
            "rbp_residual",
        ] {
            assert!(bad.parse::<Metric>().is_err(), "{bad}");
        }
        assert!(message("set_P").contains("the closest is `precision@K`"));
        assert!(message("ERR@10").contains("the closest is `ndcg@K`"));
    }

    #[test]
    fn notes_name_the_alias_and_the_convention_once_and_only_for_aliases() {
        assert_eq!(
            note("nDCG@10").as_deref(),
            Some("nDCG@10 is read as ndcg_linear@10 (gain g, as ir_measures and trec_eval)")
        );
        assert_eq!(
            note("ndcg_cut.10").as_deref(),
            Some("ndcg_cut.10 is read as ndcg_linear@10 (gain g, as ir_measures and trec_eval)")
        );
        assert_eq!(
            note("P_5").as_deref(),
            Some("P_5 is read as precision@5 (trec_eval's name, the same definition)")
        );
        for own in [
            "ndcg",
            "ndcg@10",
            "map",
            "map@10",
            "recall@5",
            "faithfulness",
        ] {
            assert_eq!(note(own), None, "{own}");
        }
        assert_eq!(
            note("RBP(p=0.95)").as_deref(),
            Some(
                "RBP(p=0.95) is read as rbp@0.95 (binary gain, a relevant doc gains 1; trec_eval \
                 scales graded gains into [0, 1], the same on binary qrels)"
            )
        );
        assert_eq!(note("bpref"), None);
        assert_eq!(note("nonsense"), None);
    }

    #[test]
    fn trec_eval_names_round_trip_and_follow_trec_eval_s_order() {
        let named = |name: &str| trec_eval_name(name.parse::<Metric>().ok()?.as_retrieval()?);
        for (ours, theirs) in [
            ("precision@5", "P_5"),
            ("recall@1000", "recall_1000"),
            ("ndcg_linear@10", "ndcg_cut_10"),
            ("ndcg_linear", "ndcg"),
            ("map", "map"),
            ("map@10", "map_cut_10"),
            ("mrr", "recip_rank"),
            ("r_precision", "Rprec"),
            ("hit_rate@5", "success_5"),
            ("bpref", "bpref"),
            ("rbp@0.9", "rbp"),
        ] {
            let (_, name) = named(ours).unwrap_or_else(|| panic!("{ours}"));
            assert_eq!(name, theirs, "{ours}");
            if theirs != "ndcg" {
                assert_eq!(reads_as(theirs), ours, "{theirs}");
            }
        }
        for none in [
            "ndcg@10",
            "ndcg",
            "mrr@10",
            "faithfulness",
            "context_precision@5",
            "rbp@0.8",
            "rbp_residual@0.9",
            "judged@10",
        ] {
            assert_eq!(named(none), None, "{none}");
        }
        let order = |name: &str| named(name).unwrap().0;
        assert!(order("map") < order("r_precision"));
        assert!(order("r_precision") < order("bpref"));
        assert!(order("bpref") < order("mrr"));
        assert!(order("mrr") < order("precision@5"));
        assert!(order("precision@5") < order("recall@5"));
        assert!(order("recall@5") < order("ndcg_linear"));
        assert!(order("ndcg_linear") < order("ndcg_linear@5"));
        assert!(order("ndcg_linear@5") < order("map@5"));
        assert!(order("map@5") < order("hit_rate@1"));
        assert!(order("hit_rate@1") < order("rbp@0.9"));
    }

    #[test]
    fn no_alias_shadows_a_ragate_name_but_trec_eval_s_ndcg_map_and_bpref() {
        for alias in &ALIASES {
            let ragate_own = alias.name.parse::<RetrievalMetric>().is_ok();
            assert_eq!(
                ragate_own,
                matches!(alias.name, "ndcg" | "map" | "bpref"),
                "{}",
                alias.name
            );
        }
    }
}

#[cfg(test)]
mod documented;
