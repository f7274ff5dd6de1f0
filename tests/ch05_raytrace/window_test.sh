#!/usr/bin/env bash
# Runs window_test under a private Xvfb server (ctest: ch05.window.xvfb_screenshot).
#   window_test.sh PROGRAM OUTDIR      run it
#   window_test.sh --no-glut           the build has no freeglut: skip
# Exit 77 (ctest: skipped, with the reason) when Xvfb, xwd or freeglut is
# missing, unless CUDA_EXAMPLES_REQUIRE_WINDOW=1, which makes that a failure.
# Xvfb and xwd come from the system or from the folder of tools/x11-bundle.sh.
set -u
skip() {
  if [ "${CUDA_EXAMPLES_REQUIRE_WINDOW:-0}" != 0 ]; then
    echo "window test: FAIL: $1, and CUDA_EXAMPLES_REQUIRE_WINDOW is set" >&2; exit 1
  fi
  echo "window test: SKIPPED: $1 (scripts/setup.sh test installs it)"; exit 77
}
[ "${1:-}" = --no-glut ] && skip "built without freeglut (freeglut3-dev)"
program=$1 outdir=$2
# The folder tools/x11-bundle.sh makes (a GPU machine without packages), else the system's.
bundle=${CUDA_EXAMPLES_X11_BUNDLE:-$(cd "$(dirname "$0")/../.." && pwd)/build/x11-bundle}
# shellcheck source=/dev/null
xkb=()
if [ -f "$bundle/env.sh" ]; then
  . "$bundle/env.sh" 2>/dev/null
  xkb=(-xkbdir "$bundle/root/usr/share/X11/xkb")  # Xvfb's keymaps: a folder compiled into it
fi
command -v Xvfb >/dev/null 2>&1 || skip "Xvfb is not installed (package xvfb, or tools/x11-bundle.sh)"
command -v xwd >/dev/null 2>&1 || skip "xwd is not installed (package x11-apps, or tools/x11-bundle.sh)"
[ -e /usr/bin/xkbcomp ] || skip "Xvfb needs /usr/bin/xkbcomp (package x11-xkb-utils)"
mkdir -p "$outdir"
# Mesa (freeglut's OpenGL) keeps a shader cache, by default in ~/.cache/mesa_shader_cache: here
# it goes to the test's own folder, so that the test leaves nothing outside the build folder.
# (Xvfb's socket folder, /tmp/.X11-unix, is the system's: docs/install.md.)
export MESA_SHADER_CACHE_DIR="$outdir/mesa_shader_cache" XDG_CACHE_HOME="$outdir/cache"

# Let Xvfb pick a free display number and tell us which (-displayfd). -noreset:
# CPUBitmap connects once to see whether a display is there, and an X server
# that resets when its last client leaves would refuse freeglut a moment later.
displayfile="$outdir/display"
rm -f "$displayfile"
Xvfb -displayfd 3 -screen 0 640x480x24 -nolisten tcp -noreset "${xkb[@]}" \
  3>"$displayfile" 2>"$outdir/xvfb.log" &
xvfb_pid=$!
trap 'kill "$xvfb_pid" 2>/dev/null; wait "$xvfb_pid" 2>/dev/null' EXIT
for _ in $(seq 100); do
  [ -s "$displayfile" ] && break
  kill -0 "$xvfb_pid" 2>/dev/null || break
  sleep 0.1
done
if [ ! -s "$displayfile" ]; then
  echo "window test: FAIL: Xvfb did not start:" >&2
  cat "$outdir/xvfb.log" >&2
  exit 1
fi
export DISPLAY=":$(tr -d '[:space:]' <"$displayfile")"
echo "window test: Xvfb on $DISPLAY"
timeout 60 "$program" "$outdir"
