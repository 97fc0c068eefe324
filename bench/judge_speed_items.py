#!/usr/bin/env python3
"""Writes N judge-eval items (default 20,000) of answers of about 2 KB over the example corpus,
for timing the lexical judges (docs/benchmarks.md, issue 45). Seeded: the same arguments give
the same bytes.

Each answer: sentences of the corpus drawn at random until it passes 2,000 characters, a fifth
of them with `is` turned into `is not`, about a third opened by a meta clause or `However,` and
lowercased after it; its contexts: three documents drawn at random. Labels alternate (the
timing does not read them).

    python3 bench/judge_speed_items.py corpus/docs.jsonl 20000 > /tmp/judge_speed_items.jsonl
"""
import json
import random
import sys


def main():
    rng = random.Random(7)
    with open(sys.argv[1], encoding="utf-8") as f:
        docs = [json.loads(line)["text"] for line in f]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    sentences = [s.strip() + "." for d in docs for s in d.split(". ") if s.strip()]
    openers = ["Based on the provided context, ", "In summary, ", "However, ", "", "", ""]
    for i in range(n):
        contexts = rng.sample(range(len(docs)), 3)
        text, parts = "", []
        while len(text) < 2000:
            sentence = rng.choice(sentences)
            if rng.random() < 0.2:
                sentence = sentence.replace(" is ", " is not ", 1)
            if rng.random() < 0.3:
                sentence = rng.choice(openers) + sentence[0].lower() + sentence[1:]
            parts.append(sentence)
            text = " ".join(parts)
        item = {
            "id": f"a{i}",
            "answer": text,
            "contexts": [docs[c] for c in contexts],
            "label": "supported" if i % 2 else "unsupported",
        }
        print(json.dumps(item))


if __name__ == "__main__":
    main()
