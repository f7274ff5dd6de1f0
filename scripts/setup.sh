#!/usr/bin/env bash
# Checks what the suite needs and installs what is missing where it can, saying
# before each install what it is and how large, and showing its progress.
#   scripts/setup.sh test                    what README command 2 (the tests) needs
#   scripts/setup.sh examples [--python P]   what README command 1 (the tour) needs; P is the
#                                            interpreter that runs the tour (default: python3)
#
# Everything it may install, and nothing else:
#   Debian packages, only as root with apt-get (otherwise it prints the apt-get line):
#     cmake, g++                       when missing (the build)
#     libgtest-dev                     test: GoogleTest, for the tests
#     libpng-dev, freeglut3-dev        optional: PNG images; chapter 5's window
#     xvfb, x11-apps, imagemagick      test, optional: the chapter-5 window test
#     clang                            test, optional: the lab lint's test against the compilers
#     chromium                         test, optional: the course server's browser test (headless)
#     slurmctld, slurmd, slurm-client, munge
#                                      test, optional: the server's Slurm test (a one-node cluster)
#     python3-venv                     examples, only when P is Debian's python3 without venv
#   Python packages, with pip, into the project's virtual environment .venv/ (made with P,
#     never into P itself): requirements.txt, that is matplotlib for the tour's plots and
#     cogapp for the handouts' generated blocks (scripts/docs.py, the docs check); and, for
#     test and examples, libclang alone (the lab grader's region lint reads host regions with
#     clang's front end; the grader refuses to grade without it).
# CUDA_EXAMPLES_WHEELS=DIR     pip installs from the wheels in DIR only (no index: a machine
#   without a package registry, e.g. libclang-18.1.1-py2.py3-none-manylinux2010_x86_64.whl).
# The CUDA Toolkit is never installed: nvcc must be on PATH or in /usr/local/cuda/bin.
#
# CUDA_EXAMPLES_NO_INSTALL=1   check and report only; install nothing.
# CI=true (or CUDA_EXAMPLES_STRICT=1): an optional part still missing at the end is an error,
#   so that a broken install step fails in CI rather than at a user's.
# It never reads input and every network step has a time limit.
# Exit status: 0 ready (a missing optional part is named, with what it costs), 1 not ready.
set -uo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/setup.sh test|examples [--python INTERPRETER]" >&2; exit 2; }
what=${1:-test}
[ $# -gt 0 ] && shift
case $what in test|examples) ;; *) usage ;; esac
python=python3
while [ $# -gt 0 ]; do
  case $1 in
    --python) [ $# -ge 2 ] || usage; python=$2; shift 2 ;;
    *) usage ;;
  esac
done
no_install=${CUDA_EXAMPLES_NO_INSTALL:-0}
strict=${CUDA_EXAMPLES_STRICT:-}
if [ -z "$strict" ]; then
  if [ "${CI:-}" = true ]; then strict=1; else strict=0; fi
fi
say() { echo "setup: $*"; }
still_missing=()   # the optional parts missing at the end

# The CUDA toolkit must already be there.
if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  else
    say "the CUDA Toolkit 13 (nvcc, cuBLAS, CUB) is missing: install it from NVIDIA" >&2
    exit 1
  fi
fi

# ---- Debian packages --------------------------------------------------------
declare -A why=()
required=() optional=()
need() { required+=("$1"); why[$1]=$2; }
want() { optional+=("$1"); why[$1]=$2; }
command -v cmake >/dev/null 2>&1 || need cmake "the build"
command -v c++ >/dev/null 2>&1 || need g++ "the build"
if [ "$what" = test ]; then
  need libgtest-dev "GoogleTest, for the tests"
fi
want libpng-dev "images as PNG, otherwise PPM"
want freeglut3-dev "chapter 5's image in a window, otherwise a file"
if [ "$what" = test ]; then
  want xvfb "the chapter-5 window test, skipped without"
  want x11-apps "the window test's screenshot (xwd)"
  want imagemagick "the window test's image comparison"
  want clang "the lab lint's test against the compilers (lab.lint_compiler: clang's lexer)"
  want chromium "the course server's browser test (server/tests/test_browser.py, headless)"
  want slurmctld "the server's Slurm test: its controller (server/slurm/cluster.sh)"
  want slurmd "the server's Slurm test: its node daemon"
  want slurm-client "the server's Slurm test: sbatch, squeue, scancel, sinfo"
  want munge "the server's Slurm test: its authentication daemon"
fi

# Both packages of requirements.txt: matplotlib (the plots) and cogapp (the docs check).
has_packages() { "$1" -c 'import matplotlib, cogapp' >/dev/null 2>&1; }
plots_ready=0
# The tour's plots draw GPU measurements (speedups over the CPU, the roofline, transfers, the
# timeline); without a GPU it measures MM-CPU alone, which they cannot show. So on a machine
# where nvidia-smi lists no GPU, matplotlib is not installed for them (CI, which needs .venv/ for
# the docs check, and CUDA_EXAMPLES_PLOTS=1 install it all the same).
plots_wanted=1
if [ "$what" = examples ] && [ "$strict" != 1 ] && [ "${CUDA_EXAMPLES_PLOTS:-0}" != 1 ] &&
  ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }; then
  plots_wanted=0
fi
if [ "$what" = examples ]; then
  if ! command -v "$python" >/dev/null 2>&1; then
    say "no Python interpreter '$python': the tour needs Python 3" >&2
    exit 1
  fi
  python=$(command -v "$python")
  if [ -x .venv/bin/python ] && has_packages .venv/bin/python; then
    plots_ready=1
  elif [ "$plots_wanted" = 0 ]; then
    : # nothing to install for them (below)
  elif [ ! -e .venv ] && ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    # Debian splits venv out of its python3; other interpreters (pyenv, conda) carry it.
    case $(readlink -f "$python") in
      /usr/bin/*) want python3-venv "a virtual environment for matplotlib with Debian's python3" ;;
    esac
  fi
fi

is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
missing_required=() missing_optional=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${required[@]}"; do is_installed "$p" || missing_required+=("$p"); done
  for p in "${optional[@]}"; do is_installed "$p" || missing_optional+=("$p"); done
elif [ ${#required[@]} -gt 0 ]; then
  say "not a Debian system: CMake will say what is missing (GoogleTest for the tests)"
fi
missing=("${missing_required[@]}" "${missing_optional[@]}")
described() { local p; for p in "$@"; do printf '  %-14s %s\n' "$p" "${why[$p]}"; done; }

# How many packages apt would install for these, and how large: "N packages, X to download,
# Y on disk" (empty when apt cannot tell, e.g. without root).
apt_size() {
  local out n get disk
  out=$(LC_ALL=C timeout 60 apt-get install --assume-no --no-install-recommends "$@" </dev/null 2>&1)
  n=$(sed -n 's/.* \([0-9][0-9]*\) newly installed.*/\1/p' <<<"$out")
  get=$(sed -n 's/^Need to get \([^ ]* [^ /]*\).*/\1/p' <<<"$out")
  disk=$(sed -n 's/^After this operation, \(.*\) of additional disk space.*/\1/p' <<<"$out")
  [ -n "$n" ] && echo "$n packages with their dependencies, ${get:-0 B} to download, ${disk:-?} on disk"
}

# mawk (Debian's awk) reads a pipe in blocks: -W interactive makes it read line by line, so that
# progress shows as it happens, not all at once at the end.
line_awk() {
  if awk -W version 2>&1 | grep -q mawk; then awk -W interactive "$@"; else awk "$@"; fi
}

# apt-get's own lines, condensed: one per download and one per package set up.
apt_progress() {
  line_awk '/^Get:/ { sub(/^\[/, "", $(NF-1)); sub(/\]$/, "", $NF)
                 printf "setup:     downloaded %s (%s %s)\n", $5, $(NF-1), $NF; fflush() }
       /^Setting up / { printf "setup:     set up %s\n", $3; fflush() }
       /^(E|W): / { print "setup:     " $0; fflush() }'
}

if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
   && [ "$no_install" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt_opts=(-y -q --no-install-recommends -o Acquire::http::Timeout=20 -o Acquire::Retries=1)
  say "missing Debian packages, to be installed with apt-get (CUDA_EXAMPLES_NO_INSTALL=1 skips this):"
  described "${missing[@]}" | sed 's/^/setup: /'
  started=$SECONDS
  say "updating apt's package lists (apt-get update, at most 90 s) ..."
  timeout 90 apt-get update -q -o Acquire::http::Timeout=20 </dev/null >/dev/null 2>&1 ||
    say "apt-get update failed or timed out (no network?): trying the lists already there"
  # Only what apt's lists hold is tried (one question for all): a machine whose lists hold none
  # of them (no network, no such source) learns it at once, not one failed install at a time.
  mapfile -t known < <(LC_ALL=C apt-cache policy "${missing[@]}" 2>/dev/null |
    awk '/^[^ ].*:$/ { p = substr($0, 1, length($0) - 1) } /^  Candidate:/ && $2 != "(none)" { print p }')
  unknown=()
  for p in "${missing[@]}"; do [[ " ${known[*]} " == *" $p "* ]] || unknown+=("$p"); done
  [ ${#unknown[@]} -eq 0 ] ||
    say "not in apt's package lists (no network, or no source that has them): ${unknown[*]}"
  if [ ${#known[@]} -gt 0 ]; then
    size=$(apt_size "${known[@]}")
    say "installing ${#known[@]}: ${size:-size unknown (apt-get cannot plan them all together)}"
  fi
  i=0
  for p in "${known[@]}"; do
    i=$((i + 1))
    say "  [$i/${#known[@]}] $p ..."
    timeout 600 apt-get install "${apt_opts[@]}" "$p" </dev/null 2>&1 | apt_progress
    is_installed "$p" || say "    could not install $p (see: apt-get install $p)"
  done
  say "apt-get done in $((SECONDS - started)) s"
  left=()
  for p in "${missing_required[@]}"; do is_installed "$p" || left+=("$p"); done
  missing_required=("${left[@]}")
  left=()
  for p in "${missing_optional[@]}"; do is_installed "$p" || left+=("$p"); done
  missing_optional=("${left[@]}")
elif [ ${#missing[@]} -gt 0 ]; then
  if [ "$no_install" != 0 ]; then reason="CUDA_EXAMPLES_NO_INSTALL=1"; else reason="not root"; fi
  say "missing Debian packages ($reason: nothing installed):"
  described "${missing[@]}" | sed 's/^/setup: /'
  say "  install them with: sudo apt-get install --no-install-recommends ${missing[*]}"
fi
still_missing+=("${missing_optional[@]}")
if [ ${#missing_required[@]} -gt 0 ]; then
  say "cannot go on without: ${missing_required[*]}" >&2
  say "  install with: sudo apt-get install --no-install-recommends ${missing_required[*]}" >&2
  exit 1
fi

# ---- Python: matplotlib for the tour's plots, in .venv/ --------------------
pip_progress() {
  line_awk '/^ *(Downloading|Using cached) / { sub(/^ +/, ""); printf "setup:     %s\n", $0; fflush() }
       /^(Installing collected|Successfully installed|ERROR)/ { printf "setup:     %s\n", $0; fflush() }'
}
if [ "$what" = examples ] && [ "$plots_ready" = 0 ] && [ "$plots_wanted" = 0 ]; then
  say "no GPU here (nvidia-smi lists none): the tour's plots need a GPU run, so matplotlib is not"
  say "  installed (about 40 MB download, 200 MB in .venv/);"
  say "  CUDA_EXAMPLES_PLOTS=1 installs it anyway"
elif [ "$what" = examples ] && [ "$plots_ready" = 0 ]; then
  hand="$python -m venv .venv && .venv/bin/pip install -r requirements.txt"
  if [ "$no_install" != 0 ]; then
    say "matplotlib or cogapp is missing in .venv/ for $python: the tour will draw no plots"
    say "  (CUDA_EXAMPLES_NO_INSTALL=1: nothing installed); to draw them: $hand"
    still_missing+=(matplotlib)
  else
    started=$SECONDS
    ok=1
    if [ ! -e .venv ]; then
      say "matplotlib or cogapp is missing in .venv/ for $python ($("$python" --version 2>&1))"
      say "creating the project's virtual environment .venv/ with it (about 25 MB, no download) ..."
      "$python" -m venv .venv </dev/null || { say "could not create .venv/ with $python"; ok=0; }
    elif [ ! -x .venv/bin/python ]; then
      say ".venv/ exists but .venv/bin/python does not run (made by another user or interpreter?):"
      say "  remove .venv/ and run again"; ok=0
    fi
    if [ "$ok" = 1 ]; then
      say "installing requirements.txt into .venv/ with pip: matplotlib and cogapp (pinned) and their dependencies"
      say "  about 40 MB to download, 170 MB more on disk (CPython 3.11, x86-64); at most 15 min ..."
      timeout 900 .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off \
        --timeout 20 --retries 1 -r requirements.txt </dev/null 2>&1 | pip_progress
      if has_packages .venv/bin/python; then
        say "matplotlib $(.venv/bin/python -c 'import matplotlib; print(matplotlib.__version__)')," \
            "cogapp $(.venv/bin/python -c 'import cogapp; from importlib.metadata import version; print(version("cogapp"))')" \
            "are in .venv/ ($(du -sh .venv | cut -f1)), done in $((SECONDS - started)) s:" \
            "the tour draws its plots with .venv/bin/python"
        plots_ready=1
      else
        say "pip could not install matplotlib and cogapp (no network?): the tour will draw no plots;"
        say "  run this again, or by hand: .venv/bin/pip install -r requirements.txt"
      fi
    fi
    [ "$plots_ready" = 1 ] || still_missing+=(matplotlib)
  fi
fi

# ---- Python: libclang for the lab grader's region lint, in .venv/ -----------
has_clang() { "$1" -c 'import clang.cindex as c; c.Index.create()' >/dev/null 2>&1; }
clang_pin=$(grep '^libclang==' requirements.txt)
# The grader looks in the interpreter that runs it first, then in .venv/ (region_ast.py:
# clang_python), and so does this: where the interpreter has it, nothing is installed.
if has_clang "${python:-python3}" || { [ -x .venv/bin/python ] && has_clang .venv/bin/python; }; then
  :
elif [ "$no_install" != 0 ]; then
  say "libclang is missing in .venv/: the lab grader will not grade (CUDA_EXAMPLES_NO_INSTALL=1);"
  say "  by hand: python3 -m venv .venv && .venv/bin/pip install $clang_pin"
  still_missing+=(libclang)
else
  [ -e .venv ] || { say "creating the project's virtual environment .venv/ for libclang ..."
                    "${python:-python3}" -m venv .venv </dev/null || say "could not create .venv/"; }
  from=(--timeout 20 --retries 1)
  [ -n "${CUDA_EXAMPLES_WHEELS:-}" ] && from=(--no-index --find-links "$CUDA_EXAMPLES_WHEELS")
  say "installing $clang_pin into .venv/ (the lab lint's clang front end, about 25 MB) ..."
  [ -x .venv/bin/python ] && timeout 600 .venv/bin/python -m pip install --disable-pip-version-check \
    --progress-bar off "${from[@]}" "$clang_pin" </dev/null 2>&1 | pip_progress
  if [ -x .venv/bin/python ] && has_clang .venv/bin/python; then
    say "libclang is in .venv/: the lab grader reads host regions with clang's front end"
  else
    say "pip could not install libclang: the lab grader will refuse to grade (exit 77)"
    still_missing+=(libclang)
  fi
fi

# ---- Verdict ----------------------------------------------------------------
if [ ${#still_missing[@]} -gt 0 ]; then
  if [ "$strict" = 1 ]; then
    say "CI (CI=true or CUDA_EXAMPLES_STRICT=1) needs every part; missing: ${still_missing[*]}" >&2
    exit 1
  fi
  say "going on without the optional ${still_missing[*]}"
else
  ready="nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), cmake"
  [ "$what" = test ] && ready+=", GoogleTest, the window test's tools, chromium, Slurm"
  ready+=", libpng, freeglut"
  [ "$what" = examples ] && [ "$plots_ready" = 1 ] && ready+=", matplotlib, cogapp"
  say "ready: $ready"
fi
exit 0
