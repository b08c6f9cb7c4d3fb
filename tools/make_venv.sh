#!/usr/bin/env bash
# Create the project virtualenv: tools/make_venv.sh PYTHON VENV_DIR
# Needs Python >= 3.11. Debian's own python3 has no ensurepip until python3-venv is installed; when we are
# root on such a machine that package is installed and the venv is created again.
set -euo pipefail

python="${1:-python3}"
venv="${2:-.venv}"

if ! command -v "$python" >/dev/null 2>&1; then
    echo "error: $python not found; pass PYTHON=/path/to/python3.11" >&2
    exit 1
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "error: Python >= 3.11 needed, $python is $("$python" -V 2>&1)" >&2
    exit 1
fi

create() { rm -rf "$venv" && "$python" -m venv "$venv"; }

if ! create; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1 \
        && ! "$python" -c 'import ensurepip' >/dev/null 2>&1; then
        echo "ensurepip missing: installing Debian's python3-venv" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq python3-venv
        create || { rm -rf "$venv"; exit 1; }
    else
        rm -rf "$venv"
        exit 1
    fi
fi
echo "created $venv with $("$venv/bin/python" -V 2>&1)"
