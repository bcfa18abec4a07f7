#!/usr/bin/env bash
# Load test of `memfit serve` on loopback with wrk (Debian package): a cached estimate, POSTed by
# 32 connections on 2 threads for 10 s. Target: >= 5,000 requests/s with no errors on two cores.
#   bench/server_load.sh [build/memfit]
set -euo pipefail
binary="${1:-build/memfit}"
port=$((20000 + RANDOM % 20000))
command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)"; exit 1; }
"$binary" serve --port "$port" 2>/dev/null &
server=$!
trap 'kill $server' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/api/v1/health" >/dev/null && break; sleep 0.1; done
body='{"model": "meta-llama/Llama-3.1-8B", "dtypes": ["float16", "int4"]}'
curl -sf -X POST "http://127.0.0.1:$port/api/v1/estimate-memory" -d "$body" >/dev/null  # warm the cache
script=$(mktemp)
cat >"$script" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
done = function(summary, latency, requests)
  io.write(string.format("requests/s: %.0f, errors: %d (connect %d, read %d, write %d, status %d, timeout %d)\n",
    summary.requests / (summary.duration / 1e6),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout,
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
LUA
wrk -t2 -c32 -d10s -s "$script" "http://127.0.0.1:$port/api/v1/estimate-memory"
rm -f "$script"
