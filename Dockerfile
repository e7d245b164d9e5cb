# syntax=docker/dockerfile:1
# Multi-stage build: compile with dev dependencies, ship only production dependencies and dist/.

# Node.js 26 (the current LTS), pinned by digest: a tag moves, a digest does not. Bump both together
# with .nvmrc.
FROM node:26-bookworm-slim@sha256:367679cf9792759492a486e4aa4b421764d71a9546a6dae8aab81a99eb797b3e AS build
WORKDIR /app
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY db ./db
COPY scripts ./scripts
# The build also makes the embedded database template (dist/embedded/): a container without DATABASE_URL
# starts a new database from it in seconds.
RUN npm run build && npm prune --omit=dev

FROM node:26-bookworm-slim@sha256:367679cf9792759492a486e4aa4b421764d71a9546a6dae8aab81a99eb797b3e AS runtime
# V8 heap bounds: a capped old space, so the heap is collected instead of growing with load (peak RSS at
# 50 connections ~410 MB without any cap). The cap is a ceiling, not what sets the pace: how far the heap
# grows past its live size between full collections is HEAP_GROWING_PERCENT (50 %, src/common/heap-growth.ts),
# where V8 would scale its own factor with the cap (1.6 under 1024 MB, ~1.27 under 192; docs/PERFORMANCE.md).
# The young generation is 16 MB a semi-space, not 8: at 50 connections
# each request lives ~150 ms while it waits for a pool connection, so with 8 MB most survived a scavenge
# and were copied, then promoted (2.2 MB survived per scavenge, against 0.7 MB for the hand-written
# server); 16 MB halves the scavenges and the quest feed's Node CPU at 50 connections (docs/PERFORMANCE.md).
ENV NODE_OPTIONS="--max-old-space-size=1024 --max-semi-space-size=16"
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/var/lib/twin-service \
    SCARF_ANALYTICS=false
WORKDIR /app
RUN groupadd --system twin && useradd --system --gid twin --home /app twin \
    && mkdir -p /var/lib/twin-service && chown twin:twin /var/lib/twin-service
COPY --from=build --chown=twin:twin /app/node_modules ./node_modules
COPY --from=build --chown=twin:twin /app/dist ./dist
COPY --chown=twin:twin package.json ./
USER twin
EXPOSE 3000
VOLUME ["/var/lib/twin-service"]
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# The equivalent of `npm start` without npm in the process tree, so SIGTERM reaches Node directly.
CMD ["node", "dist/src/main.js"]
