#!/usr/bin/env bash
# Installs what the GCP emulator tests need on a fresh machine, from Debian only: a Java runtime for the
# gcloud Pub/Sub emulator. gcloud and its pubsub-emulator component come from Google's own apt repository,
# which this network cannot reach: when they are missing the Pub/Sub tests skip with the reason (the storage
# emulator is a PyPI package, installed by requirements-dev.txt).
set -euo pipefail
if ! command -v java >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "emulator-deps: installing Debian openjdk-17-jre-headless (Pub/Sub emulator)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; } ||
      echo "emulator-deps: WARNING could not install Java; Pub/Sub emulator tests will be skipped" >&2
  else
    echo "emulator-deps: WARNING java missing and not root; Pub/Sub emulator tests will be skipped" >&2
  fi
fi
if ! command -v gcloud >/dev/null 2>&1; then
  echo "emulator-deps: WARNING gcloud missing (google-cloud-cli and google-cloud-cli-pubsub-emulator);" \
    "Pub/Sub emulator tests and the deploy.sh flag check will be skipped" >&2
else
  root=$(gcloud info --format='value(installation.sdk_root)' 2>/dev/null || true)
  if [ ! -x "$root/platform/pubsub-emulator/bin/cloud-pubsub-emulator" ]; then
    echo "emulator-deps: WARNING the pubsub-emulator component is missing; Pub/Sub emulator tests will be skipped" >&2
  fi
fi
