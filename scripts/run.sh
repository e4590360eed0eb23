#!/usr/bin/env bash
# run.sh: install what is missing, build (Release) and schedule the bundled
# graphs into out/, printing the table of figures.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDS_CHECKS=OFF >/dev/null
cmake --build build -j2
./build/dansched schedule -o out "$@"
