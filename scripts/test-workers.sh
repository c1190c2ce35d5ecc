#!/usr/bin/env bash
# How many pytest-xdist workers `make test` runs: one per core, up to one per 6 GB of memory, at
# most 2 (two workers bring the suite under 30 minutes on a two-core machine; more load the
# brokers and browsers of the real-cluster tests past their deadlines), at least 1.
set -euo pipefail
cores=$(nproc)
mem_gb=$(awk '/^MemTotal:/ {print int($2 / 1048576)}' /proc/meminfo)
n=$(( cores < mem_gb / 6 ? cores : mem_gb / 6 ))
(( n > 2 )) && n=2
(( n < 1 )) && n=1
echo "$n"
