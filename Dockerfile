# syntax=docker/dockerfile:1
# One image for both processes; the compose file picks the entry point. Node 24 LTS (20 is end of life).

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
COPY scripts ./scripts
# Production needs neither dev tools nor the embedded PostgreSQL binaries (an optional dependency).
RUN npm run build && npm prune --omit=dev --omit=optional

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    BINDERY_DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080 8081
CMD ["node", "dist/apps/api/main.js"]
