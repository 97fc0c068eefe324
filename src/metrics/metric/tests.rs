use super::*;

#[test]
fn names_round_trip_and_directions() {
    for name in [
        "recall@5",
        "mrr",
        "faithfulness",
        "faithfulness_graded",
        "answer_relevance",
        "context_precision@5",
        "answer_contains",
        "answer_f1",
        "answer_exact",
        "answer_length",
        "empty_answers",
        "latency_ms",
        "tokens",
        "cost",
    ] {
        assert_eq!(name.parse::<Metric>().unwrap().to_string(), name);
    }
    assert_eq!(
        Metric::Answer(AnswerMetric::Length).direction(),
        Direction::LowerIsBetter
    );
    assert_eq!(
        Metric::Answer(AnswerMetric::Empty).direction(),
        Direction::LowerIsBetter
    );
    assert!(Metric::Answer(AnswerMetric::Empty).needs_answer());
    assert_eq!(Metric::Answer(AnswerMetric::Empty).range_width(), Some(1.0));
    assert_eq!(
        Metric::Operational(OperationalMetric::LatencyMs).direction(),
        Direction::LowerIsBetter
    );
    assert!(
        Metric::Operational(OperationalMetric::Tokens).is_operational()
            && !Metric::Operational(OperationalMetric::Tokens).needs_answer()
    );
    assert_eq!(
        Metric::Judged(JudgedMetric::Faithfulness).direction(),
        Direction::HigherIsBetter
    );
    let err = "faithfulnes".parse::<Metric>().unwrap_err().to_string();
    assert!(
        err.starts_with("unknown metric `faithfulnes` (did you mean `faithfulness`?): expected one of precision@K"),
        "{err}"
    );
    assert!(err.ends_with("answer_exact, answer_length, empty_answers, latency_ms, tokens, cost; in rules also faithfulness_ppi, faithfulness_graded_ppi, answer_relevance_ppi"), "{err}");
    assert!("context_precision@0".parse::<Metric>().is_err());
}

#[test]
fn every_named_metric_reads_back_from_its_name_and_names_are_unique() {
    let mut seen = std::collections::BTreeSet::new();
    for (name, metric) in NAMED {
        assert!(seen.insert(name), "{name} twice");
        assert_eq!(name.parse::<Metric>(), Ok(metric), "{name}");
        assert_eq!(metric.to_string(), name);
        if let Metric::Judged(judged) = metric {
            let ppi = format!("{name}_ppi");
            assert_eq!(ppi.parse::<Metric>(), Ok(Metric::Ppi(judged)));
            assert_eq!(Metric::Ppi(judged).to_string(), ppi);
            assert_eq!(judged.base(), metric);
        }
    }
    // A family's own parser keeps its names: no named metric shadows a retrieval one.
    for (name, _) in NAMED {
        assert!(name.parse::<RetrievalMetric>().is_err(), "{name}");
    }
    assert_eq!(
        Metric::Answer(AnswerMetric::Length).answer_level(),
        Some(AnswerLevel::Answer(AnswerMetric::Length))
    );
    assert_eq!(
        Metric::Operational(OperationalMetric::Cost).answer_level(),
        None
    );
}

#[test]
fn the_suggested_names_are_the_valid_names() {
    let listed: std::collections::BTreeSet<String> = valid_names()
        .replace("; in rules also", ",")
        .replace(
            " (K a positive integer; P a persistence below 1 such as 0.8)",
            "",
        )
        .split(", ")
        .map(|name| {
            let name = name.trim();
            name.strip_suffix("@K")
                .or_else(|| name.strip_suffix("@P"))
                .unwrap_or(name)
                .to_string()
        })
        .collect();
    let suggested: std::collections::BTreeSet<String> = base_names().into_iter().collect();
    assert_eq!(listed, suggested);
}

#[test]
fn an_unknown_metric_name_gets_the_closest_name_with_its_cut_off() {
    let message = |name: &str| name.parse::<Metric>().unwrap_err().to_string();
    assert!(
        message("recal@5")
            .starts_with("unknown metric `recal@5` (did you mean `recall@5`?): expected one of "),
        "{}",
        message("recal@5")
    );
    assert!(message("faithfullness").contains("(did you mean `faithfulness`?)"));
    let zero = message("recall@0");
    assert!(
        zero.starts_with(
            "unknown metric `recall@0` (`@0` is no cut-off: expected a whole number of at least 1)"
        ),
        "{zero}"
    );
    assert!(message("ndcg_lineer@10").contains("(did you mean `ndcg_linear@10`?)"));
    assert!(!message("zzzzzzzzzzzz").contains("did you mean"));
    // trec_eval's and ir_measures' names are read as the metric (metrics::aliases); their
    // misspellings get the closest alias, written as the user writes it.
    for (trec_eval, ours) in [
        ("P_5", "precision@5"),
        ("P@10", "precision@10"),
        ("recall.1000", "recall@1000"),
        ("ndcg_cut_10", "ndcg_linear@10"),
        ("map_cut.100", "map@100"),
        ("success_1", "hit_rate@1"),
        ("recip_rank", "mrr"),
        ("Rprec", "r_precision"),
    ] {
        assert_eq!(
            trec_eval.parse::<Metric>().map(|m| m.to_string()),
            Ok(ours.to_string())
        );
    }
    for (misspelt, meant) in [
        ("ndcg_cutt_10", "ndcg_cut_10"),
        ("ndcg_cut.10x", "ndcg_cut.10x"),
        ("recip_rnk", "recip_rank"),
        ("nDGC@10", "nDCG@10"),
        ("Sucess@5", "Success@5"),
        ("rr", "RR"),
        ("p@5", "P@5"),
        ("succes.5", "success.5"),
        ("Rprc", "Rprec"),
    ] {
        let expected = format!("(did you mean `{meant}`?)");
        if misspelt == meant {
            assert!(!message(misspelt).contains("did you mean"), "{misspelt}");
        } else {
            assert!(
                message(misspelt).contains(&expected),
                "{misspelt}: {}",
                message(misspelt)
            );
        }
    }
    assert!(
        !message("x@5").contains("did you mean"),
        "{}",
        message("x@5")
    );
    assert!(
        !message("P_x").contains("did you mean"),
        "{}",
        message("P_x")
    );
}

#[test]
fn value_ranges_bound_scores_to_the_unit_interval_and_costs_below_by_zero() {
    for name in [
        "recall@5",
        "ndcg@10",
        "mrr",
        "faithfulness",
        "context_precision@3",
    ] {
        let range = name.parse::<Metric>().unwrap().value_range().unwrap();
        assert_eq!((*range.start(), *range.end()), (0.0, 1.0), "{name}");
    }
    for name in ["latency_ms", "tokens", "cost", "answer_length"] {
        let range = name.parse::<Metric>().unwrap().value_range().unwrap();
        assert!(range.contains(&1e12) && !range.contains(&-1.0), "{name}");
        assert_eq!(
            name.parse::<Metric>().unwrap().range_width(),
            None,
            "{name}"
        );
    }
    assert_eq!(Metric::Ppi(JudgedMetric::Faithfulness).value_range(), None);
    assert_eq!(
        "ndcg@10".parse::<Metric>().unwrap().range_width(),
        Some(1.0)
    );
}
