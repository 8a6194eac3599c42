#!/usr/bin/env bash
# One-time (idempotent) set-up of a fresh machine: a virtual environment in .venv with jetspark and its
# development dependencies, and the Debian packages below (graphviz, postgresql-15, chromium) when missing.
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

# Debian packages the project uses, each installed only when missing (one apt-get for all of them):
#   graphviz        `dot`, to render DAGs and plans
#   postgresql-15   the private PostgreSQL cluster that tests/connectors start (initdb, pg_ctl)
#   chromium(+driver) the headless browser of the web UI's test (tests/runtime/webui)
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql-15)
command -v chromium >/dev/null 2>&1 || missing+=(chromium chromium-driver)
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing Debian packages: ${missing[*]}..." >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if command -v apt-get >/dev/null 2>&1; then
        $SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "warning: cannot install ${missing[*]} automatically (no apt-get): install them to render pictures and run every test." >&2
    fi
fi
