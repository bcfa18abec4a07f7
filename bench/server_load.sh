#!/usr/bin/env bash
# Load tests of `memfit serve` on loopback with wrk (Debian package) and bench/slow_clients.py.
#   bench/server_load.sh [build/memfit] [seconds per wrk run, default 10]
# 1. cached: one cached estimate POSTed by 32 keep-alive connections (target >= 20,000/s).
# 2. uncached: distinct estimates of catalog models (every one a cache miss) from 32 keep-alive
#    connections, (a) with the Hub endpoint on a closed local port (HubGuard remembers the
#    failure), (b) with a reachable stand-in Hub that answers 404 (python3 -m http.server on an
#    empty folder: the catalog stands in) and (c) with HF_HUB_OFFLINE=1 (targets >= 1,500/s
#    each, p99 < 50 ms).
# 3. slow/idle: 1,000 slow and 1,000 idle connections while health and a cached estimate are
#    polled (every answer within 100 ms).
# Results in docs/benchmarks.md. The caches and HOME point at a fresh temporary directory.
set -euo pipefail
binary="$(realpath "${1:-build/memfit}")"
seconds="${2:-10}"
here="$(cd "$(dirname "$0")" && pwd)"
command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)"; exit 1; }
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d)
server=""
hub=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  [ -n "$hub" ] && kill "$hub" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export HOME="$work/home" HF_HOME="$work/hf" MEMFIT_CACHE="$work/memfit" XDG_CACHE_HOME="$work/xdg"
unset HF_TOKEN HF_HUB_OFFLINE TRANSFORMERS_OFFLINE HF_ENDPOINT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_server [VAR=value ...]: serves on $port with that environment.
start_server() {
  port=$(free_port)
  env "$@" "$binary" serve --port "$port" 2>/dev/null &
  server=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/api/v1/health" >/dev/null && return; sleep 0.1; done
  echo "the server did not start"; exit 1
}
stop_server() { kill "$server"; wait "$server" 2>/dev/null || true; server=""; }

report='
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write +
                 summary.errors.status + summary.errors.timeout
  io.write(string.format("%s: %.0f requests/s, p50 %.2f ms, p99 %.2f ms, max %.2f ms, errors %d (non-2xx %d, timeout %d)\n",
    label, summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, errors, summary.errors.status,
    summary.errors.timeout))
end'

cached_body='{"model": "meta-llama/Llama-3.1-8B", "dtypes": ["float16", "int4"]}'
cat >"$work/cached.lua" <<LUA
label = "cached estimate"
wrk.method = "POST"
wrk.body = '$cached_body'
wrk.headers["Content-Type"] = "application/json"
$report
LUA

# Every catalog model with every non-empty set of dtypes: 31 x the catalog's size distinct
# requests, asked in a cycle longer than the response cache (512), so each one is a miss.
models=$("$binary" models --format json | python3 -c 'import json,sys; print(",".join("\"%s\"" % m["id"] for m in json.load(sys.stdin)))')
cat >"$work/uncached.lua" <<LUA
label = os.getenv("LABEL")
models = {$models}
dtypes = {"float32", "float16", "bfloat16", "int8", "int4"}
threads, counter = 0, 0
setup = function(thread) thread:set("id", threads); threads = threads + 1 end
request = function()
  local n = counter * 2 + id
  counter = counter + 1
  local model = models[n % #models + 1]
  local mask = math.floor(n / #models) % 31 + 1
  local chosen = {}
  for i, d in ipairs(dtypes) do
    if math.floor(mask / 2 ^ (i - 1)) % 2 == 1 then chosen[#chosen + 1] = '"' .. d .. '"' end
  end
  local body = '{"model": "' .. model .. '", "dtypes": [' .. table.concat(chosen, ", ") .. ']}'
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end
$report
LUA

echo "memfit serve load test: $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
start_server
curl -sf -X POST "http://127.0.0.1:$port/api/v1/estimate-memory" -d "$cached_body" >/dev/null  # warm
wrk -t2 -c32 -d"${seconds}s" -s "$work/cached.lua" "http://127.0.0.1:$port/api/v1/estimate-memory" | tail -1
stop_server

closed=$(free_port)  # free a moment ago: nothing listens there
start_server HF_ENDPOINT="http://127.0.0.1:$closed"
LABEL="uncached, Hub unreachable" wrk -t2 -c32 -d"${seconds}s" -s "$work/uncached.lua" \
  "http://127.0.0.1:$port/api/v1/estimate-memory" | tail -1
stop_server

# A reachable stand-in Hub that answers 404 for every model: the catalog stands in.
mkdir -p "$work/empty_hub"
hub_port=$(free_port)
(cd "$work/empty_hub" && exec python3 -m http.server "$hub_port" --bind 127.0.0.1 >/dev/null 2>&1) &
hub=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$hub_port/" && break; sleep 0.1; done
start_server HF_ENDPOINT="http://127.0.0.1:$hub_port"
LABEL="uncached, Hub reachable (404 stand-in)" wrk -t2 -c32 -d"${seconds}s" -s "$work/uncached.lua" \
  "http://127.0.0.1:$port/api/v1/estimate-memory" | tail -1
stop_server
kill "$hub" 2>/dev/null; wait "$hub" 2>/dev/null || true; hub=""

start_server HF_HUB_OFFLINE=1
LABEL="uncached, HF_HUB_OFFLINE=1" wrk -t2 -c32 -d"${seconds}s" -s "$work/uncached.lua" \
  "http://127.0.0.1:$port/api/v1/estimate-memory" | tail -1
stop_server

start_server
curl -sf -X POST "http://127.0.0.1:$port/api/v1/estimate-memory" -d "$cached_body" >/dev/null  # warm
python3 "$here/slow_clients.py" "$port" --slow 1000 --idle 1000 --seconds 30
stop_server
