#!/usr/bin/env bash
# `make demo`: the local sandbox with demo data and a throttled reassignment in flight, and the
# console on it. A sandbox that already runs gets the demo data it lacks. The demo collects a
# snapshot every COLLECT_EVERY seconds (default 10) into the history and runs the history job on
# Spark every HISTORY_EVERY seconds (default 300, the first after a minute), so the History page
# and the calibrated ETAs have something to show. Ctrl-C or SIGTERM stops Streamlit, the collector,
# the history job and the sandbox, leaving no process or port behind. BROKERS=6 starts six brokers
# (two per rack). The sandbox runs Kafka 4.x in KRaft mode; KAFKA=3.9.1 names another release and
# ZOOKEEPER=1 starts it in ZooKeeper mode (3.x only: `KAFKA=3.9.1 ZOOKEEPER=1 make demo` shows the
# ZooKeeper view, the API-vs-ZooKeeper findings and the legacy path). DEV=1 (`make dev`) runs Streamlit with its development settings: the file
# watcher, rerun on save and a full collection after each run (docs/DEVELOPMENT.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export PYTHONPATH=.
st_pid="" collect_pid="" history_pid=""
stop() {
  trap - INT TERM EXIT
  for pid in "$st_pid" "$collect_pid"; do
    if [ -n "$pid" ]; then
      kill -TERM "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  if [ -n "$history_pid" ]; then
    pkill -TERM -P "$history_pid" 2>/dev/null || true
    kill -TERM "$history_pid" 2>/dev/null || true
    wait "$history_pid" 2>/dev/null || true
  fi
  "$PY" -m console sandbox down || true
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
up=(--demo-reassignment)
if [ -n "${KAFKA:-}" ]; then up+=(--kafka "$KAFKA"); fi
if [ -n "${ZOOKEEPER:-}" ]; then up+=(--zookeeper); fi
if [ -n "${BROKERS:-}" ]; then up+=(--brokers "$BROKERS"); fi
info=$("$PY" -m console sandbox up "${up[@]}")
field() { printf '%s' "$info" | "$PY" -c "import json, sys; print(json.load(sys.stdin)['$1'] or '')"; }
# the sandbox's console users (published, sandbox-only passwords) live in the sandbox's own users
# file; the demo console uses it unless CONSOLE_USERS_FILE names another
export CONSOLE_USERS_FILE="${CONSOLE_USERS_FILE:-$(field console_users_file)}"
history=$("$PY" -c "from console.core.paths import history_dir; print(history_dir())")
mkdir -p "$history"
where=(--bootstrap-server "$(field bootstrap_servers)")
zookeeper=$(field zookeeper)
if [ -n "$zookeeper" ]; then where+=(--zookeeper "$zookeeper"); fi
"$PY" -m console collect "${where[@]}" --out "$history/snapshots" --every "${COLLECT_EVERY:-10}" \
  2>>"$history/collect.log" &
collect_pid=$!
(
  sleep 60
  while true; do
    "$PY" -m console pipeline history --master 'local[2]' >/dev/null 2>>"$history/history-job.log" || true
    sleep "${HISTORY_EVERY:-300}"
  done
) &
history_pid=$!
dev=()
if [ -n "${DEV:-}" ]; then
  dev=(--server.fileWatcherType auto --server.runOnSave true --runner.postScriptGC true)
fi
.venv/bin/streamlit run serve.py --server.port "${PORT:-8501}" --server.headless "${HEADLESS:-false}" "${dev[@]}" &
st_pid=$!
wait "$st_pid"
