#!/usr/bin/env bash
# Installs the ragate CLI for the composite action (action.yml) and the release-less fallback.
#
#   install-ragate.sh hash SOURCE_DIR      prints the 16-hex hash of SOURCE_DIR's Cargo.toml,
#                                          Cargo.lock, build.rs and src/ (file names and contents,
#                                          fixed order)
#   install-ragate.sh install              installs into $RAGATE_ROOT/bin (see below)
#
# `install` downloads the release binary for ragate $RAGATE_VERSION when the release exists and was
# built from exactly these sources (its SOURCE-HASH asset equals `hash $RAGATE_SOURCE`), verifies
# its sha256 against the release's SHA256SUMS and that it reports the version; otherwise (no such
# release, no binary for this platform, other sources) it runs `cargo install --locked` on
# $RAGATE_SOURCE. A binary whose checksum does not match is an error, never a fallback.
#
# Environment:
#   RAGATE_VERSION      the version (from the action's Cargo.toml)             required
#   RAGATE_SOURCE       the action's own source tree                           required
#   RAGATE_ROOT         the install root (the binary lands in $RAGATE_ROOT/bin) required
#   RAGATE_RELEASE_URL  the releases' base URL; assets are read from
#                       $RAGATE_RELEASE_URL/v$RAGATE_VERSION/   (default: GitHub releases of
#                       ragate/ragate; `file://` and `http://127.0.0.1` work for tests); `none`
#                       skips the download
#   RAGATE_TARGET       the target triple (default: from uname)
#   RAGATE_DOWNLOAD_TIMEOUT  seconds one download attempt may take (default 300; connecting: at
#                       most 30): a server that accepts and never answers fails the attempt;
#                       each download is tried 3 times in all, within 3 x this bound
set -euo pipefail

die() {
    echo "::error title=ragate install::$*" >&2
    exit 2
}

sha256_of() { # sha256_of FILE -> hex digest
    if command -v sha256sum > /dev/null; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

source_hash() { # source_hash DIR
    (
        cd "$1"
        local sha=(sha256sum)
        command -v sha256sum > /dev/null || sha=(shasum -a 256)
        local inputs=(Cargo.toml Cargo.lock src)
        [ -f build.rs ] && inputs+=(build.rs)
        find "${inputs[@]}" -type f | LC_ALL=C sort |
            while IFS= read -r f; do
                printf '%s\0' "$f"
                cat "$f"
            done | "${sha[@]}" | cut -c1-16
    )
}

target_triple() {
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) echo x86_64-unknown-linux-gnu ;;
        Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-gnu ;;
        Darwin-x86_64) echo x86_64-apple-darwin ;;
        Darwin-arm64 | Darwin-aarch64) echo aarch64-apple-darwin ;;
        MINGW*-x86_64 | MSYS*-x86_64 | CYGWIN*-x86_64) echo x86_64-pc-windows-msvc ;;
        *) echo unknown ;;
    esac
}

fetch() { # fetch URL FILE: 0 downloaded, 1 not there (404 or no such file), 2 other failure
    local code timeout=${RAGATE_DOWNLOAD_TIMEOUT:-300}
    [[ $timeout =~ ^[1-9][0-9]*$ ]] || die "RAGATE_DOWNLOAD_TIMEOUT is '$timeout': expected whole seconds (at least 1)"
    local connect=$((timeout < 30 ? timeout : 30))
    # Bounded: a server that accepts and never answers times out (--max-time, retried as a
    # transient failure), and all attempts together stop at --retry-max-time.
    code=$(curl --silent --show-error --location --proto '=https,http,file' \
        --connect-timeout "$connect" --max-time "$timeout" \
        --retry 2 --retry-delay 1 --retry-max-time $((3 * timeout)) \
        --output "$2" --write-out '%{http_code}' "$1") || {
        # curl exits 37 for a missing file:// and 22 never (no --fail); anything else is a failure.
        [ "$?" -eq 37 ] && return 1
        return 2
    }
    case "$code" in
        2?? | 000) return 0 ;; # 000: file:// has no status
        404) return 1 ;;
        *) return 2 ;;
    esac
}

# Downloads, verifies and installs the release binary; returns 1 when there is none to use.
download() {
    local base="$1" target="$2" work="$3" asset exe
    exe=ragate
    asset="ragate-v$RAGATE_VERSION-$target.tar.gz"
    if [[ "$target" == *windows* ]]; then
        exe=ragate.exe
    fi
    local status=0
    fetch "$base/SOURCE-HASH" "$work/SOURCE-HASH" || status=$?
    case "$status" in
        0) ;;
        1) echo "ragate install: no release v$RAGATE_VERSION at $base" && return 1 ;;
        *) die "could not download $base/SOURCE-HASH; check the network or set RAGATE_RELEASE_URL=none to build from source" ;;
    esac
    local want have
    want=$(source_hash "$RAGATE_SOURCE")
    have=$(tr -d '[:space:]' < "$work/SOURCE-HASH" | head -c 64)
    if [ "$have" != "$want" ]; then
        echo "ragate install: release v$RAGATE_VERSION was built from other sources ($have, here $want)"
        return 1
    fi
    fetch "$base/SHA256SUMS" "$work/SHA256SUMS" ||
        die "release v$RAGATE_VERSION has a SOURCE-HASH but no SHA256SUMS at $base; the release is incomplete, re-run its workflow"
    local line
    line=$(awk -v a="$asset" '$2 == a || $2 == "*" a { print $1; exit }' "$work/SHA256SUMS")
    if [ -z "$line" ]; then
        echo "ragate install: release v$RAGATE_VERSION has no binary for $target"
        return 1
    fi
    fetch "$base/$asset" "$work/$asset" ||
        die "SHA256SUMS of v$RAGATE_VERSION lists $asset but it could not be downloaded from $base"
    local got
    got=$(sha256_of "$work/$asset")
    if [ "$got" != "$line" ]; then
        die "$asset has sha256 $got, SHA256SUMS says $line; refusing to install it (a corrupted or altered download)"
    fi
    mkdir -p "$work/x" "$RAGATE_ROOT/bin"
    tar -xzf "$work/$asset" -C "$work/x" || die "$asset is not a readable tar.gz"
    [ -f "$work/x/$exe" ] || die "$asset holds no $exe at its top level"
    chmod 0755 "$work/x/$exe"
    local reported
    reported=$("$work/x/$exe" --version) || die "the downloaded $exe does not run on this machine"
    case "$reported" in
        "ragate $RAGATE_VERSION" | "ragate $RAGATE_VERSION ("*")") ;; # a build from git adds the commit
        *) die "the downloaded $exe reports '$reported', expected 'ragate $RAGATE_VERSION'" ;;
    esac
    install -m 0755 "$work/x/$exe" "$RAGATE_ROOT/bin/$exe"
    echo "ragate install: $asset (sha256 $got) into $RAGATE_ROOT/bin"
}

install_ragate() {
    : "${RAGATE_VERSION:?set RAGATE_VERSION}" "${RAGATE_SOURCE:?set RAGATE_SOURCE}" "${RAGATE_ROOT:?set RAGATE_ROOT}"
    [[ "$RAGATE_VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
        die "RAGATE_VERSION '$RAGATE_VERSION' is not a version like 1.2.3"
    local url="${RAGATE_RELEASE_URL:-https://github.com/ragate/ragate/releases/download}"
    local target="${RAGATE_TARGET:-$(target_triple)}"
    if [ "$url" != none ] && [ "$target" != unknown ]; then
        local work
        work=$(mktemp -d)
        # shellcheck disable=SC2064 # expand now: $work is local
        trap "rm -rf '$work'" EXIT
        if download "${url%/}/v$RAGATE_VERSION" "$target" "$work"; then
            return 0
        fi
    fi
    command -v cargo > /dev/null ||
        die "no release binary to use and cargo is not on PATH; add a Rust toolchain step (e.g. dtolnay/rust-toolchain) before this action"
    echo "ragate install: building ragate $RAGATE_VERSION from $RAGATE_SOURCE with cargo install --locked --features nli"
    cargo install --locked --features nli --path "$RAGATE_SOURCE" --root "$RAGATE_ROOT"
}

case "${1:-}" in
    hash)
        [ -n "${2:-}" ] || die "usage: install-ragate.sh hash SOURCE_DIR"
        source_hash "$2"
        ;;
    install) install_ragate ;;
    *) die "usage: install-ragate.sh hash SOURCE_DIR | install" ;;
esac
