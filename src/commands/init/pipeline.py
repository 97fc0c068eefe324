#!/usr/bin/env python3
"""A stand-in RAG pipeline for ragate (Python 3.8+, standard library only). Replace it with yours.

It ranks the documents of a small JSONL corpus ({"doc_id", "title", "text"}) by the words they
share with the query and answers with the best document's sentence that shares the most words.
Swap `retrieve` and `generate` for your retriever and generator; keep the protocol:

  stdin/stdout (the `command` adapter): ragate starts this program once per run, writes one
  {"qid": ..., "query": ...} line per query to stdin, then closes it, and reads one run line per
  query from stdout, in any order:
    {"qid": "q01", "retrieved": [{"doc_id": "d3", "score": 2.0}, ...],
     "contexts": ["text the answer was generated from", ...], "answer": "..."}
  Anything else you want to say goes to stderr. A non-zero exit fails the gate (exit 2).

  --serve PORT (the `http` adapter): answers each POST of {"qid", "query"} with one run object.

Try it:  echo '{"qid": "x", "query": "how often does sync run"}' | python3 eval/pipeline.py
"""
import argparse
import json
import os
import re
import sys

WORD = re.compile(r"[a-z0-9]+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it my of on or the to what when "
    "with without you your".split()
)
HERE = os.path.dirname(os.path.abspath(__file__))


def words(text):
    return set(WORD.findall(text.lower())) - STOPWORDS


def load_corpus(path):
    with open(path, encoding="utf-8") as corpus:
        return [json.loads(line) for line in corpus if line.strip()]


def retrieve(query, documents, top_k):
    """The top_k documents sharing words with the query: [(doc, score)], best first."""
    query_words = words(query)
    scored = []
    for doc in documents:
        overlap = len(query_words & words(doc.get("title", "") + " " + doc["text"]))
        if overlap:
            scored.append((-overlap, doc["doc_id"], doc))
    scored.sort(key=lambda entry: entry[:2])
    return [(doc, float(-negative)) for negative, _, doc in scored[:top_k]]


def generate(query, ranked):
    """The sentence of the best document that shares the most words with the query."""
    if not ranked:
        return ""
    query_words = words(query)
    sentences = SENTENCE_END.split(ranked[0][0]["text"].strip())
    return max(sentences, key=lambda sentence: len(query_words & words(sentence)))


def answer(request, documents, top_k):
    """One run object for one {"qid", "query"} request."""
    ranked = retrieve(request["query"], documents, top_k)
    return {
        "qid": request["qid"],
        "retrieved": [{"doc_id": doc["doc_id"], "score": score} for doc, score in ranked],
        "contexts": [doc["text"] for doc, _ in ranked[:3]],
        "answer": generate(request["query"], ranked),
    }


def answer_lines(documents, top_k):
    for line_number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            reply = answer(request, documents, top_k)
        except (ValueError, KeyError, TypeError) as error:
            sys.exit("pipeline.py: stdin line {}: {!r}: expected {{\"qid\", \"query\"}}".format(
                line_number, error))
        print(json.dumps(reply), flush=True)


def serve(port, documents, top_k):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            try:
                length = int(self.headers.get("Content-Length", "0"))
                reply = answer(json.loads(self.rfile.read(length)), documents, top_k)
                body, status = json.dumps(reply).encode("utf-8"), 200
            except (ValueError, KeyError, TypeError) as error:
                body, status = json.dumps({"error": repr(error)}).encode("utf-8"), 400
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):  # one line per request is too chatty
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print("pipeline.py: serving on http://127.0.0.1:{}/query".format(server.server_address[1]),
          file=sys.stderr, flush=True)
    server.serve_forever()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.path.join(HERE, "corpus.jsonl"),
                        help="the documents, JSONL {doc_id, title, text} (default: %(default)s)")
    parser.add_argument("--top-k", type=int, default=3, help="documents retrieved per query")
    parser.add_argument("--serve", type=int, metavar="PORT",
                        help="answer HTTP POSTs on 127.0.0.1:PORT instead of stdin (0: any free port)")
    args = parser.parse_args()
    documents = load_corpus(args.corpus)
    if args.serve is not None:
        serve(args.serve, documents, args.top_k)
    else:
        answer_lines(documents, args.top_k)


if __name__ == "__main__":
    main()
