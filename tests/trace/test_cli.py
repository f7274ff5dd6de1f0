#!/usr/bin/env python3
"""scripts/trace_kernel.py's command line, without a GPU: its own options (--out, --plant,
--arch) are taken before `--`, before or after PROGRAM; one of them after `--` (where the
program would only call it an unknown option) stops with exit 2 and a message that says where
it goes; a well-formed command gets as far as the GPU (exit 77 here, 0 or 1 on a GPU); an
unknown program or planted bug is refused by name. No nvcc run, no matplotlib."""
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "trace_kernel.py"
NO_GPU = dict(os.environ, PATH="/nonexistent")  # no nvidia-smi: the script stops at the GPU


def run(*args, env=NO_GPU):
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=60)
    return done.returncode, done.stdout + done.stderr


def main():
    failures = []

    def expect(args, code, words=()):
        got, output = run(*args)
        if got != code or any(w not in output for w in words):
            failures.append(f"{' '.join(args)}: exit {got}, expected {code} with {words}:\n"
                            f"{output}")

    for option in ("--out", "--plant", "--arch"):  # one of ours after "--"
        expect(["VA-GPU-NN", "--", "--n", "24", option, "x"], 2,
               (f"{option} is an option of trace_kernel.py", "before `--`"))
    expect(["VA-GPU-NN", "--", "--n", "24", "--out=x"], 2, ("--out is an option",))
    # ours before "--", before or after the program: parsed, then stopped at the GPU (77)
    expect(["VA-GPU-NN", "--out", "o", "--", "--n", "24"], 77, ("skipped",))
    expect(["--out", "o", "VA-GPU-NN", "--", "--n", "24"], 77, ("skipped",))
    expect(["--arch", "90", "VA-GPU-NN", "--plant",
            "ch02_vector_add/VA-GPU-NN.document_block_index.mutant"], 77, ("skipped",))
    # the subcommands are not programs, whatever comes before them
    expect(["--arch", "90", "list"], 0, ("ch04_swizzle.png",))
    expect(["NoSuchProgram", "--", "--n", "4"], 1, ("no trace patch for 'NoSuchProgram'",))
    for f in failures:
        print(f"FAIL: {f}")
    print("trace_kernel.py command line: " + ("ok" if not failures else
                                              f"{len(failures)} failure(s)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
