# syntax=docker/dockerfile:1
# Build stage: native modules (better-sqlite3, argon2) compile here with the toolchain.
FROM node:26-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Without scripts: the project's `prepare` (the build) needs the sources, copied below for the
# layer cache. The native modules' own install scripts (package.json allowScripts) run here.
RUN npm ci --ignore-scripts && npm rebuild argon2 better-sqlite3
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Runtime stage: no toolchain, no sources, a non-root user.
FROM node:26-bookworm-slim
# No MALLOC_* here: each process fixes glibc's mmap threshold itself at start
# (src/common/runtime/malloc-threshold.ts), as it does outside the image.
# HOST: every interface of the container (outside production the service binds 127.0.0.1).
# NODE_OPTIONS: V8's young generation at Node 20's size. Node 26 sizes it larger by default, which
# under the fleet's log ingest cost ~30 MB of RSS (317 against 287 MB, over quality.md's 300) for
# no throughput; unlike the heap growth (src/common/runtime/heap-growth.ts), V8 reads this only at start.
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=3000 \
    NODE_OPTIONS=--max-semi-space-size=16
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "dist/main.js"]
