#!/usr/bin/env python3
"""Configure speaks as README command 2 needs it to (ctest: passes.configure_messages): it does
not print FindMPI's "Package 'mpi-cxx' not found" nor the planted bugs' "Planted bugs: N patched
programs" (their tier is not part of command 2); it does print the planted bugs' line where their
tier is asked for (CUDA_EXAMPLES_PLANTED_BUGS=1, as scripts/test.sh --planted-bugs sets it); and
where NCCL is not found it says that NCCL is not part of the CUDA Toolkit and which programs of
chapter 7 it leaves out. Two configures of this source tree into temporary folders, with the
build folder's compiler and CUDA architectures; NCCL is hidden in the second as a failed search
leaves it (NCCL_LIBRARY empty). No GPU needed.
    python3 tests/test_configure_messages.py BUILD_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failures = []


def cache(build, name):
    try:
        text = open(os.path.join(build, "CMakeCache.txt")).read()
    except OSError:
        return None
    m = re.search(rf"^{name}:[A-Z]+=(.*)$", text, re.M)
    return m.group(1) if m else None


def configure(args, env):
    folder = tempfile.mkdtemp(prefix="configure-messages-")
    try:
        r = subprocess.run(["cmake", "-S", ROOT, "-B", folder, *args], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return r.returncode, r.stdout
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def expect(what, ok, out):
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failures.append(what)
        print(out[-3000:])


def main():
    build = sys.argv[1]
    args = [f"-DCMAKE_CUDA_COMPILER={cache(build, 'CMAKE_CUDA_COMPILER') or 'nvcc'}",
            f"-DCMAKE_CUDA_ARCHITECTURES={cache(build, 'CMAKE_CUDA_ARCHITECTURES') or '90'}",
            "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=ON"]
    env = {k: v for k, v in os.environ.items() if k != "CUDA_EXAMPLES_PLANTED_BUGS"}
    env.pop("CUDA_EXAMPLES_MUTANTS", None)
    rc, out = configure(args, env)
    expect("configure succeeds", rc == 0, out)
    expect("no \"Package 'mpi-cxx' not found\" (FindMPI's pkg-config)", "Package 'mpi-cxx'" not in out, out)
    expect("no \"Planted bugs:\" line in command 2's configure", "Planted bugs:" not in out, out)
    # NCCL hidden as a failed search leaves it: NCCL_LIBRARY set, and empty. Ignoring the folders
    # where NCCL lies (CMAKE_IGNORE_PATH) is no way to hide it: a toolkit keeps libnccl.so beside
    # libcublas.so, and hiding that folder hid cuBLAS too (CI's configure failed on CUDA::cublas).
    rc, out = configure(args + ["-DNCCL_LIBRARY="], dict(env, CUDA_EXAMPLES_PLANTED_BUGS="1"))
    expect("with CUDA_EXAMPLES_PLANTED_BUGS=1, configure succeeds", rc == 0, out)
    expect("with CUDA_EXAMPLES_PLANTED_BUGS=1, the planted bugs' line", "Planted bugs:" in out, out)
    said = re.search(r"NCCL not found \(it is not part of the CUDA Toolkit\): chapter 7 leaves out "
                     r"p2p_bandwidth, ring_allreduce, allreduce_nccl and allreduce_nccl_mpi", out)
    expect("without NCCL, what chapter 7 leaves out and how to get it",
           bool(said) and "libnccl-dev" in out, out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
