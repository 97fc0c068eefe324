#!/usr/bin/env python3
"""Writes a seeded gate workload: a 2,000-query tier with four slice values, a config with five
metrics and five rules, and two native runs (baseline and candidate), into DIR.

usage: python3 bench/gate_data.py DIR [--queries 2000] [--seed 7] [--slice-values N]
                                   [--answer-chars N] [--contexts N] [--context-chars N]
                                   [--slice-fields N] [--regress-share F]

--slice-values N gives the queries N distinct `class` values (v00000, v00001, ...) instead of the
four named classes: the high-cardinality case (a slice field such as a document id).

--answer-chars N gives every query an answer of about N characters (sentences of about twelve
words of the seeded vocabulary) and gates answer_length too: results, baselines and reports then
carry text, as a generator's do.

--contexts N (with --answer-chars) gives every query N contexts of about --context-chars
characters (700 by default) and gates faithfulness (the default lexical judge) and
answer_relevance: the answers' claims are then judged and stored, as a RAG pipeline's are.

--slice-fields N (1 to 4) slices by N fields: class, length, topic, source.

--regress-share F makes the candidate the baseline's run with the relevant documents of a share F
of the queries moved below rank 20 (a regression), instead of an independent seeded run.
"""
import argparse, json, os, random

parser = argparse.ArgumentParser()
parser.add_argument("dir")
parser.add_argument("--queries", type=int, default=2000)
parser.add_argument("--seed", type=int, default=7)
parser.add_argument("--slice-values", type=int, default=0)
parser.add_argument("--answer-chars", type=int, default=0)
parser.add_argument("--contexts", type=int, default=0)
parser.add_argument("--context-chars", type=int, default=700)
parser.add_argument("--slice-fields", type=int, default=1, choices=[1, 2, 3, 4])
parser.add_argument("--regress-share", type=float, default=0.0)
args = parser.parse_args()
rng = random.Random(args.seed)
os.makedirs(args.dir, exist_ok=True)
classes = (["literal", "paraphrased", "multi-topic", "numeric"] if args.slice_values <= 0
           else [f"v{k:05d}" for k in range(args.slice_values)])
FIELDS = {"length": ["short", "long"], "topic": ["t1", "t2", "t3", "t4", "t5"],
          "source": ["faq", "manual", "forum"]}
extra_fields = list(FIELDS)[: args.slice_fields - 1]

with open(os.path.join(args.dir, "qrels.jsonl"), "w") as f:
    for i in range(args.queries):
        gold = [f"q{i}-d{j}" for j in range(rng.randint(1, 4))]
        grades = {d: rng.randint(1, 3) for d in gold}
        line = {"qid": f"q{i:05d}", "query": f"question {i}", "gold_doc_ids": gold,
                "graded_relevance": grades, "class": classes[i % len(classes)]}
        for field in extra_fields:
            line[field] = FIELDS[field][rng.randrange(len(FIELDS[field]))]
        f.write(json.dumps(line) + "\n")

VOCABULARY = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "su", "ta") for b in ("rin", "vel", "dos", "mar", "pet", "xul")]


def text_of(r, chars):
    """Sentences of about twelve seeded words, about `chars` characters in all."""
    sentences, size = [], 0
    while size < chars:
        words = [VOCABULARY[r.randrange(len(VOCABULARY))] for _ in range(12)]
        sentence = " ".join(words).capitalize() + "."
        sentences.append(sentence)
        size += len(sentence) + 1
    return " ".join(sentences)


def run_lines(shift):
    r = random.Random(args.seed + shift)
    for i in range(args.queries):
        docs = [f"filler-{k}" for k in range(30)]
        for j in range(4):
            docs.insert(r.randint(0, 12), f"q{i}-d{j}")
        line = {"qid": f"q{i:05d}", "retrieved": [{"doc_id": d} for d in docs[:30]]}
        if args.answer_chars > 0:
            line["answer"] = text_of(r, args.answer_chars)
            if args.contexts > 0:
                line["contexts"] = [text_of(r, args.context_chars) for _ in range(args.contexts)]
        yield line


def regressed(line, r):
    """The line with its relevant documents moved below rank 20."""
    qid = line["qid"]
    relevant = [d for d in line["retrieved"] if d["doc_id"].startswith(f"q{int(qid[1:])}-")]
    others = [d for d in line["retrieved"] if d not in relevant]
    line["retrieved"] = others[:20] + relevant + others[20:]
    return line


def write_run(name, lines):
    with open(os.path.join(args.dir, name), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


write_run("base.jsonl", run_lines(0))
if args.regress_share > 0:
    r = random.Random(args.seed + 2)
    write_run("candidate.jsonl", (regressed(line, r) if r.random() < args.regress_share else line
                                  for line in run_lines(0)))
else:
    write_run("candidate.jsonl", run_lines(1))
with open(os.path.join(args.dir, "eval-config.yaml"), "w") as f:
    answer_metrics = ", answer_length" if args.answer_chars > 0 else ""
    answer_rules = ("\n    - { metric: answer_length, max_increase_pct: 20 }"
                    if args.answer_chars > 0 else "")
    if args.answer_chars > 0 and args.contexts > 0:
        answer_metrics += ", faithfulness, answer_relevance"
        answer_rules += ("\n    - { metric: faithfulness, max_drop: 0.02 }"
                         "\n    - { metric: answer_relevance, max_drop: 0.05 }")
    slices = ", ".join(["class"] + extra_fields)
    f.write(f"""version: 1
metrics: [precision@5, recall@5, recall@10, mrr, ndcg@10{answer_metrics}]
slices: [{slices}]
tiers:
  deep: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  rules:
    - {{ metric: precision@5, max_drop: 0.02 }}
    - {{ metric: recall@5, max_drop: 0.02 }}
    - {{ metric: recall@10, max_drop: 0.02 }}
    - {{ metric: mrr, max_drop: 0.02 }}
    - {{ metric: ndcg@10, max_drop_pct: 5 }}{answer_rules}
""")
