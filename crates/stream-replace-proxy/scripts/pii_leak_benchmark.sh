#!/bin/sh
# Runs the public pii-leak-benchmark 0.6.0 against the proxy: v1 `ci` (the
# request boundary and restore checks) and v2 (echo restored, injected values
# redacted, every 2- and 3-part split, partial emission). Exits non-zero
# unless both pass. Takes a few minutes; needs python3 with pip.
#
#   crates/stream-replace-proxy/scripts/pii_leak_benchmark.sh
#
# OUT (default target/pii-leak-benchmark) receives the reports; SEED fixes
# the v2 fixture seed (default: a fresh one each run).
set -eu
cd "$(dirname "$0")/../../.."
python3 -m pip install --quiet "pii-leak-benchmark[validate]==0.6.0"
cargo build --release -p stream-replace-proxy
proxy=${CARGO_TARGET_DIR:-target}/release/stream-replace-proxy
# The example settings: listen 127.0.0.1:14000, upstream 127.0.0.1:18799/v1.
config=crates/stream-replace-proxy/examples/proxy.toml
out=${OUT:-target/pii-leak-benchmark}
rm -rf "$out"
mkdir -p "$out"

# v1: `ci` starts the proxy itself with the example settings, its
# UPSTREAM_BASE_URL (over the file's upstream) pointing at its capture.
pii-leak-benchmark ci --target-base-url http://127.0.0.1:14000/v1 --out "$out/v1" \
  --start-command "$proxy --config $config" --upstream-env UPSTREAM_BASE_URL

# v2: the proxy in front of the capture on port 18799.
"$proxy" --config "$config" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
python3 - <<'WAIT'
import socket, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", 14000), timeout=1).close()
        break
    except OSError:
        time.sleep(0.1)
else:
    raise SystemExit("the proxy did not start listening on 127.0.0.1:14000")
WAIT
pii-leak-benchmark-v2 --validate --out "$out/v2" --only stream-replace-proxy \
  --gateway-url http://127.0.0.1:14000/v1/chat/completions --upstream-port 18799 \
  --oracle union-worst-case --partial-emission ${SEED:+--seed "$SEED"} \
  --json-out "$out/v2/summary.json"

python3 - "$out/v2" <<'CHECK'
import json, sys
d = sys.argv[1]
row = json.load(open(d + "/summary.json"))["rows"][0]
pe = json.load(open(d + "/stream-replace-proxy.partial-emission.json"))["metrics"]
print("v2 seed", row["seed"], "outcome", row["outcome"], "FidelityRate", row["fidelity_rate"],
      "LeakRate single", row["leak_single_chunk"], "adversarial", row["leak_adversarial"],
      "partial emission", pe["partial_emission_rate"]["overall"], "over", pe["partitions_tried"], "partitions")
ok = (row["outcome"] == "pass" and row["schema_valid"] and row["fidelity_rate"] == 1.0
      and row["leak_single_chunk"] == 0.0 and row["leak_adversarial"] == 0.0
      and row["inconclusive"] == 0 and pe["cases_partial_emission"] == 0)
sys.exit(0 if ok else 1)
CHECK
