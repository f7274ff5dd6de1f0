#!/bin/sh
# The course server's proof on a GPU machine (issue 45), in one command from the repository root:
#   server/tools/gpu_proof.sh OUT          (as root, where lab.py grade runs its 'namespaces' fence)
# What it proves: the server (serve.py, local workers: one per visible GPU), driven through its
# HTTP API as a student's client drives it, grades lab ch02's solution at full marks, the skeleton
# at 0 and three cheats of tests/labs/cheats at 0 on the task each attacks (two the lint stops,
# one only a GPU run catches: recognises-fixed-inputs), runs exercise ch02_vector_add.3 with a
# student's edit and every claim holds (and with the course's file unchanged, where a claim must
# not hold), draws VA-GPU-NN's traced picture with the solution's file as the edit (served as
# image/png, kept as OUT/trace-VA-GPU-NN.png: drawn where .venv's matplotlib is; its summary lines
# either way), and its time per graded job is within 5% of
# `lab.py grade` alone on the same solution (alternated, best of 2). It writes OUT/proof.json (every
# check, HELD or FAILED), OUT/server.log and OUT/state/ (the server's SQLite database and job
# folders), from which a results page can be served and photographed on any machine.
# Exit 0: every check held; 1: one did not; 77: no GPU here (the CPU part ran: the course, the
# folders, the server, the first submission, which ended with 77). About 5 minutes on an H200
# (293 s at 735bd12, with 2 rounds of the overhead: docs/runs/h200/server/).
# server/tools/gpu_proof.sh OUT --throughput (a machine with two GPUs): the same 8 solutions graded
# through the server with one worker (one GPU) and with two (two GPUs); two must give at least
# 1.8 times the jobs per minute of one (OUT/throughput.json). About 7 minutes; 77 with one GPU.
# server/tools/gpu_proof.sh OUT --overhead LAB: the overhead check alone on lab LAB's solution
# (OUT/overhead.json; ch05, which has no speed gate, in under 2 minutes on an H200).
set -eu
cd "$(dirname "$0")/../.."
out="${1:-${OUT:-gpu-proof}}"
[ $# -gt 0 ] && shift
# .venv's Python where scripts/setup.sh made one: its matplotlib draws the traced picture.
py=python3
[ -x .venv/bin/python3 ] && py=.venv/bin/python3
exec "$py" server/tools/gpu_proof.py "$out" "$@"
