# Talat's production image: one image, two roles (gateway and worker) plus the migrate step.
#   docker build -t talat .
#   docker run ... talat                                   # the gateway (default)
#   docker run -e TALAT_ROLE=worker ... talat node dist/src/roles/worker.js
#   docker run ... talat node dist/src/cli/talat.js migrate --seed-if-empty
# The environment a production container needs is in docs/deploy.md.

# 1. build: all dependencies, tsc to dist/ and the prebuilt workflow bundle (dist/workflow-bundle.js)
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY workflows workflows
COPY activities activities
COPY migrations migrations
RUN npm run build

# 2. production dependencies only (no tsx, typescript, jest, smtp-server, ...)
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. runtime: compiled code, production dependencies, the catalog seed; non-root
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps \
    HOST=0.0.0.0 \
    PORT=3000 \
    WORKER_HTTP_PORT=3001 \
    TALAT_ROLE=gateway
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
COPY data/catalog data/catalog
COPY scripts/run.cjs scripts/healthcheck.cjs scripts/
COPY bin/talat bin/
USER node
EXPOSE 3000 3001
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=5 CMD ["node", "scripts/healthcheck.cjs"]
# node runs as PID 1 and handles SIGTERM itself: `docker stop` drains the role (compose adds init: true)
CMD ["node", "dist/src/roles/gateway.js"]
