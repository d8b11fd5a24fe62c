#!/usr/bin/env bash
# Deploy regrag's Cloud Functions (2nd gen): stage build/<fn>/ = main.py + regrag/ + a trimmed
# requirements.txt, then `gcloud functions deploy`. Infrastructure (buckets, topics, index, service accounts,
# IAM, scheduler) comes from infra/ (Terraform); see infra/README.md for the order of the steps.
#
#   ./deploy.sh [--dry-run] [--skip-doctor] [function ...]     no function: all of them, in flow order
#
# --dry-run stages the bundles and prints every gcloud command instead of running it (placeholders such as
# EVENTARC_SUBSCRIPTION_OF_embed stand for values a real run reads back from gcloud).
# Before deploying, `python -m regrag.entrypoints.cli doctor` runs here with the functions' settings and this machine's
# Application Default Credentials: the embedding model and the Gemini model must answer in the chosen region
# and the index must hold that embedding model's vectors (a retired model would otherwise only show as every
# answer's rerank falling back). --skip-doctor skips it (e.g. a first deploy before the index endpoint is up).
#
# Configuration is the environment, the same variables the functions read (`terraform -chdir=infra output
# -raw deploy_env` prints them): REGRAG_GCP_PROJECT REGRAG_GCP_REGION REGRAG_BUCKET REGRAG_STATE_BUCKET
# REGRAG_VERTEX_INDEX REGRAG_VERTEX_INDEX_ENDPOINT REGRAG_VERTEX_DEPLOYED_INDEX_ID REGRAG_VERTEX_PUBLIC_HOST;
# optional: REGRAG_TOPIC_CHUNKED REGRAG_TOPIC_EMBEDDED REGRAG_TOPIC_ALERTS (where upsert and query's scheduled check
# publish alerts on watches) REGRAG_PUBLIC_URL (the page's address, for links in exports and alerts; query only)
# REGRAG_EMBEDDING_MODEL REGRAG_EMBEDDING_DIMENSION
# REGRAG_GEMINI_MODEL REGRAG_GEMINI_TEMPERATURE REGRAG_GEMINI_THINKING_LEVEL (checked against the model's row in
# shared/regrag/cloud_facts.py) REGRAG_GEMINI_LOCATION (Gemini through Vertex AI with the service account by default)
# REGRAG_GEMINI_SECRET (a Secret Manager secret id; mounted as GEMINI_API_KEY where the table says gemini)
# REGRAG_ADMIN_PRINCIPALS (comma-separated emails allowed on query's /admin/ routes; query only)
# REGRAG_DOCUMENTAI_PROCESSOR REGRAG_DOCUMENTAI_LOCATION (the OCR processor for scans; ingest and reconcile only).
set -euo pipefail

# In flow order. trigger: bucket (object finalized) | topic:chunked | topic:embedded | http.
# retry: event functions only (failed events are redelivered, then dead-lettered after 5 attempts).
# ingress: internal = only Google services and the VPC reach it (Eventarc and Pub/Sub count as internal).
# rerank and compose take `all` ingress because query calls them at their run.app URLs without a VPC; every
# call still needs an ID token of an invoker, and query's service account is their only one (infra/iam.tf).
# They deploy before query, which is given their URLs (REGRAG_RERANK_URL, REGRAG_COMPOSE_URL).
# function   trigger         memory  timeout  retry  service account     secrets  ingress
readonly FUNCTIONS_TABLE="
ingest       bucket          1Gi     300s     yes    regrag-ingest       -        internal
embed        topic:chunked   512Mi   300s     yes    regrag-embed        -        internal
upsert       topic:embedded  1Gi     300s     yes    regrag-upsert       -        internal
rerank       http            512Mi   30s      no     regrag-rerank       gemini   all
compose      http            512Mi   30s      no     regrag-compose      -        all
query        http            1Gi     600s     no     regrag-query        gemini   all
reconcile    http            1Gi     900s     no     regrag-reconcile    -        all
"
readonly RUNTIME=python311 # the interpreter the tests run on (3.11)
readonly MAX_DELIVERY_ATTEMPTS=5

root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly ROOT=$root
readonly BUILD="${REGRAG_BUILD_DIR:-$ROOT/build}" # where bundles are staged
DRY_RUN=0
PROJECT_NUMBER=""
REMOTE_URLS=()
exec 3>&1 # dry-run output goes here even from inside $(...)

die() {
  echo "deploy.sh: $*" >&2
  exit 1
}

# Print a command as shell words (dry run), or run it.
run() {
  if ((DRY_RUN)); then
    printf '%q ' "$@" >&3
    printf '\n' >&3
  else
    "$@"
  fi
}

# Run a command and print its output; in a dry run, print the command and output the placeholder $1.
capture() {
  local placeholder=$1
  shift
  if ((DRY_RUN)); then
    printf '%q ' "$@" >&3
    printf '\n' >&3
    printf '%s\n' "$placeholder"
  else
    "$@"
  fi
}

row_of() {
  local fn=$1 row
  while read -r row; do
    [[ -z $row ]] && continue
    [[ ${row%% *} == "$fn" ]] && {
      printf '%s\n' "$row"
      return 0
    }
  done <<<"$FUNCTIONS_TABLE"
  return 1
}

all_functions() {
  local name _
  while read -r name _; do
    [[ -n $name ]] && printf '%s\n' "$name"
  done <<<"$FUNCTIONS_TABLE"
}

check_env() {
  local missing=() name
  for name in REGRAG_GCP_PROJECT REGRAG_GCP_REGION REGRAG_BUCKET REGRAG_STATE_BUCKET REGRAG_VERTEX_INDEX \
    REGRAG_VERTEX_INDEX_ENDPOINT REGRAG_VERTEX_DEPLOYED_INDEX_ID REGRAG_VERTEX_PUBLIC_HOST; do
    [[ -n ${!name:-} ]] || missing+=("$name")
  done
  ((${#missing[@]} == 0)) || die "set ${missing[*]} (terraform -chdir=infra output -raw deploy_env prints them)"
}

# The env vars of function $1: what regrag.config.Settings needs in gcp mode, and for query the principals
# allowed on its /admin/ routes. Joined with gcloud's alternate delimiter (`gcloud topic escaping`: a leading
# ^;^ makes ';' the separator), because REGRAG_ADMIN_PRINCIPALS is itself a comma-separated list.
env_vars() {
  local fn=$1
  local vars=(
    "REGRAG_MODE=gcp"
    "REGRAG_GCP_PROJECT=$REGRAG_GCP_PROJECT"
    "REGRAG_GCP_REGION=$REGRAG_GCP_REGION"
    "REGRAG_BUCKET=$REGRAG_BUCKET"
    "REGRAG_STATE_BUCKET=$REGRAG_STATE_BUCKET"
    "REGRAG_VERTEX_INDEX=$REGRAG_VERTEX_INDEX"
    "REGRAG_VERTEX_INDEX_ENDPOINT=$REGRAG_VERTEX_INDEX_ENDPOINT"
    "REGRAG_VERTEX_DEPLOYED_INDEX_ID=$REGRAG_VERTEX_DEPLOYED_INDEX_ID"
    "REGRAG_VERTEX_PUBLIC_HOST=$REGRAG_VERTEX_PUBLIC_HOST"
    "REGRAG_TOPIC_CHUNKED=$TOPIC_CHUNKED"
    "REGRAG_TOPIC_EMBEDDED=$TOPIC_EMBEDDED"
    "REGRAG_TOPIC_ALERTS=$TOPIC_ALERTS"
    "REGRAG_EMBED_BATCH_SIZE=250" # Vertex AI takes up to 250 texts per request (the adapter splits further)
    # the failure reaching the dead-letter policy's attempts is recorded as dead-lettered (adapters/gcp/failures.py)
    "REGRAG_MAX_DELIVERY_ATTEMPTS=$MAX_DELIVERY_ATTEMPTS"
  )
  [[ -n ${REGRAG_EMBEDDING_MODEL:-} ]] && vars+=("REGRAG_EMBEDDING_MODEL=$REGRAG_EMBEDDING_MODEL")
  [[ -n ${REGRAG_EMBEDDING_DIMENSION:-} ]] && vars+=("REGRAG_EMBEDDING_DIMENSION=$REGRAG_EMBEDDING_DIMENSION")
  [[ -n ${REGRAG_GEMINI_MODEL:-} ]] && vars+=("REGRAG_GEMINI_MODEL=$REGRAG_GEMINI_MODEL")
  [[ -n ${REGRAG_GEMINI_TEMPERATURE:-} ]] && vars+=("REGRAG_GEMINI_TEMPERATURE=$REGRAG_GEMINI_TEMPERATURE")
  [[ -n ${REGRAG_GEMINI_THINKING_LEVEL:-} ]] && vars+=("REGRAG_GEMINI_THINKING_LEVEL=$REGRAG_GEMINI_THINKING_LEVEL")
  [[ -n ${REGRAG_GEMINI_LOCATION:-} ]] && vars+=("REGRAG_GEMINI_LOCATION=$REGRAG_GEMINI_LOCATION")
  if [[ $fn == query ]]; then
    vars+=("${REMOTE_URLS[@]}")
  fi
  if [[ $fn == query && -n ${REGRAG_PUBLIC_URL:-} ]]; then
    vars+=("REGRAG_PUBLIC_URL=$REGRAG_PUBLIC_URL")
  fi
  if [[ $fn == query && -n ${REGRAG_ADMIN_PRINCIPALS:-} ]]; then
    vars+=("REGRAG_ADMIN_PRINCIPALS=$REGRAG_ADMIN_PRINCIPALS")
  fi
  if [[ ($fn == ingest || $fn == reconcile) && -n ${REGRAG_DOCUMENTAI_PROCESSOR:-} ]]; then
    vars+=("REGRAG_DOCUMENTAI_PROCESSOR=$REGRAG_DOCUMENTAI_PROCESSOR")
    vars+=("REGRAG_DOCUMENTAI_LOCATION=${REGRAG_DOCUMENTAI_LOCATION:-us}")
  fi
  local var
  for var in "${vars[@]}"; do
    [[ $var != *";"* ]] || die "${var%%=*} must not contain ';' (the --set-env-vars separator)"
  done
  local IFS=';'
  printf '^;^%s' "${vars[*]}"
}

# build/<fn>/: the function's main.py and requirements.txt next to a copy of the shared package.
stage() {
  local fn=$1 dir="$BUILD/$1"
  [[ -f "$ROOT/functions/$fn/main.py" && -f "$ROOT/functions/$fn/requirements.txt" ]] ||
    die "functions/$fn needs main.py and requirements.txt"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$ROOT/functions/$fn/main.py" "$ROOT/functions/$fn/requirements.txt" "$dir/"
  cp -R "$ROOT/shared/regrag" "$dir/regrag"
  find "$dir" -name __pycache__ -type d -prune -exec rm -rf {} +
  printf '%s\n' '__pycache__/' '*.pyc' '.gcloudignore' >"$dir/.gcloudignore"
}

# Right after deploying an event function: its trigger identity (the function's own service account, given as
# --trigger-service-account) may invoke it. Eventarc pushes each event with that identity's token, and Cloud Run
# refuses it without roles/run.invoker on the function's service (Cloud Run's storage-trigger page: the trigger
# identity needs Cloud Run Invoker). The binding only exists once the function does, so it is granted here, before
# the dead-letter policy below: until then a refused event is simply redelivered, never dead-lettered. Terraform
# (infra/iam.tf, step 3) holds the same binding, so a later apply finds it in place.
invoker() {
  local fn=$1 sa=$2
  run gcloud functions add-invoker-policy-binding "$fn" --region="$REGRAG_GCP_REGION" \
    --project="$REGRAG_GCP_PROJECT" --member="serviceAccount:$sa"
}

# After deploying an event function: its Eventarc subscription dead-letters after MAX_DELIVERY_ATTEMPTS.
dead_letter() {
  local fn=$1 trigger subscription number
  trigger=$(capture "EVENTARC_TRIGGER_OF_$fn" gcloud functions describe "$fn" --gen2 \
    --region="$REGRAG_GCP_REGION" --project="$REGRAG_GCP_PROJECT" --format='value(eventTrigger.trigger)')
  subscription=$(capture "EVENTARC_SUBSCRIPTION_OF_$fn" gcloud eventarc triggers describe "$trigger" \
    --location="$REGRAG_GCP_REGION" --project="$REGRAG_GCP_PROJECT" \
    --format='value(transport.pubsub.subscription)')
  if [[ -z ${PROJECT_NUMBER:-} ]]; then
    PROJECT_NUMBER=$(capture PROJECT_NUMBER gcloud projects describe "$REGRAG_GCP_PROJECT" \
      --format='value(projectNumber)')
  fi
  number=$PROJECT_NUMBER
  run gcloud pubsub subscriptions update "$subscription" --project="$REGRAG_GCP_PROJECT" \
    --dead-letter-topic="regrag-$fn-dead" --max-delivery-attempts="$MAX_DELIVERY_ATTEMPTS"
  # the Pub/Sub service agent forwards to the dead-letter topic (publisher there: infra/iam.tf) and must be
  # able to acknowledge on the source subscription, which Eventarc created and Terraform cannot name
  run gcloud pubsub subscriptions add-iam-policy-binding "$subscription" --project="$REGRAG_GCP_PROJECT" \
    --member="serviceAccount:service-$number@gcp-sa-pubsub.iam.gserviceaccount.com" --role=roles/pubsub.subscriber
}

# The URLs of the rerank and compose functions, for query (absent ones are left out: query then does that
# stage in process).
remote_urls() {
  local fn url
  REMOTE_URLS=()
  for fn in rerank compose; do
    url=$(capture "URL_OF_$fn" gcloud functions describe "$fn" --gen2 --region="$REGRAG_GCP_REGION" \
      --project="$REGRAG_GCP_PROJECT" --format='value(serviceConfig.uri)' 2>/dev/null) || url=""
    [[ -n $url ]] && REMOTE_URLS+=("REGRAG_${fn^^}_URL=$url")
  done
  return 0
}

deploy() {
  local fn=$1 name trigger memory timeout retry account secrets ingress
  read -r name trigger memory timeout retry account secrets ingress <<<"$(row_of "$fn")"
  [[ $name == query ]] && remote_urls
  stage "$name"
  local sa="$account@$REGRAG_GCP_PROJECT.iam.gserviceaccount.com"
  local args=(
    gcloud functions deploy "$name" --gen2 --runtime="$RUNTIME" --region="$REGRAG_GCP_REGION"
    --project="$REGRAG_GCP_PROJECT" --source="$BUILD/$name" --entry-point="$name" --memory="$memory" --cpu=1
    --timeout="$timeout" --service-account="$sa" --set-env-vars="$(env_vars "$name")" --max-instances=10 --quiet
  )
  case $trigger in
  bucket) args+=(--trigger-bucket="$REGRAG_BUCKET" --trigger-location="$REGRAG_GCP_REGION") ;;
  topic:chunked) args+=(--trigger-topic="$TOPIC_CHUNKED") ;;
  topic:embedded) args+=(--trigger-topic="$TOPIC_EMBEDDED") ;;
  http) args+=(--trigger-http --no-allow-unauthenticated --concurrency=8) ;;
  *) die "unknown trigger $trigger for $name" ;;
  esac
  if [[ $trigger != http ]]; then
    args+=(--trigger-service-account="$sa" --concurrency=1)
  fi
  [[ $retry == yes ]] && args+=(--retry)
  case $ingress in
  internal) args+=(--ingress-settings=internal-only) ;;
  all) args+=(--ingress-settings=all) ;;
  *) die "unknown ingress $ingress for $name" ;;
  esac
  if [[ $secrets == gemini && -n ${REGRAG_GEMINI_SECRET:-} ]]; then
    args+=(--set-secrets="GEMINI_API_KEY=$REGRAG_GEMINI_SECRET:latest")
  fi
  run "${args[@]}"
  if [[ $trigger != http ]]; then
    invoker "$name" "$sa"
    dead_letter "$name"
  fi
  return 0
}

# The doctor, with query's settings (it embeds, searches and reranks as query does), before any traffic.
doctor() {
  local vars
  IFS=';' read -r -a vars <<<"$(env_vars query | cut -c4-)"
  [[ -n ${REGRAG_GEMINI_SECRET:-} ]] && vars+=("REGRAG_GEMINI_SECRET=$REGRAG_GEMINI_SECRET")
  run env "${vars[@]}" PYTHONPATH="$ROOT/shared" "${PYTHON:-python3}" -m regrag.entrypoints.cli doctor ||
    die "regrag doctor failed: fix the model, region or index above before deploying (or --skip-doctor)"
}

main() {
  local targets=() fn skip_doctor=0
  for fn in "$@"; do
    case $fn in
    --dry-run) DRY_RUN=1 ;;
    --skip-doctor) skip_doctor=1 ;;
    -h | --help)
      sed -n '2,25p' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    -*) die "unknown option $fn" ;;
    *)
      row_of "$fn" >/dev/null || die "unknown function $fn (known: $(all_functions | tr '\n' ' '))"
      targets+=("$fn")
      ;;
    esac
  done
  if ((${#targets[@]} == 0)); then
    mapfile -t targets < <(all_functions)
  fi
  check_env
  TOPIC_CHUNKED=${REGRAG_TOPIC_CHUNKED:-regrag-chunked}
  TOPIC_EMBEDDED=${REGRAG_TOPIC_EMBEDDED:-regrag-embedded}
  TOPIC_ALERTS=${REGRAG_TOPIC_ALERTS:-regrag-alerts}
  ((skip_doctor)) || doctor
  for fn in "${targets[@]}"; do
    deploy "$fn"
  done
}

main "$@"
