#!/usr/bin/env bash
# `make demo`: the local sandbox with demo data and a throttled reassignment in flight, and the
# console on it. A sandbox that already runs gets the demo data it lacks. Ctrl-C or SIGTERM stops
# Streamlit and the sandbox, leaving no process or port behind. BROKERS=6 starts six brokers (two per rack).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export PYTHONPATH=.
st_pid=""
stop() {
  trap - INT TERM EXIT
  if [ -n "$st_pid" ]; then
    kill -TERM "$st_pid" 2>/dev/null || true
    wait "$st_pid" 2>/dev/null || true
  fi
  "$PY" -m console sandbox down || true
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$PY" -m console sandbox up --demo-reassignment ${BROKERS:+--brokers "$BROKERS"} >/dev/null
.venv/bin/streamlit run app.py --server.port "${PORT:-8501}" --server.headless "${HEADLESS:-false}" &
st_pid=$!
wait "$st_pid"
