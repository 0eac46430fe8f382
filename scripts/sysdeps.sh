#!/usr/bin/env bash
# Installs the Debian packages kcm needs when they are missing: graphviz (the `dot` renderer),
# zookeeper (the real ZooKeeper the implementation's integration tests start on loopback) and
# chromium (the headless browser the tests open report.html in).
set -euo pipefail

have() {
  case "$1" in
    graphviz) command -v dot >/dev/null 2>&1 ;;
    zookeeper) [ -f /usr/share/zookeeper/bin/zkServer.sh ] || [ -d /usr/share/java/zookeeper ] || command -v zkServer.sh >/dev/null 2>&1 ;;
    chromium) command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}

missing=()
for pkg in "$@"; do have "$pkg" || missing+=("$pkg"); done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "kcm: error: missing system packages (${missing[*]}) and no apt-get to install them; install them by hand" >&2
  exit 2
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "kcm: error: missing system packages (${missing[*]}); run as root or install them by hand" >&2
    exit 2
  fi
fi
echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
