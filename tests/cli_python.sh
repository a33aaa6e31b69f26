#!/usr/bin/env bash
# cli_python.sh — the python helpers' own checks (python/contactlab): figure text as mathtext.
set -u
cd "$(dirname "$0")/.."
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
"$PY" tests/figures_check.py
