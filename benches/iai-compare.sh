#!/usr/bin/env bash
# Instruction counts of whole steps (benches/benches/iai.rs) against a saved
# baseline: `save` records the baseline, `compare` (default) runs again and
# fails if any benchmark's instruction count (Ir) grew by more than 2%.
#
# Installs iai-callgrind-runner (same version as the library) if missing;
# needs valgrind. Builds with -C target-cpu=haswell into target/iai:
# valgrind 3.19 cannot decode the AVX-512 that the native build uses.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-compare}
version=0.16.1
if ! iai-callgrind-runner --version 2>/dev/null | grep -q "$version"; then
    cargo install iai-callgrind-runner --version "$version" --locked
fi
command -v valgrind >/dev/null || { echo "valgrind is required"; exit 1; }
export RUSTFLAGS="-C target-cpu=haswell"
export CARGO_TARGET_DIR=target/iai
bench=(cargo bench -p archipelago-benches --features iai --bench iai --)
case "$mode" in
    save) "${bench[@]}" --save-baseline=main ;;
    compare) "${bench[@]}" --baseline=main --callgrind-limits='ir=2.0%' ;;
    *) echo "usage: $0 [save|compare]"; exit 2 ;;
esac
