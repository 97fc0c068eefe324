#!/usr/bin/env python3
"""Baseline for bench/run.sh: evaluate a TREC run with pytrec_eval as a typical user would.

usage: python3 bench/pytrec_eval_bench.py QRELS RUN

Parses both files with pytrec_eval's own helpers (parse_qrel / parse_run: line.split()
into nested dicts), evaluates P_5, P_10, recall_5, recall_100, recip_rank and ndcg_cut_10
with pytrec_eval.RelevanceEvaluator, and prints the mean of each measure over the
evaluated queries (one "measure<TAB>all<TAB>value" line each, like trec_eval), plus the
time of each phase on stderr.

Install: pip install pytrec-eval-terrier
"""

import sys
import time

import pytrec_eval

MEASURES = {"P_5", "P_10", "recall_5", "recall_100", "recip_rank", "ndcg_cut_10"}


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    qrels_path, run_path = argv[1], argv[2]

    t0 = time.perf_counter()
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    t1 = time.perf_counter()

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, MEASURES)
    per_query = evaluator.evaluate(run)
    t2 = time.perf_counter()

    # Result keys use the expanded names (P_5, recall_100, ndcg_cut_10, ...).
    names = sorted(next(iter(per_query.values())).keys()) if per_query else []
    for name in names:
        values = [res[name] for res in per_query.values()]
        mean = pytrec_eval.compute_aggregated_measure(name, values)
        print(f"{name:<12}\tall\t{mean:.4f}")
    print(f"{'num_q':<12}\tall\t{len(per_query)}")
    print(
        f"pytrec_eval: parse {t1 - t0:.2f}s, evaluate {t2 - t1:.2f}s, "
        f"{sum(len(d) for d in run.values())} run lines, {len(qrels)} qrels queries",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
