# Uplift: a production image. Build: docker build -t uplift .   Run: see docker-compose.yml and the README.
# Stage 1 installs every dependency and compiles; stage 2 keeps only production dependencies and the build output.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json ./sdk/
COPY openfeature/package.json ./openfeature/
COPY web/package.json ./web/
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build && npm run build:sdk && npm run build:web

FROM node:20-bookworm-slim AS runtime
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json ./sdk/
COPY openfeature/package.json ./openfeature/
COPY web/package.json ./web/
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
# The embedded database (used when DATABASE_URL is unset) lives here; mount a volume to keep it.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
ENV HOST=0.0.0.0 PORT=8000 DATA_DIR=/app/data
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/main.js"]
