"""The handouts' traces, the lessons checked on them, and the pictures drawn from them.

TRACES: name -> how the GPU run makes it: the trace patch (tools/trace/patches/), a planted bug
from tests/mutants/ applied first where one is named, the program's command line and the
recorder's settings (trace.cuh: TRACE_STEPS, TRACE_ONLY). scripts/trace_kernel.py record makes them all.

CHECKS: name -> the lessons the trace proves, each (check, arguments, expected): tracelib's
check must come out EXPECTED (True: the lesson holds; False: the planted bug or the slow
pattern is caught).

PICTURES: the PNGs of the handouts, each drawn from its traces by a function of draw.py.
"""

TRACES = {
    # chapter 2: who adds which element
    "VA-GPU-11": {"patch": "ch02_vector_add/VA-GPU-11.trace", "args": "--n 16 --repeats 1"},
    "VA-GPU-N1": {"patch": "ch02_vector_add/VA-GPU-N1.trace",
                  "args": "--n 20 --blocks 8 --repeats 1"},
    "VA-GPU-NN": {"patch": "ch02_vector_add/VA-GPU-NN.trace",
                  "args": "--n 40 --blocks 2 --threads 8 --repeats 1"},
    "VA-GPU-NN.document_block_index": {
        "patch": "ch02_vector_add/VA-GPU-NN.trace",
        "plant": "ch02_vector_add/VA-GPU-NN.document_block_index.mutant",
        "args": "--n 40 --blocks 2 --threads 8 --repeats 1"},
    # 2^20 elements, the writes of every 64th only (16384 rows a trace)
    "VA-GPU-NN.128x128": {"patch": "ch02_vector_add/VA-GPU-NN.trace",
                          "args": "--n 1048576 --blocks 128 --threads 128 --repeats 1",
                          "env": {"TRACE_ONLY": "W", "TRACE_SAMPLE": "64"}},
    "VA-GPU-NN.auto": {"patch": "ch02_vector_add/VA-GPU-NN.trace",
                       "args": "--n 1048576 --blocks auto --repeats 1",
                       "env": {"TRACE_ONLY": "W", "TRACE_SAMPLE": "64"}},
    "Dot-SM-Warp": {"patch": "ch03_dot_product/Dot-SM-Warp.trace",
                    "args": "--n 512 --blocks 1 --threads 64 --repeats 1"},
    "Dot-SM-Warp.one_round_short": {"patch": "ch03_dot_product/Dot-SM-Warp.trace",
                                    "plant": "ch03_dot_product/Dot-SM-Warp.one_round_short.bug",
                                    "args": "--n 512 --blocks 1 --threads 64 --repeats 1"},
    # chapter 3: the two trees, and a planted bug with bank conflicts
    "reduction.interleaved-shared": {"patch": "ch03_dot_product/reduction.trace",
                                     "args": "--kernel interleaved-shared --n 128 --threads 128 "
                                             "--repeats 1"},
    "reduction.sequential": {"patch": "ch03_dot_product/reduction.trace",
                             "args": "--kernel sequential --n 128 --threads 128 --repeats 1"},
    "reduction.strided_tree": {"patch": "ch03_dot_product/reduction.strided_tree.trace",
                               "args": "--kernel sequential --n 128 --threads 128 --repeats 1",
                               "bug": True},
    "stencil_1d": {"patch": "ch03_dot_product/stencil_1d.trace", "args": "--n 1000 --repeats 1"},
    # chapter 4: coalesced and strided reads; the tiles
    "MM-GPU-GM": {"patch": "ch04_matmul/MM-GPU-GM.trace",
                  "args": "--width 40 --block 32 --repeats 1", "env": {"TRACE_STEPS": "2"}},
    "MM-GPU-GM.wrong_index": {"patch": "ch04_matmul/MM-GPU-GM.trace",
                              "plant": "ch04_matmul/MM-GPU-GM.wrong_index.mutant",
                              "args": "--width 40 --block 32 --repeats 1",
                              "env": {"TRACE_STEPS": "2"}},
    "MM-GPU-SM": {"patch": "ch04_matmul/MM-GPU-SM.trace", "args": "--width 40 --repeats 1"},
    "MM-GPU-SM.document_grid": {"patch": "ch04_matmul/MM-GPU-SM.trace",
                                "plant": "ch04_matmul/MM-GPU-SM.document_grid.mutant",
                                "args": "--width 40 --repeats 1"},
    "MM-GPU-RT": {"patch": "ch04_matmul/MM-GPU-RT.trace", "args": "--width 128 --repeats 1"},
    # the 128-byte swizzle: block (0, 0)'s first A slice as TMA laid it out, and without swizzle
    "MM-GPU-WGMMA": {"patch": "ch04_matmul/MM-GPU-WGMMA.trace",
                     "args": "--width 128 --precision tf32 --step 1 --repeats 1"},
    "MM-GPU-WGMMA.unswizzled": {"patch": "ch04_matmul/MM-GPU-WGMMA.trace",
                                "plant": "ch04_matmul/MM-GPU-WGMMA.unswizzled.bug",
                                "args": "--width 128 --precision tf32 --step 1 --repeats 1"},
    # chapter 5: the spheres a warp reads at each step, the same one or a different one per lane
    "ray": {"patch": "ch05_raytrace/ray.trace",
            "args": "--dim 32 --spheres 8 --output traced.ppm --repeats 1"},
    "ray.divergent": {"patch": "ch05_raytrace/ray.trace",
                      "args": "--dim 32 --spheres 8 --output traced.ppm --divergent --repeats 1"},
    "ray_noconst": {"patch": "ch05_raytrace/ray_noconst.trace",
                    "args": "--dim 32 --spheres 8 --output traced.ppm --repeats 1"},
    "ray_noconst.divergent": {"patch": "ch05_raytrace/ray_noconst.trace",
                              "args": "--dim 32 --spheres 8 --output traced.ppm --divergent "
                                      "--repeats 1"},
    # chapter 7: the ring all-reduce's chunks per step, on 2 GPUs (a machine with fewer skips it:
    # the program exits 77, needs 2 GPUs)
    "ring_allreduce": {"patch": "ch07_multi_gpu/ring_allreduce.trace",
                       "args": "--gpus 2 --n 250 --repeats 1"},
    "ring_allreduce.chunk_off_by_one": {
        "patch": "ch07_multi_gpu/ring_allreduce.trace",
        "plant": "ch07_multi_gpu/ring_allreduce.chunk_off_by_one.bug",
        "args": "--gpus 2 --n 250 --repeats 1"},
}

CHECKS = {
    "ring_allreduce": [("ring", (250,), True)],
    "ring_allreduce.chunk_off_by_one": [("ring", (250,), False)],
    "VA-GPU-11": [("written_once", ("c", 16), True)],
    "VA-GPU-N1": [("written_once", ("c", 20), True)],
    "VA-GPU-NN": [("written_once", ("c", 40), True)],
    "VA-GPU-NN.document_block_index": [("written_once", ("c", 40), False)],
    "VA-GPU-NN.128x128": [("written_once", ("c", 1048576, 64), True)],
    "VA-GPU-NN.auto": [("written_once", ("c", 1048576, 64), True)],
    # both trees are free of bank conflicts; only the sequential one packs its busy threads
    "reduction.interleaved-shared": [("no_bank_conflicts", ("cache",), True),
                                     ("packed_warps", ("cache",), False)],
    "reduction.sequential": [("no_bank_conflicts", ("cache",), True),
                             ("packed_warps", ("cache",), True)],
    "reduction.strided_tree": [("no_bank_conflicts", ("cache",), False)],
    "stencil_1d": [("written_once", ("out", 1000), True)],
    # each warp_sum: lane l gets lane l + 16, + 8, ... + 1; a loop one round short is caught
    "Dot-SM-Warp": [("shuffle", ("v",), True)],
    "Dot-SM-Warp.one_round_short": [("shuffle", ("v",), False)],
    # a warp reads 32 consecutive floats of N (4 sectors) and one float of M (1 sector)
    "MM-GPU-GM": [("sectors", ("N", 4), True), ("sectors", ("M", 1), True),
                  ("written_once", ("P", 1600), True)],
    "MM-GPU-GM.wrong_index": [("sectors", ("N", 4), False)],
    "MM-GPU-SM": [("written_once", ("P", 1600), True), ("sectors", ("M", 4), True),
                  ("sectors", ("N", 4), True)],
    "MM-GPU-SM.document_grid": [("written_once", ("P", 1600), False)],
    "MM-GPU-RT": [("written_once", ("P", 16384), True)],
    # chunk c of row r at chunk c XOR (r mod 8): the swizzle TMA wrote, and a map without it
    "MM-GPU-WGMMA": [("swizzle", ("A",), True)],
    "MM-GPU-WGMMA.unswizzled": [("swizzle", ("A",), False)],
    # every lane of a warp reads the same sphere at a step (one constant-cache broadcast), or,
    # with --divergent, 8 different ones (as many as there are spheres)
    "ray": [("elements_per_request", ("s", 1), True)],
    "ray.divergent": [("elements_per_request", ("s", 8), True)],
    "ray_noconst": [("elements_per_request", ("s", 1), True)],
    "ray_noconst.divergent": [("elements_per_request", ("s", 8), True)],
}

# Each picture: its file (in the traces' folder), the drawing (draw.py), its traces and a title
# for each, and the drawing's arguments.
PICTURES = [
    {"png": "ch02_VA-GPU-11.png", "kind": "index_map", "traces": ["VA-GPU-11"],
     "titles": ["VA-GPU-11 --n 16: add<<<1, 1>>>, one thread adds every element, one pass each"],
     "args": {"array": "c", "columns": 8}},
    {"png": "ch02_VA-GPU-N1.png", "kind": "index_map", "traces": ["VA-GPU-N1"],
     "titles": ["VA-GPU-N1 --n 20 --blocks 8: add<<<8, 1>>>, block b adds b, b + 8, b + 16"],
     "args": {"array": "c", "columns": 8}},
    {"png": "ch02_VA-GPU-NN.png", "kind": "index_map", "traces": ["VA-GPU-NN"],
     "titles": ["VA-GPU-NN --n 40 --blocks 2 --threads 8: add<<<2, 8>>>, 16 threads, "
                "global index g = block * 8 + thread, then g + 16, g + 32"],
     "args": {"array": "c", "columns": 16}},
    {"png": "ch02_grid_stride.png", "kind": "pass_map",
     "traces": ["VA-GPU-NN.128x128", "VA-GPU-NN.auto"],
     "titles": ["VA-GPU-NN --n 1048576 (128 x 128 threads)",
                "VA-GPU-NN --n 1048576 --blocks auto (a full grid)"],
     "args": {"array": "c", "columns": 128}},
    {"png": "ch03_reduction_trees.png", "kind": "tree_steps",
     "traces": ["reduction.interleaved-shared", "reduction.sequential",
                "reduction.strided_tree"],
     "titles": ["interleaved (reduction --kernel interleaved-shared --threads 128): "
                "thread t adds cache[t + stride] into cache[t] when t % (2 * stride) == 0",
                "sequential (reduction --kernel sequential --threads 128): "
                "thread t adds cache[t + half] into cache[t] when t < half",
                "a planted bug (tools/trace/patches/ch03_dot_product/reduction.strided_tree.trace): "
                "thread t adds cache[i + stride] into cache[i], i = 2 * stride * t"],
     "args": {"array": "cache"}},
    {"png": "ch03_warp_shuffle.png", "kind": "shuffle_rounds", "traces": ["Dot-SM-Warp"],
     "titles": ["Dot-SM-Warp --n 512 --blocks 1 --threads 64: warp_sum in warp 1, "
                "v += __shfl_down_sync(FULL_WARP, v, offset)"],
     "args": {"array": "v", "block": 0, "warp": 1}},
    {"png": "ch03_stencil_halo.png", "kind": "halo", "traces": ["stencil_1d"],
     "titles": ["stencil_1d --n 1000: block 1's temp (256 + 2 x 3 slots), the first and last "
                "10 slots"],
     "args": {"shared": "temp", "source": "in", "block": 1}},
    {"png": "ch04_coalescing.png", "kind": "warp_sectors",
     "traces": ["MM-GPU-GM", "MM-GPU-GM.wrong_index"],
     "titles": ["MM-GPU-GM, M[y * Width + k] (Width 40, k = 0): every lane in row y = 0",
                "MM-GPU-GM, N[k * Width + x]: lane i in column x = i",
                "a planted bug, N[x * Width + k]: lane i in row x = i"],
     "args": {"panels": [["MM-GPU-GM", "M"], ["MM-GPU-GM", "N"],
                         ["MM-GPU-GM.wrong_index", "N"]]}},
    {"png": "ch04_register_tile.png", "kind": "owner_map", "traces": ["MM-GPU-RT"],
     "titles": ["MM-GPU-RT --width 128: block (0, 0) writes a 64 x 128 tile of P with 128 threads"],
     "args": {"array": "P", "width": 128, "block": [0, 0], "threads": [0, 1, 16]}},
    {"png": "ch04_swizzle.png", "kind": "swizzle",
     "traces": ["MM-GPU-WGMMA", "MM-GPU-WGMMA.unswizzled"],
     "titles": ["MM-GPU-WGMMA --width 128 --precision tf32 --step 1: block (0, 0)'s first A "
                "slice\nas the TMA unit wrote it (CU_TENSOR_MAP_SWIZZLE_128B)",
                "a planted bug (tools/trace/patches/ch04_matmul/MM-GPU-WGMMA.unswizzled.bug):"
                "\nthe same slice with CU_TENSOR_MAP_SWIZZLE_NONE"],
     "args": {"array": "A"}},
    {"png": "ch05_sphere_reads.png", "kind": "lane_steps",
     "traces": ["ray", "ray.divergent", "ray_noconst", "ray_noconst.divergent"],
     "titles": ["ray --dim 32 --spheres 8 (constant memory)",
                "ray --dim 32 --spheres 8 --divergent"],
     "args": {"array": "s", "global_traces": ["ray_noconst", "ray_noconst.divergent"]}},
    {"png": "ch04_tiles.png", "kind": "tile_phases", "traces": ["MM-GPU-SM"],
     "titles": ["MM-GPU-SM --width 40: block (1, 0), 32 x 32 threads, copies one tile of M "
                "and one of N per phase"],
     "args": {"block": [1, 0], "width": 40}},
    {"png": "ch07_ring.png", "kind": "ring_steps",
     "traces": ["ring_allreduce", "ring_allreduce.chunk_off_by_one"],
     "titles": ["ring_allreduce --gpus 2 --n 250",
                "a planted bug (tools/trace/patches/ch07_multi_gpu/"
                "ring_allreduce.chunk_off_by_one.bug): the reduce-scatter's chunk one step off"],
     "args": {"n": 250}},
]
