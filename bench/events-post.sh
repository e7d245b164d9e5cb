#!/usr/bin/env bash
# Sustained POST /events/ rate and latency against a production build on PostgreSQL, next to the raw
# single-row INSERT rate of the same database measured by pgbench in the same run.
#
#   npm run build && bench/events-post.sh            # defaults below; override through the environment
#
# Raw outputs go to $OUT (/tmp/events-bench). Needs: a PostgreSQL with PostGIS reachable as $PGURL_BASE, pgbench, autocannon (devDependency).
set -euo pipefail
cd "$(dirname "$0")/.."

PGURL_BASE=${PGURL_BASE:-postgresql://postgres@127.0.0.1:5432}
DB=${DB:-twin_bench_events}
PORT=${PORT:-3300}
DURATION=${DURATION:-20}
WARMUP=${WARMUP:-5}
CONNECTIONS=${CONNECTIONS:-"8 50"}
EVENT_BUS=${EVENT_BUS:-postgres}
OUT=${OUT:-${TMPDIR:-/tmp}/events-bench}
mkdir -p "$OUT"

psql "$PGURL_BASE/postgres" -qc "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
export DATABASE_URL="$PGURL_BASE/$DB"

# The service migrates the database at boot.
PORT=$PORT LOG_LEVEL=warn RATE_LIMIT_MAX=0 EVENT_BUS=$EVENT_BUS node dist/src/main.js > "$OUT/events-server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" > /dev/null && break; sleep 0.2; done

TENANT=$(node dist/src/cli/main.js bootstrap --organization Bench --account Bench --twin Bench --json)
TOKEN=$(node -e 'const t=JSON.parse(process.argv[1]); process.stdout.write(t.token)' "$TENANT")
ORG=$(node -e 'const t=JSON.parse(process.argv[1]); process.stdout.write(t.organizationId)' "$TENANT")
TWIN=$(node -e 'const t=JSON.parse(process.argv[1]); process.stdout.write(t.twinId)' "$TENANT")
BODY='{"data":{"type":"events","attributes":{"name":"walk","category":"activity","data":{"steps":4200,"device":"watch","route":{"km":3.2}}}}}'

cpu_ms() { awk '{print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"'}' "/proc/$SERVER/stat"; }
echo "machine: $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for C in $CONNECTIONS; do
  # Warm-up (JIT, pool, caches), then the measured run.
  npx autocannon -c "$C" -d "$WARMUP" -m POST -H "Authorization=Token $TOKEN" -H "X-Organization=$ORG" -H "X-Twin=$TWIN" \
    -H "Content-Type=application/vnd.api+json" -b "$BODY" "http://127.0.0.1:$PORT/events/" > /dev/null 2>&1
  npx autocannon -c "$C" -d "$DURATION" -m POST -H "Authorization=Token $TOKEN" -H "X-Organization=$ORG" -H "X-Twin=$TWIN" \
    -H "Content-Type=application/vnd.api+json" -b "$BODY" -j "http://127.0.0.1:$PORT/events/" > "$OUT/events-post-c$C.json" 2> /dev/null &
  CPU0=$(cpu_ms)
  wait $!
  CPU1=$(cpu_ms)
  node -e '
    const r = require(require("node:path").resolve(process.argv[1]));
    const non2xx = r.non2xx + r.errors + r.timeouts;
    const cpu = (Number(process.argv[3]) - Number(process.argv[2])) / r["2xx"];
    console.log(`POST /events/ c=${r.connections}: ${r.requests.average.toFixed(0)} req/s (2xx total ${r["2xx"]}, non-2xx/errors ${non2xx}), latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms; service CPU ${cpu.toFixed(2)} ms/request`);
  ' "$OUT/events-post-c$C.json" "$CPU0" "$CPU1"
done
kill $SERVER; wait $SERVER 2>/dev/null || true
trap - EXIT

# Raw single-row INSERTs into the same table (same indexes and foreign keys), autocommit, by pgbench.
cat > "$OUT/events-insert.sql" <<SQL
INSERT INTO events (id, organization_id, twin_id, name, category, data)
VALUES (gen_random_uuid(), '$ORG', '$TWIN', 'walk', 'activity', '{"steps":4200,"device":"watch","route":{"km":3.2}}');
SQL
for C in $CONNECTIONS; do
  pgbench -n -M prepared -c "$C" -j 2 -T "$DURATION" -f "$OUT/events-insert.sql" "$DATABASE_URL" 2>/dev/null \
    | awk -v c="$C" '/^tps/ {printf "pgbench INSERT c=%s: %.0f tps\n", c, $3} /latency average/ {print "  " $0}'
done
psql "$DATABASE_URL" -tAc "SELECT 'rows in events: ' || count(*) FROM events"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
