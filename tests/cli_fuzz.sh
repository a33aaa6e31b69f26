#!/usr/bin/env bash
# cli_fuzz.sh — the fuzzing smoke run of `make test`: scripts/fuzz.sh for 20 s per target (the scene
# loader, the --set overrides, the mesh readers; 60 s in all) under ASan + UBSan + LeakSanitizer.
# Fails on any crash, leak or sanitizer report (the input is kept in tests/fuzz/found/), or when
# clang's libFuzzer is missing (scripts/install-deps.sh installs clang, libclang-rt-dev, libomp-dev).
set -u
cd "$(dirname "$0")/.."
bash scripts/fuzz.sh "${CT_FUZZ_SECONDS:-20}"
