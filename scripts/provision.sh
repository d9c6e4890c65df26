#!/usr/bin/env bash
# Installs what Talat needs on a bare Debian machine, and nothing when it is already there:
#  - the Temporal CLI, built from its official Go module at a pinned version (unless TEMPORAL_ADDRESS is set);
#  - Debian's postgresql (unless DATABASE_URL is set).
# Safe to run on every start: a second run finds both and returns at once.
set -euo pipefail

TEMPORAL_CLI_VERSION="${TEMPORAL_CLI_VERSION:-v1.5.1}"
say() { echo "[provision] $*" >&2; }

find_temporal() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ] && [ -x "$TEMPORAL_CLI_PATH" ]; then echo "$TEMPORAL_CLI_PATH"; return 0; fi
  if command -v temporal >/dev/null 2>&1; then command -v temporal; return 0; fi
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
