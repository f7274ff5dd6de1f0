#!/usr/bin/env bash
# Checks what the suite needs and, as root on Debian or Ubuntu, installs the
# missing Debian packages. Without root (or without a package manager that can
# reach its archive) it names what is missing and how to install it.
#   scripts/setup.sh test       what README command 2 (the tests) needs
#   scripts/setup.sh examples   what the programs and the tour need
# CUDA_EXAMPLES_NO_INSTALL=1 only checks, never installs.
set -uo pipefail
what=${1:-test}

# The CUDA toolkit and the build tools must already be there.
if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "setup: nvcc is not on PATH; add it with: export PATH=/usr/local/cuda/bin:\$PATH" >&2
  else
    echo "setup: the CUDA Toolkit 13 (nvcc, cuBLAS, CUB) is missing: install it from NVIDIA" >&2
  fi
  exit 1
fi

# Debian packages: those whose absence fails the build, then the optional ones.
required=()
optional=(libpng-dev freeglut3-dev)                # PNG files; a window for chapter 5
command -v cmake >/dev/null 2>&1 || required+=(cmake)
command -v c++ >/dev/null 2>&1 || required+=(g++)
if [ "$what" = test ]; then
  required+=(libgtest-dev)
  optional+=(xvfb x11-apps imagemagick)            # the chapter-5 window test
else
  optional+=(python3-matplotlib)                   # the tour's plots
fi

command -v dpkg-query >/dev/null 2>&1 || exit 0    # not Debian: CMake will say what is missing
is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
missing_required=() missing_optional=()
for p in "${required[@]}"; do is_installed "$p" || missing_required+=("$p"); done
for p in "${optional[@]}"; do is_installed "$p" || missing_optional+=("$p"); done
[ ${#missing_required[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ "${CUDA_EXAMPLES_NO_INSTALL:-0}" = 0 ]; then
  echo "setup: installing ${missing_required[*]} ${missing_optional[*]}"
  export DEBIAN_FRONTEND=noninteractive
  timeout 90 apt-get update -qq >/dev/null 2>&1
  for p in "${missing_required[@]}" "${missing_optional[@]}"; do
    timeout 600 apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
      echo "setup: could not install $p"
  done
  still=()
  for p in "${missing_required[@]}"; do is_installed "$p" || still+=("$p"); done
  missing_required=("${still[@]}")
else
  [ ${#missing_optional[@]} -gt 0 ] &&
    echo "setup: optional, not installed: ${missing_optional[*]} (sudo apt-get install ${missing_optional[*]})"
fi
if [ ${#missing_required[@]} -gt 0 ]; then
  echo "setup: missing: ${missing_required[*]}; install with: sudo apt-get install ${missing_required[*]}" >&2
  exit 1
fi
exit 0
