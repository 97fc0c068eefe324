#!/usr/bin/env bash
# Repeated runs of a stochastic pipeline on NFCorpus (all 3,210 judged queries): the example
# pipeline's `bm25` variant with seeded score noise (`--noise 0.05 --seed S`, as an approximate
# index or a sampled reranker varies run to run), per-query values of five metrics per run. Any two
# runs form a real A/A pair (same system, no change); their per-query deltas are the sparse, skewed
# nulls the statistics simulations draw from (src/stats, tests/integration/statistics_real.rs,
# docs/statistics.md). Needs ../shared/data (or RAGATE_REAL_DATA=DIR); writes only to OUTDIR.
#
#   bench/nfcorpus_runs.sh OUTDIR [RUNS=200] [SIGMA=0.05]
#
# Output: OUTDIR/<metric>.tsv for recall@5, recall@10, ndcg@10, mrr, precision@5: a header line
# `run` + the qids (tab-separated), then one line per run: its seed and the per-query values.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/nfcorpus_runs.sh OUTDIR [RUNS] [SIGMA]}
runs=${2:-200}
sigma=${3:-0.05}
data=${RAGATE_REAL_DATA:-../shared/data}
cargo build --release --locked --quiet --workspace --bins
bin=$(realpath "${CARGO_TARGET_DIR:-target}/release")
corpus=$(realpath "$data/nfcorpus/corpus.jsonl")
mkdir -p "$out/runs"
out=$(realpath "$out")
"$bin/ragate" convert --queries "$data/nfcorpus/queries.jsonl" --qrels "$data/nfcorpus/qrels.tsv" \
    --keep type --out "$out/nf.jsonl"
one_run() {
    # `bash -c` does not inherit `set -e`: without it a pipeline that died part-way left a run
    # whose missing queries scored 0 (seed 23 of the first 120 runs: recall@5 0.049 instead of
    # 0.107-0.111; tests/integration/statistics_real/runs.rs leaves such runs out).
    set -euo pipefail
    local seed=$1
    [[ -s $out/runs/$seed.tsv ]] && return 0
    "$bin/pipeline" --variant bm25 --noise "$sigma" --seed "$seed" --corpus "$corpus" \
        <"$out/nf.jsonl" >"$out/runs/$seed.jsonl"
    "$bin/ragate" eval --qrels "$out/nf.jsonl" --run "$out/runs/$seed.jsonl" --per-query \
        --format tsv -m recall@5 -m recall@10 -m ndcg@10 -m mrr -m precision@5 \
        >"$out/runs/$seed.tmp"
    mv "$out/runs/$seed.tmp" "$out/runs/$seed.tsv"
    rm "$out/runs/$seed.jsonl"
}
export -f one_run
export out bin corpus sigma
seq 1 "$runs" | xargs -P "$(nproc)" -I{} bash -c 'one_run {}'
python3 - "$out" "$runs" <<'PY'
import sys
out, runs = sys.argv[1], int(sys.argv[2])
metrics = ["recall@5", "recall@10", "ndcg@10", "mrr", "precision@5"]
rows = {m: [] for m in metrics}
qids = None
for seed in range(1, runs + 1):
    values = {m: {} for m in metrics}
    for line in open(f"{out}/runs/{seed}.tsv"):
        metric, qid, value = line.rstrip("\n").split("\t")
        if qid != "all":
            values[metric][qid] = value
    if qids is None:
        qids = sorted(values[metrics[0]])
    for m in metrics:
        assert sorted(values[m]) == qids, f"run {seed}: {m} has other queries"
        rows[m].append(str(seed) + "\t" + "\t".join(values[m][q] for q in qids))
for m in metrics:
    with open(f"{out}/{m}.tsv", "w") as f:
        f.write("run\t" + "\t".join(qids) + "\n")
        f.write("\n".join(rows[m]) + "\n")
print(f"wrote {len(metrics)} matrices of {runs} runs x {len(qids)} queries to {out}")
PY
