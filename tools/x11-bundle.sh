#!/usr/bin/env bash
# The chapter-5 window for a GPU machine without packages: downloads Xvfb, freeglut (its headers
# and libraries, to build `ray` with a window there), Mesa's software OpenGL (for GLX on the
# virtual display) and xwd (the screenshot), on a Debian or Ubuntu machine, as files
# (`apt-get download`, no root), and unpacks them without root (`dpkg -x`) into ONE folder that
# can be copied to the GPU machine:
#
#   tools/x11-bundle.sh [FOLDER]        default: build/x11-bundle (FOLDER/root, FOLDER/env.sh)
#
# Then, on the GPU machine, with the folder at build/x11-bundle (or -DCUDA_EXAMPLES_X11_BUNDLE=DIR):
#   bash build/x11-bundle/env.sh --link-xkbcomp   once, as root (see below)
#   scripts/test.sh --preset gpu          configure finds the folder (ray gets its window), and
#                                         the window tests use it themselves
#
# Never source env.sh in the shell that configures, builds or runs the tests. It puts the
# bundle's libraries first on LD_LIBRARY_PATH for every program started from that shell, and
# some of them (libxml2, libzstd, libLLVM...) are not the ones this machine's cmake, compilers
# and linker were built with: on a 2-core Ubuntu machine cmake stops with "version
# `LIBXML2_2.5.0' not found". (An H200 run that seemed to stall after the build, with or without
# it, was ctest's output held back by mawk: scripts/test.sh.) The window tests source it in their
# own process only, around Xvfb, xwd and the program they show; the programs find the bundle's
# GLUT and GL through their RPATH.
#
# Xvfb runs its keymap compiler from a path compiled into it, /usr/bin/xkbcomp. Where that is
# missing, env.sh says so; as root, `bash FOLDER/env.sh --link-xkbcomp` links the bundle's there
# (the only file outside the folder it ever touches, and only when asked) and changes nothing
# else, not even in a shell that sources it.
#
# What is left out to keep it small: documentation, man pages, locales, static libraries, every
# Mesa driver but the software one (swrast_dri.so), and the packages every Linux has (libc,
# libstdc++, zlib, ...). LLVM stays: Mesa's software renderer (llvmpipe) is built on it. LLVM
# also links Z3 (a solver for clang's analyser, 23 MB) and libxml2 (Windows manifests; it pulls
# in ICU, 35 MB), which llvmpipe never calls: they are replaced by stubs that define the same
# symbols and abort with a message if one is ever called.
# Unpacked it is about 160 MB (LLVM alone is 112 MB); it travels as FOLDER.tar.xz, about 35 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/x11-bundle}
say() { echo "x11-bundle: $*"; }
command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
  { say "needs apt-get and dpkg (a Debian or Ubuntu machine)" >&2; exit 1; }

# The packages, by what needs them. Their own dependencies are listed rather than resolved, so
# that the bundle stays what is named here; a missing library shows at the check below.
server=(xvfb xserver-common x11-xkb-utils xkb-data libxfont2 libfontenc1 libfreetype6 libpng16-16
        libbrotli1 libpixman-1-0 libunwind8 libxau6 libxdmcp6 libbsd0 libmd0 libaudit1 libcap-ng0
        libxkbfile1)
mesa=(libgl1-mesa-dri libglapi-mesa libllvm15 libz3-4 libxml2 libicu72 libedit2 libffi8 libtinfo6
      libsensors5 libdrm2 libdrm-amdgpu1 libdrm-radeon1 libdrm-nouveau2 libdrm-intel1
      libpciaccess0 libelf1 libexpat1 libxcb-dri3-0 libzstd1)
glx=(libgl1 libglx0 libglvnd0 libglx-mesa0 libxcb-glx0 libxcb-dri2-0 libxcb-present0 libxcb-sync1
     libxcb-xfixes0 libxcb-shm0 libxcb-randr0 libx11-xcb1 libxxf86vm1 libxext6 libxfixes3
     libxshmfence1 libx11-6 libx11-data libxcb1)
glut=(libglut3.12 libglut-dev libgl-dev libglx-dev libglu1-mesa libglu1-mesa-dev libxi6 libxrandr2
      libxrender1 libx11-dev libxau-dev libxdmcp-dev libxcb1-dev x11proto-dev)
screenshot=(x11-apps libxmu6 libxt6 libsm6 libice6 libuuid1 libxaw7 libxpm4 libxft2
            libfontconfig1 libxcursor1 libxmuu1 libxcb-damage0)
packages=("${server[@]}" "${mesa[@]}" "${glx[@]}" "${glut[@]}" "${screenshot[@]}")

debs="$out/debs" root="$out/root"
rm -rf "$root" && mkdir -p "$debs" "$root"
say "downloading ${#packages[@]} packages into $debs (apt-get download, no root)"
(cd "$debs" && apt-get download -q "${packages[@]}" >/dev/null) || {
  say "apt-get download failed: run 'apt-get update' (as root) or check the network" >&2; exit 1; }
du -sh "$debs" | sed 's/^/x11-bundle: downloaded /'
for deb in "$debs"/*.deb; do dpkg -x "$deb" "$root"; done

# Keep what runs: no docs, man pages, locales; of Mesa's drivers, only the software one.
rm -rf "$root"/usr/share/{doc,man,info,lintian,bug,locale,bash-completion,pkgconfig-doc}
lib="$root/usr/lib/x86_64-linux-gnu"
find "$lib/dri" -type f ! -name swrast_dri.so -delete 2>/dev/null || true
find "$lib/dri" -type l ! -name swrast_dri.so -delete 2>/dev/null || true
rm -rf "$lib"/vdpau "$lib"/libLLVM-15.so "$root"/usr/lib/llvm-15/bin 2>/dev/null || true
# x11-apps brings ~40 small programs; the window test needs xwd (and xwininfo is not in it).
find "$root/usr/bin" -type f ! -name xwd ! -name Xvfb ! -name xkbcomp -delete
rm -rf "$root/debs"

# The stubs: every symbol libLLVM takes from libz3 / libxml2, with its version and kind
# (function or data), as the real library defines it; then the real ones go.
stub() {  # stub SONAME: builds $lib/SONAME from the real one's symbols that LLVM uses
  local so=$1 dir; dir=$(mktemp -d)
  objdump -T "$lib/libLLVM-15.so.1" | awk '$0 ~ /\*UND\*/ {print $NF}' | sort -u >"$dir/wanted"
  objdump -T "$lib/$so" | awk '$0 ~ / g / && $0 !~ /\*UND\*/ {
      kind = ($0 ~ / DO /) ? "data" : "func"; print $NF, kind, $(NF-1) }' |
    sort -u | awk 'NR == FNR { want[$1]; next } $1 in want' "$dir/wanted" - >"$dir/symbols"
  {
    echo '#include <stdio.h>'
    echo '#include <stdlib.h>'
    echo 'static void called(const char* f) { fprintf(stderr, "x11-bundle: %s is a stub: llvmpipe was not expected to call it\n", f); abort(); }'
    awk '$2 == "data" { print "void* " $1 " = 0;" }
         $2 == "func" { print "void " $1 "(void) { called(\"" $1 "\"); }" }' "$dir/symbols"
  } >"$dir/stub.c"
  awk '$3 != "Base" { v[$3] = v[$3] " " $1 ";" }
       END { for (k in v) print k " { global:" v[k] " };" }' "$dir/symbols" >"$dir/versions"
  local flags=()
  [ -s "$dir/versions" ] && flags=(-Wl,--version-script="$dir/versions")
  rm -f "$lib/$so"* 
  cc -shared -fPIC -O1 -o "$lib/$so" -Wl,-soname,"$so" "${flags[@]}" "$dir/stub.c"
  say "$so: a stub of $(wc -l <"$dir/symbols") symbols"
  rm -rf "$dir"
}
stub libz3.so.4
stub libxml2.so.2
rm -f "$lib"/libicu* "$lib"/*.a
rm -rf "$root/usr/share/icu" "$root/usr/share/xml"

cat >"$out/env.sh" <<'EOF'
# The X server, GL and GLUT of this folder (tools/x11-bundle.sh made it), for the one process
# that runs Xvfb or a program's window: source it there, never in a shell that builds (its
# libraries would replace the system's for cmake and the compilers).
#   bash env.sh --link-xkbcomp   as root: links /usr/bin/xkbcomp to this folder's, and nothing else
_b=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)
if [ "${1:-}" = --link-xkbcomp ]; then
  [ -e /usr/bin/xkbcomp ] || ln -s "$_b/root/usr/bin/xkbcomp" /usr/bin/xkbcomp
  return 0 2>/dev/null || exit 0
fi
export CUDA_EXAMPLES_X11_BUNDLE="$_b"
export PATH="$_b/root/usr/bin:$PATH"
export LD_LIBRARY_PATH="$_b/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LIBGL_DRIVERS_PATH="$_b/root/usr/lib/x86_64-linux-gnu/dri"
# GLX through Mesa on the virtual display (not a vendor's library for a real screen).
export __GLX_VENDOR_LIBRARY_NAME=mesa
export __EGL_VENDOR_LIBRARY_DIRS="$_b/root/usr/share/glvnd/egl_vendor.d"
export XKB_CONFIG_ROOT="$_b/root/usr/share/X11/xkb"
# Xvfb's own keymaps come from a folder compiled into it: start it with -xkbdir "$_b/root/usr/share/X11/xkb"
if [ ! -e /usr/bin/xkbcomp ]; then
  echo "x11-bundle: Xvfb runs /usr/bin/xkbcomp (a path compiled into it), which is missing:" \
       "as root, 'bash $_b/env.sh --link-xkbcomp' links this folder's there" >&2
fi
EOF

# Every library the bundle's programs need is in the bundle or on this machine.
. "$out/env.sh" 2>/dev/null
missing=$(for f in "$root/usr/bin/Xvfb" "$root/usr/bin/xwd" "$root/usr/bin/xkbcomp" \
                   "$lib/dri/swrast_dri.so" "$lib"/libglut.so.3* "$lib"/libGLX_mesa.so.0; do
            ldd "$f" 2>/dev/null | grep "not found" || true; done | sort -u)
if [ -n "$missing" ]; then
  say "libraries missing from the bundle:" >&2; echo "$missing" >&2; exit 1
fi
rm -rf "$debs"
say "$(du -sh "$out" | cut -f1) in $out ($(find "$root" -type f | wc -l) files); then, as root: bash $out/env.sh --link-xkbcomp"
# The form that travels: one archive (xz), beside the folder.
tar -C "$(dirname "$out")" -cf - "$(basename "$out")" | xz -6 -T0 >"$out.tar.xz"
say "$(du -sh "$out.tar.xz" | cut -f1) in $out.tar.xz, to copy to a GPU machine: tar -xJf it under build/"
