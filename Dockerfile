# syntax=docker/dockerfile:1
# Every stage on the current Node LTS line (D53); package.json `engines` keeps Node 20.19+ working.
# Build stage: full dependencies, compile TypeScript to dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY tsconfig.json openapi.yaml ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# Production dependencies only.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund

# Runtime: compiled code, migrations, the contract and sample data; runs as a non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=8000 HOST=0.0.0.0 DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json openapi.yaml ./
COPY drizzle ./drizzle
COPY scripts/sample ./scripts/sample
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8000)+'/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The same command as `npm start` without its build step; migrations run at start. The V8
# settings keep the heap near its live size under load (see README, Performance).
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=20", "dist/src/server.js"]
