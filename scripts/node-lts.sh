#!/usr/bin/env bash
# Prints a directory holding the Node.js the project runs on (.nvmrc), to put first on PATH:
#   export PATH="$(scripts/node-lts.sh):$PATH"
# The machine's own node when it is that version; otherwise the npm registry's `node` package,
# installed once into ~/.cache/twin-service (no other download needed).
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(tr -d ' \n' < .nvmrc)
have=$(node -p 'process.versions.node' 2>/dev/null || true)
if [ "$have" = "$want" ]; then dirname "$(command -v node)"; exit 0; fi
home="${XDG_CACHE_HOME:-$HOME/.cache}/twin-service/node-$want"
bin="$home/node_modules/node/bin"
if [ ! -x "$bin/node" ] || [ "$("$bin/node" -p 'process.versions.node')" != "$want" ]; then
  echo "node-lts: installing Node.js $want from the npm registry into $home" >&2
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$home" "node@$want" >&2
fi
echo "$bin"
