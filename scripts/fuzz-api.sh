#!/usr/bin/env bash
# npm run fuzz:api: schemathesis against /openapi.json of a Talat of its own (own DATA_DIR and
# ports, so it never touches the data of `npm start`). Installs schemathesis (pinned) into a
# virtualenv under DATA_DIR/tools, never system-wide. Checks: no 5xx (not_a_server_error),
# responses match their documented status codes, content types and schemas.
# FUZZ_MAX_EXAMPLES (default 30) examples per operation; extra arguments go to `st run`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
SCHEMATHESIS_VERSION="4.32.5"
export DATA_DIR="${FUZZ_DATA_DIR:-$ROOT/.data/fuzz}"
VENV="$ROOT/.data/tools/schemathesis-$SCHEMATHESIS_VERSION"
if [ ! -x "$VENV/bin/st" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "schemathesis==$SCHEMATHESIS_VERSION"
fi
export NODE_ENV=development LOG_LEVEL="${LOG_LEVEL:-warn}" HOST=127.0.0.1
export PORT="${FUZZ_PORT:-3917}" PG_PORT="${FUZZ_PG_PORT:-5497}" TEMPORAL_PORT="${FUZZ_TEMPORAL_PORT:-7297}" TEMPORAL_UI_PORT="${FUZZ_TEMPORAL_UI_PORT:-8297}" SMTP_SINK_PORT="${FUZZ_SMTP_PORT:-2597}"
unset DATABASE_URL TEMPORAL_ADDRESS
bash scripts/provision.sh
BASE="http://127.0.0.1:$PORT"
if curl -s -o /dev/null "$BASE/healthz"; then echo "port $PORT is taken (FUZZ_PORT to choose another)" >&2; exit 1; fi
# its own process group, so the trap stops Talat (which stops its Temporal and Postgres) and nothing else
setsid npx tsx src/main.ts > "$DATA_DIR.log" 2>&1 &
APP=$!
trap 'kill -TERM -- -$APP 2>/dev/null; for _ in $(seq 1 60); do kill -0 -- -$APP 2>/dev/null || break; sleep 0.5; done' EXIT
for _ in $(seq 1 240); do
  curl -sf "$BASE/readyz" >/dev/null 2>&1 && break
  kill -0 $APP 2>/dev/null || { echo "Talat did not start; see $DATA_DIR.log" >&2; exit 1; }
  sleep 1
done
KEY=$(DATABASE_URL="postgres://postgres:$(cat "$DATA_DIR/pg.password")@127.0.0.1:$PG_PORT/talat" node bin/talat apikey create --name fuzz --scopes payments:write,payments:read,cost:read,bank:write,bank:read,webhooks:manage --sandbox 2>/dev/null | tail -1)
"$VENV/bin/st" --config-file "$ROOT/scripts/schemathesis.toml" run "$BASE/openapi.json" \
  --url "$BASE" \
  -H "X-API-Key: $KEY" \
  --max-examples "${FUZZ_MAX_EXAMPLES:-30}" \
  --workers 1 \
  --report junit --report-dir "$DATA_DIR-report" \
  "$@"
