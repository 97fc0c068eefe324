#!/usr/bin/env bash
# Per-query values of two real systems (the example pipeline's `bm25` and `rerank` variants) on the
# NFCorpus test split (323 queries), for the statistics check on real per-query deltas
# (tests/integration/statistics_real.rs, docs/statistics.md). Needs ../shared/data (or
# RAGATE_REAL_DATA=DIR); writes only to OUTDIR.
#
#   bench/nfcorpus_pairs.sh /tmp/nfp
#   RAGATE_PAIRS=/tmp/nfp cargo test --test integration statistics_real_nfcorpus -- --nocapture
#
# `RAGATE_BIN_DIR=target/debug` takes the test build's binaries instead of a release build
# (.ci/real-data-check does so).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/nfcorpus_pairs.sh OUTDIR}
data=${RAGATE_REAL_DATA:-../shared/data}
bin=${RAGATE_BIN_DIR:-}
if [[ -z $bin ]]; then
    cargo build --release --locked --quiet --workspace --bins
    bin=${CARGO_TARGET_DIR:-target}/release
fi
mkdir -p "$out"
"$bin/ragate" convert --queries "$data/nfcorpus/queries.jsonl" \
    --qrels "$data/nfcorpus/qrels.tsv" --split test --keep type --out "$out/nf.jsonl"
for variant in bm25 rerank; do
    "$bin/pipeline" --variant "$variant" --corpus "$data/nfcorpus/corpus.jsonl" \
        <"$out/nf.jsonl" >"$out/$variant.jsonl"
    "$bin/ragate" eval --qrels "$out/nf.jsonl" --run "$out/$variant.jsonl" --per-query \
        --format tsv -m recall@10 -m ndcg@10 -m mrr -m precision@5 >"$out/$variant.tsv"
done
echo "wrote $out/bm25.tsv and $out/rerank.tsv"
