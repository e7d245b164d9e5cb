#!/usr/bin/env bash
# Start-up times, to the first 200 from GET /health:
#   bench/start-time.sh fresh-clone     # what a newcomer waits for: a clone of HEAD, its node_modules as `npm ci`
#                                       # leaves them (hard links of this one's, without its build cache), then
#                                       # `npm start`: build, embedded database template, a new embedded database
#   bench/start-time.sh restart         # `npm start` again in that clone, nothing changed (run after fresh-clone)
#   npm run build
#   bench/start-time.sh embedded-cold   # the built service on a fresh DATA_DIR (a copy of the template)
#   bench/start-time.sh embedded-warm   # the same DATA_DIR again
#   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/twin_start bench/start-time.sh postgres
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: bench/start-time.sh fresh-clone|restart|embedded-cold|embedded-warm|postgres}
port=${PORT:-3299}
data_dir=${DATA_DIR:-/tmp/twin-start-data}
clone=${CLONE_DIR:-/tmp/twin-start-clone}
command=(node dist/src/main.js)
case "$mode" in
  fresh-clone)
    rm -rf "$clone"
    git clone -q . "$clone"
    # Into a new directory of the clone's own (never through a link into this checkout's node_modules).
    if [ -e "$clone/node_modules" ] || [ -L "$clone/node_modules" ]; then echo "the clone brought a node_modules of its own" >&2; exit 1; fi
    mkdir "$clone/node_modules"
    # Hard links where the clone is on the same file system, else a copy.
    cp -al "$(realpath node_modules)/." "$clone/node_modules/" 2>/dev/null || cp -a "$(realpath node_modules)/." "$clone/node_modules/"
    rm -rf "$clone/node_modules/.cache"
    cd "$clone"
    command=(npm start --silent)
    env_args=(DATABASE_URL=) ;;
  restart)
    [ -d "$clone/dist" ] || { echo "no clone in $clone: run bench/start-time.sh fresh-clone first" >&2; exit 2; }
    cd "$clone"
    command=(npm start --silent)
    env_args=(DATABASE_URL=) ;;
  embedded-cold) rm -rf "$data_dir"; env_args=(DATA_DIR="$data_dir" DATABASE_URL=) ;;
  embedded-warm) env_args=(DATA_DIR="$data_dir" DATABASE_URL=) ;;
  postgres) env_args=(DATABASE_URL="${DATABASE_URL:?set DATABASE_URL}") ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
log=$(mktemp)
start=$(date +%s%N)
# setsid: npm and the node it starts are one process group, stopped together.
env "${env_args[@]}" PORT="$port" HOST=127.0.0.1 METRICS_PORT=0 NODE_ENV=production setsid "${command[@]}" >"$log" 2>&1 &
pid=$!
trap 'kill -TERM -- -$pid 2>/dev/null || true' EXIT
until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
  kill -0 $pid 2>/dev/null || { cat "$log" >&2; echo "the service exited during start-up" >&2; exit 1; }
  sleep 0.02
done
echo "$mode: $(( ($(date +%s%N) - start) / 1000000 )) ms to the first 200 from /health"
# The parts the build and the service report: compilation, the template, the database, the listener.
grep -hoE 'build: compiled in [0-9.]+ s|embedded template: .*|"msg":"database: [^"]*"|ready in [0-9]+ ms' "$log" | sed 's/^/  /' || true
kill -TERM -- -$pid; wait $pid || true
trap - EXIT
rm -f "$log"
