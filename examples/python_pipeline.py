"""A minimal RAG pipeline in Python that speaks ragate's `command` protocol.

ragate starts it once per run, writes one {"qid": ..., "query": ...} line per query to stdin, and
reads one native run line per query from stdout (any order). This one ranks the documents of a
JSONL corpus ({"doc_id", "title", "text"}) by word overlap with the query and answers with the
first sentence of the best document. Replace `retrieve` and `generate` with your own system.

    pipeline:
      command: ["python3", "examples/python_pipeline.py", "corpus/docs.jsonl"]
"""
import json
import re
import sys

WORD = re.compile(r"[a-z0-9]+")


def words(text):
    return set(WORD.findall(text.lower()))


def load_corpus(path):
    with open(path, encoding="utf-8") as corpus:
        return [json.loads(line) for line in corpus if line.strip()]


def retrieve(query, documents, k=10):
    query_words = words(query)
    scored = []
    for doc in documents:
        overlap = len(query_words & words(doc.get("title", "") + " " + doc["text"]))
        if overlap:
            scored.append((-overlap, doc["doc_id"], doc))
    scored.sort(key=lambda entry: entry[:2])
    return [(doc, -negative) for negative, _, doc in scored[:k]]


def generate(ranked):
    if not ranked:
        return ""
    return re.split(r"(?<=[.!?])\s+", ranked[0][0]["text"].strip())[0]


def main():
    documents = load_corpus(sys.argv[1])
    for line_number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            qid, query = request["qid"], request["query"]
        except (ValueError, KeyError) as error:
            sys.exit(f"python_pipeline: stdin line {line_number}: {error}")
        ranked = retrieve(query, documents)
        reply = {
            "qid": qid,
            "retrieved": [{"doc_id": doc["doc_id"], "score": score} for doc, score in ranked],
            "contexts": [doc["text"] for doc, _ in ranked[:3]],
            "answer": generate(ranked),
        }
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
