#!/usr/bin/env bash
# Runs jest (with the given arguments) on another Node major: the npm registry's `node` package,
# pinned, installed once into ~/.cache/talat/node<major> (never into the project's dependencies).
# Usage: bash scripts/test-node.sh 24 [jest arguments...]; without jest arguments it runs the CI
# pass: the stack-free tests and the stack tests that touch what a Node major changes (native
# addons, the workflow bundle and replay, crypto, fetch, streams, child processes).
set -euo pipefail
major=${1:?usage: scripts/test-node.sh <22|24> [jest arguments...]}
shift
case "$major" in
  22) version=22.23.3 ;;
  24) version=24.21.0 ;;
  *) echo "test-node: Node $major is not supported (22 or 24; the machine's node is $(node --version))" >&2; exit 2 ;;
esac
dir=${TALAT_CACHE:-$HOME/.cache/talat}/node$major
bin=$dir/node_modules/node/bin
if [ "$("$bin/node" --version 2>/dev/null || true)" != "v$version" ]; then
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node@$version" >&2
fi
cd "$(dirname "$0")/.."
export PATH="$bin:$PATH"
if [ $# = 0 ]; then
  set -- test/domain test/replay test/config.test.ts test/temporal-codec.test.ts test/lint.test.ts \
    test/docs/docs.test.ts test/docs/blocks.test.ts test/webhooks/signing.test.ts test/storefront/sigv4-vectors.test.ts \
    test/payments/qrpayment.test.ts test/refunds/refunds.test.ts test/payments/qr-image.test.ts \
    test/webhooks/e2e.test.ts test/callbacks/verification.test.ts test/storefront/assets.test.ts \
    test/http/edge.test.ts test/http/openapi-lint.test.ts test/temporal/runtime-logs.test.ts
fi
echo "[test-node] jest on Node $(node --version)" >&2
exec node node_modules/jest/bin/jest.js "$@"
