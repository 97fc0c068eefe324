#!/usr/bin/env python3
"""Baseline for bench/run.sh: evaluate a TREC run with ranx as a typical user would.

usage: python3 bench/ranx_bench.py QRELS RUN

Loads both files with ranx's own loaders (Qrels.from_file / Run.from_file with kind="trec"),
evaluates precision@5, precision@10, recall@5, recall@100, mrr and ndcg@10 with
ranx.evaluate, and prints the mean of each metric (one "metric<TAB>all<TAB>value" line each,
like trec_eval), plus the time of each phase on stderr.

The run is passed through Run.make_comparable(qrels) so that qids found in only one of the
two files do not abort the evaluation (ranx asserts equal query sets otherwise): queries missing from the run score
0, run queries absent from the qrels are dropped. On the generated benchmark data both files
have the same qids, so this changes nothing there.

ranx compiles its metrics with numba on first use and caches the machine code on disk, so
the very first call on a machine is slower; bench/run.sh makes one untimed call first.

Install: pip install ranx
"""

import sys
import time

from ranx import Qrels, Run, evaluate

METRICS = ["precision@5", "precision@10", "recall@5", "recall@100", "mrr", "ndcg@10"]


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    qrels_path, run_path = argv[1], argv[2]

    t0 = time.perf_counter()
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    t1 = time.perf_counter()

    run = run.make_comparable(qrels)
    means = evaluate(qrels, run, METRICS)
    t2 = time.perf_counter()

    for name in METRICS:
        print(f"{name:<12}\tall\t{means[name]:.4f}")
    print(f"{'num_q':<12}\tall\t{len(run)}")
    print(
        f"ranx: load {t1 - t0:.2f}s, evaluate {t2 - t1:.2f}s, "
        f"{len(qrels)} qrels queries, {len(run)} run queries",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
