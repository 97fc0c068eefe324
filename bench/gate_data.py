#!/usr/bin/env python3
"""Writes a seeded gate workload: a 2,000-query tier with four slice values, a config with five
metrics and five rules, and two native runs (baseline and candidate), into DIR.

usage: python3 bench/gate_data.py DIR [--queries 2000] [--seed 7] [--slice-values N]
                                   [--answer-chars N]

--slice-values N gives the queries N distinct `class` values (v00000, v00001, ...) instead of the
four named classes: the high-cardinality case (a slice field such as a document id).

--answer-chars N gives every query an answer of about N characters (words of the seeded
vocabulary) and gates answer_length too: results, baselines and reports then carry text, as a
generator's do.
"""
import argparse, json, os, random

parser = argparse.ArgumentParser()
parser.add_argument("dir")
parser.add_argument("--queries", type=int, default=2000)
parser.add_argument("--seed", type=int, default=7)
parser.add_argument("--slice-values", type=int, default=0)
parser.add_argument("--answer-chars", type=int, default=0)
args = parser.parse_args()
rng = random.Random(args.seed)
os.makedirs(args.dir, exist_ok=True)
classes = (["literal", "paraphrased", "multi-topic", "numeric"] if args.slice_values <= 0
           else [f"v{k:05d}" for k in range(args.slice_values)])

with open(os.path.join(args.dir, "qrels.jsonl"), "w") as f:
    for i in range(args.queries):
        gold = [f"q{i}-d{j}" for j in range(rng.randint(1, 4))]
        grades = {d: rng.randint(1, 3) for d in gold}
        f.write(json.dumps({"qid": f"q{i:05d}", "query": f"question {i}", "gold_doc_ids": gold,
                            "graded_relevance": grades, "class": classes[i % len(classes)]}) + "\n")

VOCABULARY = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "su", "ta") for b in ("rin", "vel", "dos", "mar", "pet", "xul")]


def write_run(name, shift):
    r = random.Random(args.seed + shift)
    with open(os.path.join(args.dir, name), "w") as f:
        for i in range(args.queries):
            docs = [f"filler-{k}" for k in range(30)]
            for j in range(4):
                docs.insert(r.randint(0, 12), f"q{i}-d{j}")
            line = {"qid": f"q{i:05d}", "retrieved": [{"doc_id": d} for d in docs[:30]]}
            if args.answer_chars > 0:
                words, size = [], 0
                while size < args.answer_chars:
                    word = VOCABULARY[r.randrange(len(VOCABULARY))]
                    words.append(word)
                    size += len(word) + 1
                line["answer"] = " ".join(words) + "."
            f.write(json.dumps(line) + "\n")

write_run("base.jsonl", 0)
write_run("candidate.jsonl", 1)
with open(os.path.join(args.dir, "eval-config.yaml"), "w") as f:
    answer_metric = ", answer_length" if args.answer_chars > 0 else ""
    answer_rule = ("\n    - { metric: answer_length, max_increase_pct: 20 }"
                   if args.answer_chars > 0 else "")
    f.write(f"""version: 1
metrics: [precision@5, recall@5, recall@10, mrr, ndcg@10{answer_metric}]
slices: [class]
tiers:
  deep: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  rules:
    - {{ metric: precision@5, max_drop: 0.02 }}
    - {{ metric: recall@5, max_drop: 0.02 }}
    - {{ metric: recall@10, max_drop: 0.02 }}
    - {{ metric: mrr, max_drop: 0.02 }}
    - {{ metric: ndcg@10, max_drop_pct: 5 }}{answer_rule}
""")
