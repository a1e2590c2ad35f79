#!/usr/bin/env bash
# Installs the Debian packages infersight's demo and tests use, when they are missing:
# prometheus + promtool, prometheus-alertmanager and victoria-metrics (real servers),
# chromium (HTML report checks).
# As root it runs apt-get itself (one `apt-get update` first, as a fresh machine needs);
# as another user it prints the one command to run and fails.
set -euo pipefail

need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)      # brings promtool too
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v victoria-metrics >/dev/null 2>&1 || need+=(victoria-metrics)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)  # serve tests
command -v chromium >/dev/null 2>&1 || need+=(chromium)            # renders the HTML report in tests
# the live lab (`infersight lab up`) runs its own processes on free loopback ports; under
# systemd the packages also enable their stock services on default ports, which it never uses
command -v haproxy >/dev/null 2>&1 || need+=(haproxy)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v prometheus-redis-exporter >/dev/null 2>&1 || need+=(prometheus-redis-exporter)
command -v prometheus-node-exporter >/dev/null 2>&1 || need+=(prometheus-node-exporter)
command -v stress-ng >/dev/null 2>&1 || need+=(stress-ng)
[ ${#need[@]} -eq 0 ] && exit 0

mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
if [ "$(id -u)" -ne 0 ]; then
  echo "infersight needs Debian packages: ${need[*]}. Run: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${need[*]}" >&2
  exit 1
fi
echo "Installing Debian packages: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
