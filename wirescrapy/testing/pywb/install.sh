#!/usr/bin/env bash
# Installs pywb, the replay tool of tests/e2e/test_warc.py, into a virtualenv of its own. pywb brings
# brotlipy, whose `brotli` module would shadow Google's Brotli that Scrapy decodes `br` bodies with, and
# pins old redis and gevent: it cannot share the project's environment.
# Running it again is harmless. Usage: install.sh [VENV]   (default: $WIRE_PYWB_VENV, else /opt/pywb-venv)
set -euo pipefail
venv=${1:-${WIRE_PYWB_VENV:-/opt/pywb-venv}}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! "$venv/bin/python" -c 'import pywb' 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check pywb==2.10.0
fi
"$venv/bin/wayback" --help >/dev/null
echo "pywb is installed in $venv; tests/e2e/test_warc.py finds it with WIRE_PYWB_VENV=$venv"
