#!/usr/bin/env bash
# Checks what the suite needs and, as root on Debian or Ubuntu, installs what is
# missing. Without root it names each missing package and how to install it.
#   scripts/setup.sh test       everything README command 2 (the tests) needs
#   scripts/setup.sh examples   what the programs and the tour need
set -euo pipefail
what=${1:-test}

# The CUDA toolkit is not a Debian package we can install here: it must be there.
if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "setup: nvcc is not on PATH; add it with: export PATH=/usr/local/cuda/bin:\$PATH" >&2
  else
    echo "setup: the CUDA Toolkit (13.x, with nvcc, cuBLAS and CUB) is missing: install it from NVIDIA" >&2
  fi
  exit 1
fi

required=(cmake g++ make)
optional=(libpng-dev freeglut3-dev python3-matplotlib)   # PNG files, a window, the tour's plots
if [ "$what" = test ]; then
  required+=(libgtest-dev)
  optional+=(xvfb x11-apps)                             # the window test, under Xvfb
fi

missing_required=() missing_optional=()
have_dpkg=no
command -v dpkg-query >/dev/null 2>&1 && have_dpkg=yes
is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
if [ $have_dpkg = yes ]; then
  for p in "${required[@]}"; do is_installed "$p" || missing_required+=("$p"); done
  for p in "${optional[@]}"; do is_installed "$p" || missing_optional+=("$p"); done
else
  for c in cmake g++; do command -v $c >/dev/null 2>&1 || missing_required+=("$c"); done
fi

all_missing=("${missing_required[@]}" "${missing_optional[@]}")
if [ ${#all_missing[@]} -eq 0 ]; then
  exit 0
fi
if [ $have_dpkg = yes ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing ${all_missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  if ! apt-get install -y -qq --no-install-recommends "${all_missing[@]}" >/dev/null; then
    # Optional packages may not exist everywhere; the required ones must install.
    apt-get install -y -qq --no-install-recommends "${missing_required[@]}" >/dev/null || {
      echo "setup: could not install ${missing_required[*]}" >&2; exit 1; }
  fi
  exit 0
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  echo "setup: optional, not installed: ${missing_optional[*]} (sudo apt-get install ${missing_optional[*]})"
fi
if [ ${#missing_required[@]} -gt 0 ]; then
  echo "setup: missing: ${missing_required[*]}; install with: sudo apt-get install ${missing_required[*]}" >&2
  exit 1
fi
