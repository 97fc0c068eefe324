//! Output of `ragate eval`: an aligned table, one JSON object, trec_eval-style TSV rows, or
//! trec_eval's own lines ([`crate::report::trec_eval_format`]).

use serde_json::{Map, Value, json};

use crate::evaluate::Evaluation;
use crate::report::{columns, trec_eval_format};

/// How `ragate eval` prints its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// Aligned columns for people.
    Table,
    /// One JSON object.
    Json,
    /// `metric<TAB>qid|all<TAB>value` rows, trec_eval style, for diffs.
    Tsv,
    /// trec_eval's own lines: its measure names, its order, 4 decimals.
    TrecEval,
}

/// `ragate eval`'s output of `evaluation` in `format`, with a row per query when `per_query`.
pub fn render(evaluation: &Evaluation, format: OutputFormat, per_query: bool) -> String {
    match format {
        OutputFormat::Table => table(evaluation, per_query),
        OutputFormat::Json => json(evaluation, per_query),
        OutputFormat::Tsv => tsv(evaluation, per_query),
        OutputFormat::TrecEval => trec_eval_format::render(evaluation, per_query),
    }
}

fn counts(evaluation: &Evaluation) -> [(&'static str, usize); 4] {
    [
        ("queries", evaluation.per_query.len()),
        ("excluded_no_relevant", evaluation.excluded_no_relevant),
        ("missing_from_run", evaluation.missing_from_run),
        (
            "run_queries_not_in_qrels",
            evaluation.run_queries_not_in_qrels,
        ),
    ]
}

fn json(evaluation: &Evaluation, per_query: bool) -> String {
    let mut object = Map::new();
    for (name, count) in counts(evaluation) {
        object.insert(name.to_string(), json!(count));
    }
    let means: Map<String, Value> = evaluation
        .metrics
        .iter()
        .zip(&evaluation.means)
        .map(|(metric, mean)| (metric.to_string(), json!(mean)))
        .collect();
    object.insert("metrics".to_string(), Value::Object(means));
    // Answer metrics may leave queries out (no reference, excluded empty answers): say how many
    // each metric averaged over, when that differs from `queries`.
    if evaluation
        .counts
        .iter()
        .any(|&n| n != evaluation.per_query.len())
    {
        let counts: Map<String, Value> = evaluation
            .metrics
            .iter()
            .zip(&evaluation.counts)
            .map(|(metric, n)| (metric.to_string(), json!(n)))
            .collect();
        object.insert("metric_queries".to_string(), Value::Object(counts));
    }
    if per_query {
        let queries: Map<String, Value> = evaluation
            .per_query
            .iter()
            .map(|query| {
                let values: Map<String, Value> = evaluation
                    .metrics
                    .iter()
                    .zip(&query.values)
                    .filter_map(|(metric, value)| Some((metric.to_string(), json!((*value)?))))
                    .collect();
                (query.qid.clone(), Value::Object(values))
            })
            .collect();
        object.insert("per_query".to_string(), Value::Object(queries));
    }
    let mut text = crate::json_text::compact(&Value::Object(object));
    text.push('\n');
    text
}

fn tsv(evaluation: &Evaluation, per_query: bool) -> String {
    let mut out = String::new();
    if per_query {
        for query in &evaluation.per_query {
            for (metric, value) in evaluation.metrics.iter().zip(&query.values) {
                if let Some(value) = value {
                    out.push_str(&format!("{metric}\t{}\t{value}\n", query.qid));
                }
            }
        }
    }
    for (metric, mean) in evaluation.metrics.iter().zip(&evaluation.means) {
        out.push_str(&format!("{metric}\tall\t{mean}\n"));
    }
    for (name, count) in counts(evaluation) {
        out.push_str(&format!("{name}\tall\t{count}\n"));
    }
    out
}

fn table(evaluation: &Evaluation, per_query: bool) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    if per_query {
        let mut header = vec!["qid".to_string()];
        header.extend(evaluation.metrics.iter().map(ToString::to_string));
        rows.push(header);
        for query in &evaluation.per_query {
            let mut row = vec![query.qid.clone()];
            row.extend(
                query
                    .values
                    .iter()
                    .map(|v| v.map_or("–".to_string(), |v| format!("{v:.4}"))),
            );
            rows.push(row);
        }
        let mut all = vec!["all".to_string()];
        all.extend(evaluation.means.iter().map(|v| format!("{v:.4}")));
        rows.push(all);
    } else {
        rows.push(vec!["metric".to_string(), "mean".to_string()]);
        for (metric, mean) in evaluation.metrics.iter().zip(&evaluation.means) {
            rows.push(vec![metric.to_string(), format!("{mean:.4}")]);
        }
    }
    let mut out = columns::table(&rows, 1);
    out.push_str(&format!(
        "\n{} queries evaluated ({} missing from the run, scored 0); {} excluded (no relevant doc); \
         {} run queries not in the qrels\n",
        evaluation.per_query.len(),
        evaluation.missing_from_run,
        evaluation.excluded_no_relevant,
        evaluation.run_queries_not_in_qrels
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::QueryScores;
    use crate::metrics::retrieval::RetrievalMetric;

    fn sample() -> Evaluation {
        Evaluation {
            metrics: vec![
                RetrievalMetric::Precision(5).into(),
                RetrievalMetric::Mrr(None).into(),
            ],
            per_query: vec![
                QueryScores {
                    qid: "q1".into(),
                    values: vec![Some(0.4), Some(0.5)],
                    ranked: vec![],
                    answer: None,
                    claims: vec![],
                    operational: Default::default(),
                    relevance: None,
                },
                QueryScores {
                    qid: "q10".into(),
                    values: vec![Some(0.0), Some(0.0)],
                    ranked: vec![],
                    answer: None,
                    claims: vec![],
                    operational: Default::default(),
                    relevance: None,
                },
            ],
            means: vec![0.2, 0.25],
            counts: vec![2, 2],
            empty_answers_excluded: 0,
            judge_usage: Default::default(),
            embeddings: Vec::new(),
            excluded_no_relevant: 1,
            missing_from_run: 1,
            run_queries_not_in_qrels: 2,
            warnings: vec![],
        }
    }

    #[test]
    fn json_has_counts_means_and_per_query_in_order() {
        let text = render(&sample(), OutputFormat::Json, true);
        assert_eq!(
            text,
            "{\"queries\":2,\"excluded_no_relevant\":1,\"missing_from_run\":1,\"run_queries_not_in_qrels\":2,\
             \"metrics\":{\"precision@5\":0.2,\"mrr\":0.25},\
             \"per_query\":{\"q1\":{\"precision@5\":0.4,\"mrr\":0.5},\"q10\":{\"precision@5\":0.0,\"mrr\":0.0}}}\n"
        );
        assert!(!render(&sample(), OutputFormat::Json, false).contains("per_query"));
    }

    #[test]
    fn tsv_rows_per_value() {
        let text = render(&sample(), OutputFormat::Tsv, true);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "precision@5\tq1\t0.4");
        assert_eq!(lines[3], "mrr\tq10\t0");
        assert_eq!(lines[4], "precision@5\tall\t0.2");
        assert_eq!(lines[6], "queries\tall\t2");
    }

    #[test]
    fn table_is_aligned() {
        let text = render(&sample(), OutputFormat::Table, true);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "qid  precision@5     mrr");
        assert_eq!(lines[1], "q1        0.4000  0.5000");
        assert_eq!(lines[3], "all       0.2000  0.2500");
    }
}
