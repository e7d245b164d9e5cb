#!/usr/bin/env bash
# Start-up time of the production build: process start -> first 200 from GET /health.
#   npm run build
#   bench/start-time.sh embedded-cold   # fresh DATA_DIR: PGlite init, CREATE EXTENSION postgis, migrations
#   bench/start-time.sh embedded-warm   # the same DATA_DIR again
#   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/twin_start bench/start-time.sh postgres
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: bench/start-time.sh embedded-cold|embedded-warm|postgres}
port=${PORT:-3299}
data_dir=${DATA_DIR:-/tmp/twin-start-data}
case "$mode" in
  embedded-cold) rm -rf "$data_dir"; env_args=(DATA_DIR="$data_dir" DATABASE_URL=) ;;
  embedded-warm) env_args=(DATA_DIR="$data_dir" DATABASE_URL=) ;;
  postgres) env_args=(DATABASE_URL="${DATABASE_URL:?set DATABASE_URL}") ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
start=$(date +%s%N)
env "${env_args[@]}" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warn NODE_ENV=production node dist/src/main.js >/dev/null 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
  kill -0 $pid 2>/dev/null || { echo "the service exited during start-up" >&2; exit 1; }
  sleep 0.02
done
echo "$mode: $(( ($(date +%s%N) - start) / 1000000 )) ms to the first 200 from /health"
kill -TERM $pid; wait $pid || true
trap - EXIT
