#!/usr/bin/env bash
# Installs the package from this checkout into a fresh venv, as a user
# would (`pip install ./crates/stream-replace-py`), and runs its pytest
# suite (tests/) against the installed copy.
#
# Needs python3 (3.9 or later) with pip and venv, and a Rust toolchain;
# PYTHON=python3.13 scripts/test.sh tests with another interpreter.
# Extra arguments go to pytest, e.g. `scripts/test.sh -k translate`.
set -euo pipefail

crate="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"${PYTHON:-python3}" -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet "$crate" \
    "pytest>=8,<10" "hypothesis>=6.100,<7" "pytest-asyncio>=0.23,<2"

# From the crate directory, `import stream_replace` finds the installed
# package (the sources live under python/, which is not on the path).
cd "$crate"
"$py" -c 'import stream_replace, sys; print("testing", stream_replace.__file__, "on Python", sys.version.split()[0])'
"$py" -m pytest -q -p no:cacheprovider tests "$@"
