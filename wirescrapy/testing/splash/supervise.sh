#!/usr/bin/env bash
# Serves Splash (installed by install.sh) on 127.0.0.1 and restarts it when it stops answering /_ping, as a
# container's restart policy would. Why: a page whose script never returns freezes the whole Splash process,
# every render and /_ping included. Splash's own render timeout waits on that frozen loop, and the process
# ignores SIGTERM, so only SIGKILL from outside ends it. A client sees its request fail with a lost
# connection when the frozen Splash is killed, and connections refused while the new one starts.
# Usage: supervise.sh [VENV] [PORT] [CHECK_S]   (defaults: $WIRE_SPLASH_VENV or /opt/splash-venv, 8050, 3)
# It runs in the foreground: stop it with `kill PID`, which stops its Splash too. Splash's log goes to
# stdout; each restart is one line on stderr, "splash-supervise: restart N at EPOCH (...)".
set -u
venv=${1:-${WIRE_SPLASH_VENV:-/opt/splash-venv}}
port=${2:-8050}
every=${3:-3}
starting_s=60  # how long a new Splash may take to answer its first ping on a loaded machine
splash=
nap=

start() {
  # WebKit, as Splash's Docker image renders by default; Qt draws offscreen, so no X server is needed.
  QT_QPA_PLATFORM=offscreen QTWEBENGINE_DISABLE_SANDBOX=1 \
    "$venv/bin/splash" --ip 127.0.0.1 --port "$port" --disable-xvfb --browser-engines=webkit &
  splash=$!
  answered=0
  started=$SECONDS
}

stop_splash() {
  [ -n "$splash" ] || return 0
  kill "$splash" 2>/dev/null  # a Splash that is not frozen stops on SIGTERM
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$splash" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$splash" 2>/dev/null
  wait "$splash" 2>/dev/null
  splash=
}

quit() {
  stop_splash
  [ -z "$nap" ] || kill "$nap" 2>/dev/null
  exit 0
}
trap quit TERM INT HUP

answers() {
  kill -0 "$splash" 2>/dev/null &&
    curl --noproxy '*' --silent --max-time "$every" --output /dev/null "http://127.0.0.1:$port/_ping"
}

start
restarts=0
missed=0
while :; do
  sleep "$every" & nap=$!
  wait "$nap"  # a signal ends the wait at once, so quit() runs without delay
  nap=
  if answers; then answered=1; missed=0; continue; fi
  still_starting=$(( answered == 0 && SECONDS - started < starting_s ))
  if [ "$still_starting" = 1 ] && kill -0 "$splash" 2>/dev/null; then continue; fi
  missed=$((missed + 1))
  # One missed ping may be a slow render on a busy machine; two in a row, or a dead process, are not.
  if [ "$missed" -ge 2 ] || ! kill -0 "$splash" 2>/dev/null; then
    restarts=$((restarts + 1))
    echo "splash-supervise: restart $restarts at $(date +%s) (no answer to /_ping on port $port)" >&2
    stop_splash
    start
    missed=0
  fi
done
