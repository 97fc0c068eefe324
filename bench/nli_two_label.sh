#!/usr/bin/env bash
# The nli judge's throughput with a two-label fact-checker of MiniLM-L6's size (docs/benchmarks.md,
# "A two-label checker of MiniLM-L6's size"): tests/fixtures/nli/make_tiny_model.py --two-label
# --minilm-l6 builds one with random weights (6 layers, hidden 384, 12 heads, FFN 1536, 512
# positions, a 30522-entry WordPiece vocabulary from the words of the labelled claims and their
# contexts); its probabilities mean nothing, its compute is a MiniLM-L6 cross-encoder's. ONNX
# Runtime from the onnxruntime wheel. Everything goes to target/nli-bench-two-label.
#
# bench/nli_two_label.sh [ITEMS=60]   builds the model and ragate (the dev build, --features nli),
#                                     then times `ragate judge-eval` on the first ITEMS labelled
#                                     claims of tests/fixtures/judge_set/example.jsonl at batch sizes
#                                     1 and 8 with /usr/bin/time, 5 runs each, in turn.
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-60}
out=target/nli-bench-two-label
mkdir -p "$out"
[[ -x $out/venv/bin/python ]] || python3 -m venv "$out/venv"
"$out/venv/bin/pip" install --quiet --disable-pip-version-check \
    onnxruntime==1.32.0 onnx==1.23.2 tokenizers==0.23.3 numpy==2.4.6
if [[ ! -f $out/model/model.onnx ]]; then
    "$out/venv/bin/python" -c '
import json, sys
for line in open(sys.argv[1]):
    item = json.loads(line)
    print(item["claim"]); print(item["context"])
' tests/fixtures/judge_set/example.jsonl > "$out/text.txt"
    "$out/venv/bin/python" tests/fixtures/nli/make_tiny_model.py --two-label --minilm-l6 "$out/text.txt" "$out/model"
fi
head -n "$items" tests/fixtures/judge_set/example.jsonl > "$out/items.jsonl"
ORT_DYLIB_PATH=$("$out/venv/bin/python" -c \
    "import onnxruntime, pathlib; print(next(pathlib.Path(onnxruntime.__file__).parent.glob('capi/libonnxruntime.so*')))")
export ORT_DYLIB_PATH
cargo build --locked --features nli --bin ragate
ragate=$(pwd)/${CARGO_TARGET_DIR:-target}/debug/ragate
for batch in 1 8; do
    mkdir -p "$out/batch-$batch"
    cat > "$out/batch-$batch/eval-config.yaml" <<YAML
version: 1
metrics: [{ name: faithfulness, judge: nli }]
cache: { mode: off }
judges:
  nli: { kind: nli, model: ../model, entailment_label: LABEL_1, batch_size: $batch }
tiers:
  smoke: { qrels: q.jsonl, baseline: b.json }
gate:
  rules: [{ metric: faithfulness, max_drop: 0.05 }]
YAML
done
for run in 1 2 3 4 5; do
    for batch in 8 1; do
        (cd "$out/batch-$batch" && /usr/bin/time -f "batch size $batch, run $run: %e s wall, %U s user, %M KiB peak RSS" \
            "$ragate" --quiet judge-eval --items ../items.jsonl --judge nli > /dev/null)
    done
done
