#!/usr/bin/env bash
# End-to-end test of the LiteLLM guardrail: the `openai` client -> a real
# LiteLLM proxy (pinned, from PyPI) with the guardrail in its config.yaml ->
# a fake OpenAI-compatible upstream on 127.0.0.1 that cuts an email and an
# SSN across SSE chunks. The proxy serves the upstream twice: `guarded`
# (with the guardrail) and `plain` (without: the control, which must leak).
#
# Usage: crates/stream-replace-py/scripts/litellm_e2e.sh
#   E2E_VENV=dir            reuse (or create) this venv instead of a fresh one
#   STREAM_REPLACE_WHEEL=f  install this wheel instead of building the crate
#   STREAM_REPLACE_INSTALLED=1  use the stream-replace already in E2E_VENV
#                           (after `maturin develop` there)
# Every step is bounded in time; every process started here is stopped on exit.
set -euo pipefail

LITELLM_VERSION=1.108.0
OPENAI_VERSION=3.57.0
CRATE="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
VENV="${E2E_VENV:-$WORK/venv}"
PIDS=()
START=$(date +%s)

step() { echo "[litellm-e2e $(( $(date +%s) - START ))s] $*"; }

cleanup() {
    local rc=$?
    for pid in "${PIDS[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]:-}"; do
        [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
    done
    if [ "$rc" -ne 0 ] && [ -f "$WORK/proxy.log" ]; then
        echo "--- proxy log (last 60 lines) ---"
        tail -n 60 "$WORK/proxy.log" || true
    fi
    rm -rf "$WORK"
    step "done (exit $rc)"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs a command under a time limit, in the background so that a signal
# to this script stops it at once (cleanup kills it) instead of after it.
bounded() { # seconds command...
    local limit=$1
    shift
    timeout "$limit" "$@" &
    local pid=$!
    PIDS+=("$pid")
    wait "$pid"
}

free_port() {
    "$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for() { # url seconds
    local url=$1 deadline=$(( $(date +%s) + $2 ))
    until "$VENV/bin/python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)" "$url" 2>/dev/null; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "timed out waiting for $url" >&2
            return 1
        fi
        sleep 1
    done
}

step "venv at $VENV"
[ -x "$VENV/bin/python" ] || bounded 120 python3 -m venv "$VENV"
bounded 900 "$VENV/bin/pip" install -q --disable-pip-version-check \
    "litellm[proxy]==$LITELLM_VERSION" "openai==$OPENAI_VERSION" "pytest>=8" "hypothesis>=6" "pytest-asyncio>=0.23"
step "litellm $LITELLM_VERSION and openai $OPENAI_VERSION installed"
if [ -n "${STREAM_REPLACE_INSTALLED:-}" ]; then
    "$VENV/bin/python" -c "import stream_replace.guard"
elif [ -n "${STREAM_REPLACE_WHEEL:-}" ]; then
    bounded 300 "$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$STREAM_REPLACE_WHEEL"
else
    bounded 1200 "$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$CRATE"
fi
step "stream-replace installed"

# The fake upstream.
"$VENV/bin/python" "$CRATE/tests/test_litellm_e2e.py" upstream "$WORK/upstream.port" &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/upstream.port" ] && break; sleep 0.2; done
UPSTREAM_PORT=$(cat "$WORK/upstream.port")
wait_for "http://127.0.0.1:$UPSTREAM_PORT/v1/models" 20
step "upstream on 127.0.0.1:$UPSTREAM_PORT"

# The proxy, with the guardrail on the `guarded` model only.
cat > "$WORK/config.yaml" <<YAML
model_list:
  - model_name: guarded
    litellm_params:
      model: openai/fake-model
      api_base: http://127.0.0.1:$UPSTREAM_PORT/v1
      api_key: sk-upstream
      guardrails: [stream-replace]
  - model_name: plain
    litellm_params:
      model: openai/fake-model
      api_base: http://127.0.0.1:$UPSTREAM_PORT/v1
      api_key: sk-upstream

guardrails:
  - guardrail_name: stream-replace
    litellm_params:
      guardrail: stream_replace.integrations.litellm.StreamReplaceGuardrail
      mode: post_call
      default_on: false
      stream_replace:
        pack: pii
        pack_actions:
          email: {counter: EMAIL}
        on_block: finish
YAML
PROXY_PORT=$(free_port)
# A fresh key per run: the proxy refuses to start without one.
MASTER_KEY="sk-$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(24))')"
(
    cd "$WORK"
    export LITELLM_MASTER_KEY="$MASTER_KEY" LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_TELEMETRY=False
    exec "$VENV/bin/litellm" --config "$WORK/config.yaml" --host 127.0.0.1 --port "$PROXY_PORT" --num_workers 1
) > "$WORK/proxy.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$PROXY_PORT/health/liveliness" 180
step "litellm proxy on 127.0.0.1:$PROXY_PORT"

E2E_PROXY_URL="http://127.0.0.1:$PROXY_PORT/v1" E2E_API_KEY="$MASTER_KEY" LITELLM_LOCAL_MODEL_COST_MAP=True \
    bounded 600 "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    "$CRATE/tests/test_litellm_e2e.py" "$CRATE/tests/test_litellm_hooks.py"
step "end-to-end tests passed in $(( $(date +%s) - START ))s"
