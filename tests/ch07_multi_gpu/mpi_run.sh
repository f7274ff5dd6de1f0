#!/bin/sh
# mpi_run.sh RANKS MPIRUN PROGRAM ARGS... -- runs PROGRAM as RANKS processes on this host,
# one GPU each; exit 77 (ctest: skipped) with the reason when fewer GPUs are visible.
ranks=$1 mpirun=$2
shift 2
visible=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ -n "$CUDA_VISIBLE_DEVICES" ]; then
    chosen=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
    [ "$chosen" -lt "$visible" ] && visible=$chosen
fi
if [ "$visible" -lt "$ranks" ]; then
    echo "allreduce_nccl_mpi: needs $ranks GPUs, $visible visible (skipped)"
    exit 77
fi
exec "$mpirun" -np "$ranks" --allow-run-as-root -x NCCL_NVLS_ENABLE=0 "$@"
