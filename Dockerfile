# agentd on the official Node image (Debian bookworm), with the Debian packages its features use:
# Chromium (browser tools), ffmpeg, espeak-ng, pocketsphinx and tesseract (keyless media engines),
# bubblewrap and jq (the orchestrate jail), git (workspaces, config history).
#   docker build -t agentd .
#   docker run -d -p 7420:7420 -v agentd-data:/data -e AGENTD_ADMIN_TOKEN=... agentd
FROM node:20-bookworm AS build
WORKDIR /src
# python3, make and g++ build node-pty (the terminal package's PTYs).
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY . .
RUN npx -y pnpm@10 install --frozen-lockfile && npx -y pnpm@10 build

FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
    chromium ffmpeg espeak-ng pocketsphinx pocketsphinx-en-us tesseract-ocr tesseract-ocr-eng \
    fonts-dejavu-core bubblewrap jq git ca-certificates tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/agentd
COPY --from=build /src /opt/agentd
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
ENV NODE_ENV=production AGENTD_DATA_DIR=/data
VOLUME /data
EXPOSE 7420
# tini reaps orphans (jailed scripts, terminals) and passes SIGTERM to node, which drains and stops.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--expose-gc", "apps/daemon/dist/cli.js", "start", "--data-dir", "/data", "--host", "0.0.0.0"]
