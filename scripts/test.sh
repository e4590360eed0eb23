#!/usr/bin/env bash
# test.sh: install what is missing, build into build/ (assertions and
# debug checks live: DS_CHECKS) and run every test.
# The exit status is ctest's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/deps.sh
cmake -S . -B build -DDS_CHECKS=ON >/dev/null
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2 "$@"
