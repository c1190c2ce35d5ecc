#!/usr/bin/env bash
# Install the Debian packages the console needs when they are missing: Java 17, Maven, Chromium,
# and PostgreSQL (the suite starts a throwaway cluster of its own for the shared store's tests).
set -euo pipefail
need=()
command -v java >/dev/null || need+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || need+=(maven)
[ -x /usr/bin/chromium ] || need+=(chromium chromium-driver)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
[ ${#need[@]} -eq 0 ] && exit 0
echo "Installing ${need[*]} ..." >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${need[@]}" >/dev/null
