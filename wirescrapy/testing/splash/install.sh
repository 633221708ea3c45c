#!/usr/bin/env bash
# Installs Splash 3.5, the rendering server scrapy-splash talks to, into a virtualenv, without Docker.
# QtWebKit's Python bindings exist only as Debian packages built for Debian's python3, so the venv is made
# from /usr/bin/python3 and sees its site-packages; PyPI gives only Splash and its Lua runtime.
# Every step is skipped when it is done already: running it again is harmless and repairs a broken install.
# Usage: install.sh [VENV]   (default: $WIRE_SPLASH_VENV, else /opt/splash-venv). apt-get needs root.
set -euo pipefail
venv=${1:-${WIRE_SPLASH_VENV:-/opt/splash-venv}}
here=$(cd "$(dirname "$0")" && pwd)

# Splash serves with Qt's offscreen platform (supervise.sh), so no X server is needed. It imports
# QtWebEngine at start even when it renders with WebKit. curl is supervise.sh's health check.
packages=(python3-venv python3-pyqt5 python3-pyqt5.qtwebkit python3-pyqt5.qtwebengine python3-qt5reactor
          python3-twisted python3-psutil python3-pil python3-attr curl)
if ! dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi

[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
if ! "$venv/bin/python" -c 'import splash, adblockparser, lupa' 2>/dev/null; then
  # --no-deps: Splash's own requirements would bring PyQt5 from PyPI over Debian's QtWebKit build.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps splash==3.5 adblockparser==0.7
  "$venv/bin/pip" install --quiet --disable-pip-version-check lupa==2.8
fi

# Splash's Lua sandbox is written for Lua 5.2, the runtime of its Docker image; lupa defaults to its newest.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo 'import lupa, lupa.lua52; lupa._newest_lib = lupa.lua52' >"$site/splash_lupa_lua52.pth"
"$venv/bin/python" "$here/patch_py311.py"
# What Splash imports when it starts: the Qt bindings, its Lua scripts' runtime (Lua 5.2).
QT_QPA_PLATFORM=offscreen "$venv/bin/python" -c \
  'import lupa, splash.server, splash.qtrender_lua; assert lupa.LuaRuntime().eval("_VERSION") == "Lua 5.2"'
echo "Splash 3.5 is installed in $venv; serve it with: $here/supervise.sh $venv [PORT]"
