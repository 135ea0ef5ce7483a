#!/usr/bin/env bash
# Debian packages the `peers` feature needs: joltc-sys builds Jolt 5.0.0 with
# cmake and generates its bindings with bindgen (clang + libclang).
set -euo pipefail
need=()
for p in cmake clang libclang-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
