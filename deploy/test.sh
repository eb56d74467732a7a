#!/usr/bin/env bash
# Runs the whole test suite. [gpu] tests report "skipped" without a GPU;
# on the GPU machine the same command runs them (or: ctest -L gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build --output-on-failure -j"${GLEAM_TEST_JOBS:-2}" "$@"
