#!/usr/bin/env bash
# One-time (idempotent) set-up of a fresh machine: a virtual environment in .venv with jetspark and its
# development dependencies, and graphviz's `dot` program (Debian/Ubuntu package `graphviz`) when missing.
# Needs Python 3.11+ and Java 17 (for Spark). Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "jetspark needs Python 3.11 or newer; $PY is $("$PY" --version 2>&1). Set PYTHON=/path/to/python3.11." >&2
    exit 1
fi
if ! command -v java >/dev/null 2>&1; then
    echo "warning: no 'java' on PATH; Spark needs Java 17 (Debian: apt-get install openjdk-17-jre-headless)." >&2
fi

if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
stamp=.venv/.jetspark-installed
want=$(cat pyproject.toml | sha1sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "Installing jetspark and its dependencies into .venv (first run downloads Spark, ~450 MB)..." >&2
    # (this machine's pip configuration names local package mirrors that may be absent: drop those warnings)
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]' 2>&1 \
        | { grep -v "^WARNING: Location '" || true; }
    echo "$want" > "$stamp"
fi

if ! command -v dot >/dev/null 2>&1; then
    echo "Installing graphviz's 'dot' program..." >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if command -v apt-get >/dev/null 2>&1; then
        $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq graphviz >/dev/null
    else
        echo "warning: cannot install graphviz automatically; install the 'graphviz' package to render pictures." >&2
    fi
fi

# PostgreSQL 15 for the connectors' tests (tests/connectors start a private cluster with its binaries).
if [ ! -x /usr/lib/postgresql/15/bin/initdb ]; then
    echo "Installing PostgreSQL 15 (Debian package postgresql-15) for the connector tests..." >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if command -v apt-get >/dev/null 2>&1; then
        $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq postgresql-15 >/dev/null
    else
        echo "warning: cannot install PostgreSQL automatically; install 'postgresql-15' to run tests/connectors." >&2
    fi
fi
