#!/usr/bin/env bash
# Benchmark `ragate eval` against trec_eval, pytrec_eval, ranx and a C floor (split lines into
# fields only).
#
# usage: bench/run.sh [DATA_DIR=/tmp/ragate-bench] [RUNS=7]
#
#   DATA_DIR   holds qrels.trec and run.trec; generated if missing with
#              `cargo run --release --example gen_bench -- --out DATA_DIR $GEN_ARGS`
#              (default 10,000 queries x 1,000 docs, seed 42: 10M run lines, ~375 MB).
#   RUNS       timed runs per tool (the median is reported; use at least 5).
#
# Environment:
#   TOOLS        space-separated subset of: ragate floor_split floor_split_strtod pytrec_eval
#                ranx trec_eval (default: all six)
#   SKIP_PYTREC  =1 skips pytrec_eval (it is also skipped when `import pytrec_eval` fails;
#                install it with `pip install pytrec-eval-terrier`)
#   TREC_EVAL    path of the trec_eval binary (default /tmp/trec_eval/trec_eval; build it from
#                https://github.com/usnistgov/trec_eval with `make`); skipped if not executable
#   ranx         is skipped when `import ranx` fails (pip install ranx). ranx compiles its
#                metrics with numba and caches them on disk, so one untimed ranx call on the
#                first 2,000 lines of each file is made before the timed runs.
#   GEN_ARGS     extra generator flags when DATA_DIR must be generated,
#                e.g. GEN_ARGS="--queries 200 --docs 100"
#   METRICS      cutoff (default: P@5,10 recall@5,100 MRR nDCG@10, as most RAG gates use) or full
#                (full-depth: ragate map ndcg ndcg_linear recall@1000 r_precision; trec_eval map
#                ndcg recall.1000 Rprec; pytrec_eval and ranx do not take this set: use TOOLS)
#   THREADS      worker threads for ragate (default: all cores); THREADS=1 compares with the
#                single-threaded C floor on equal terms
#   SKIP_BUILD   =1 uses target/release/ragate as it is (no `cargo build --release` first)
#   SHARED_DIR   where bench/floor_split.c lives (default: ../shared next to the repo)
#   KEEP_OUTPUT  =1 writes each tool's stdout to target/bench/out/TOOL.stdout instead of
#                /dev/null (the last run's output is kept)
#
# Each run is measured with /usr/bin/time -f '%e %M' (wall seconds, max RSS KiB); the wall
# time reported is taken with a nanosecond clock around the same call, since %e only has
# 10 ms resolution. Runs are interleaved round-robin across tools so that background load
# hits every tool alike. The page cache is warmed first (cat files > /dev/null).
set -euo pipefail

DATA_DIR=${1:-/tmp/ragate-bench}
RUNS=${2:-7}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BENCH_DIR=$TARGET/bench
SHARED_DIR=${SHARED_DIR:-$ROOT/../shared}
TOOLS=${TOOLS:-"ragate floor_split floor_split_strtod pytrec_eval ranx trec_eval"}
TREC_EVAL=${TREC_EVAL:-/tmp/trec_eval/trec_eval}
QRELS=$DATA_DIR/qrels.trec
RUN=$DATA_DIR/run.trec

die() { echo "bench/run.sh: $*" >&2; exit 1; }

[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
if [[ ! -x /usr/bin/time ]]; then
    die "/usr/bin/time (GNU time) is missing; install it with: apt-get install -y time (Debian/Ubuntu package 'time')"
fi

# Validate and filter the tool list.
selected=()
for t in $TOOLS; do
    case $t in
        ragate | floor_split | floor_split_strtod) selected+=("$t") ;;
        pytrec_eval)
            if [[ ${SKIP_PYTREC:-0} == 1 ]]; then
                echo "note: pytrec_eval skipped (SKIP_PYTREC=1)" >&2
            elif ! python3 -c 'import pytrec_eval' 2>/dev/null; then
                echo "note: pytrec_eval skipped: not importable by python3 (pip install pytrec-eval-terrier)" >&2
            else
                selected+=("$t")
            fi
            ;;
        ranx)
            if python3 -c 'import ranx' 2>/dev/null; then
                selected+=("$t")
            else
                echo "note: ranx skipped: not importable by python3 (pip install ranx)" >&2
            fi
            ;;
        trec_eval)
            if [[ -x $TREC_EVAL ]]; then
                selected+=("$t")
            else
                echo "note: trec_eval skipped: $TREC_EVAL is not an executable (set TREC_EVAL)" >&2
            fi
            ;;
        *) die "unknown tool '$t' in TOOLS (known: ragate floor_split floor_split_strtod pytrec_eval ranx trec_eval)" ;;
    esac
done
((${#selected[@]} > 0)) || die "no tool left to run"
has_tool() { local t; for t in "${selected[@]}"; do [[ $t == "$1" ]] && return 0; done; return 1; }

# (a) data
if [[ ! -s $QRELS || ! -s $RUN ]]; then
    echo "== generating $DATA_DIR" >&2
    # shellcheck disable=SC2086
    cargo run --release --example gen_bench -- --out "$DATA_DIR" ${GEN_ARGS:-}
fi

# (b) ragate
mkdir -p "$BENCH_DIR"
if has_tool ragate && [[ ${SKIP_BUILD:-0} == 1 ]]; then
    [[ -x $TARGET/release/ragate ]] || die "SKIP_BUILD=1 but $TARGET/release/ragate is missing"
    echo "== using the built $TARGET/release/ragate (SKIP_BUILD=1): $("$TARGET/release/ragate" --version)" >&2
elif has_tool ragate; then
    echo "== cargo build --release --bin ragate" >&2
    cargo build --release --bin ragate
    [[ -x $TARGET/release/ragate ]] || die "$TARGET/release/ragate was not built"
fi

# (c) C floor
if has_tool floor_split || has_tool floor_split_strtod; then
    src=$SHARED_DIR/bench/floor_split.c
    [[ -f $src ]] || die "$src not found (set SHARED_DIR)"
    gcc -O2 -o "$BENCH_DIR/floor_split" "$src"
fi

METRICS=${METRICS:-cutoff}
case $METRICS in
    cutoff)
        ragate_metrics=(-m precision@5 -m precision@10 -m recall@5 -m recall@100 -m mrr -m ndcg@10)
        trec_metrics=(-m P.5,10 -m recall.5,100 -m recip_rank -m ndcg_cut.10) ;;
    full)
        ragate_metrics=(-m map -m ndcg -m ndcg_linear -m recall@1000 -m r_precision)
        trec_metrics=(-m map -m ndcg -m recall.1000 -m Rprec)
        for t in "${selected[@]}"; do
            [[ $t == pytrec_eval || $t == ranx ]] && die "METRICS=full: $t computes the cut-off set only; leave it out of TOOLS"
        done ;;
    *) die "METRICS must be cutoff or full, got '$METRICS'" ;;
esac
ragate_threads=()
[[ -n ${THREADS:-} ]] && ragate_threads=(--threads "$THREADS")

tool_cmd() {
    case $1 in
        ragate) cmd=("$TARGET/release/ragate" eval --qrels "$QRELS" --run "$RUN"
                     "${ragate_metrics[@]}" "${ragate_threads[@]}" --format json) ;;
        floor_split) cmd=("$BENCH_DIR/floor_split" "$RUN") ;;
        floor_split_strtod) cmd=("$BENCH_DIR/floor_split" "$RUN" strtod) ;;
        pytrec_eval) cmd=(python3 "$ROOT/bench/pytrec_eval_bench.py" "$QRELS" "$RUN") ;;
        ranx) cmd=(python3 "$ROOT/bench/ranx_bench.py" "$QRELS" "$RUN") ;;
        trec_eval) cmd=("$TREC_EVAL" -c "${trec_metrics[@]}" "$QRELS" "$RUN") ;;
    esac
}

# (d) warm the page cache (and ranx's numba cache, on a small slice of the data)
cat "$QRELS" "$RUN" > /dev/null
if has_tool ranx; then
    warm=$(mktemp -d)
    head -n 2000 "$QRELS" > "$warm/qrels.trec"
    head -n 2000 "$RUN" > "$warm/run.trec"
    echo "== warming ranx (numba compile cache)" >&2
    python3 "$ROOT/bench/ranx_bench.py" "$warm/qrels.trec" "$warm/run.trec" > /dev/null 2>&1 \
        || echo "note: the ranx warm-up call failed; the timed runs will show why" >&2
    rm -rf "$warm"
fi

# (e) timed runs, round-robin
if [[ ${KEEP_OUTPUT:-0} == 1 ]]; then mkdir -p "$BENCH_DIR/out"; fi
declare -A walls rss
tfile=$(mktemp) errfile=$(mktemp)
trap 'rm -f "$tfile" "$errfile"' EXIT
for ((r = 1; r <= RUNS; r++)); do
    for t in "${selected[@]}"; do
        tool_cmd "$t"
        out=/dev/null
        [[ ${KEEP_OUTPUT:-0} == 1 ]] && out=$BENCH_DIR/out/$t.stdout
        t0=$(date +%s%N)
        if ! /usr/bin/time -f '%e %M' -o "$tfile" "${cmd[@]}" > "$out" 2> "$errfile"; then
            cat "$errfile" >&2
            die "$t failed: ${cmd[*]}"
        fi
        t1=$(date +%s%N)
        wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
        kib=$(awk 'END { print $2 }' "$tfile")
        walls[$t]+="$wall "
        rss[$t]+="$kib "
        printf 'run %d/%d %-20s %8.3f s %8.1f MiB\n' "$r" "$RUNS" "$t" "$wall" "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')" >&2
    done
done

# median of whitespace-separated numbers (mean of the two middle ones for an even count)
median() { tr ' ' '\n' <<< "$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { tr ' ' '\n' <<< "$1" | grep -v '^$' | sort -g | head -1; }
maximum() { tr ' ' '\n' <<< "$1" | grep -v '^$' | sort -g | tail -1; }

ref=${selected[0]}
has_tool ragate && ref=ragate
ref_median=$(median "${walls[$ref]}")

lines=$(wc -l < "$RUN")
size_mb=$(awk -v b="$(stat -c %s "$RUN")" 'BEGIN { printf "%.1f", b / 1e6 }')
echo
echo "Data: $RUN ($lines lines, ${size_mb} MB), $QRELS ($(wc -l < "$QRELS") lines); $RUNS runs per tool, warm page cache, $(nproc) cores; METRICS=$METRICS, ragate threads ${THREADS:-all}."
echo
echo "| tool | median wall (s) | min (s) | max (s) | median max RSS (MiB) | median vs $ref |"
echo "|---|---:|---:|---:|---:|---:|"
for t in "${selected[@]}"; do
    med=$(median "${walls[$t]}")
    awk -v t="$t" -v med="$med" -v mn="$(minimum "${walls[$t]}")" -v mx="$(maximum "${walls[$t]}")" \
        -v rss="$(median "${rss[$t]}")" -v ref="$ref_median" 'BEGIN {
            ratio = (ref > 0) ? sprintf("%.2fx", med / ref) : "n/a"
            printf "| %s | %.3f | %.3f | %.3f | %.1f | %s |\n", t, med, mn, mx, rss / 1024, ratio
        }'
done
echo
echo "Commands:"
for t in "${selected[@]}"; do
    tool_cmd "$t"
    echo "- $t: ${cmd[*]}"
done
