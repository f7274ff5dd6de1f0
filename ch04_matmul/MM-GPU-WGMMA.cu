// MM-GPU-WGMMA.cu -- Hopper's own Tensor Core path: a warpgroup multiplies tiles that the
// tensor memory accelerator (TMA) copied into shared memory (chapter 4, after MM-GPU-TC).
// Source: none; the step after MM-GPU-TC, on the road of the public Hopper worklogs
// (docs/ch04_tensor_cores.md names them).
//
// MM-GPU-TC stops where wmma stops: on an H100 or H200, wmma::mma_sync alone peaks at
// about 60% of what cuBLAS reaches. cuBLAS uses instructions that only Hopper (compute
// capability 9.0, the sm_90a target) has, and this program uses them too, in PTX:
//  * wgmma.mma_async: a WARPGROUP -- 4 consecutive warps, 128 threads -- multiplies a
//    64 x 256 tile of sums by a 64 x K slice of A times a K x 256 slice of B. Both slices
//    are read straight from shared memory, described by a 64-bit "matrix descriptor"
//    (make_descriptor); no thread loads a fragment. The instruction is asynchronous: the
//    warpgroup issues it, may do other work, and waits for it (wgmma.wait_group).
//  * cp.async.bulk.tensor (TMA): ONE thread asks the TMA unit for a whole 2-D box of a
//    matrix; it arrives in shared memory already laid out as wgmma wants it (swizzled, see
//    make_descriptor), with zeros where the box sticks out past the matrix.
//  * mbarrier: a barrier object in shared memory. The TMA unit counts the bytes it
//    delivers into it, and the threads wait on it until the box is complete (wait_barrier):
//    it replaces cp.async's wait_prior and the __syncthreads() that followed it.
// The kernel is built in the steps of the worklogs, chosen with --step (all by default,
// each checked and timed in the same run):
//   1  wgmma + TMA, ONE stage: copy a slice, wait, multiply, repeat
//   2  STAGES slices in flight, each with its mbarrier: the copies of the next slices
//      overlap the multiplication of this one
//   3  warp specialisation: a PRODUCER warpgroup only issues copies, two CONSUMER
//      warpgroups only multiply; "empty" mbarriers replace __syncthreads(), and
//      setmaxnreg moves registers from the producer to the consumers
//   4  clusters of 2 blocks: the two blocks of a cluster need the same slice of B, so each
//      copies half of it and the TMA unit delivers it to both (TMA multicast); and the
//      tiles in groups of rows, so that the blocks running together share A in L2
// Inputs: BF16 or TF32 (--precision, converted once, outside the timing, as in MM-GPU-TC);
// sums in FP32. wgmma reads TF32 operands only "K-major" (each row of the slice a run of
// K), so N is stored transposed by that conversion -- in both precisions, one layout. Any
// Width >= 1: rows are padded to 16 bytes (TMA's rule for a matrix's row stride).
//
// Standalone build, from this folder (needs the sm_90a target: an H100 or H200):
//   nvcc -std=c++17 -O2 -arch=sm_90a -o MM-GPU-WGMMA MM-GPU-WGMMA.cu -lcublas
// (-arch=sm_90a: the "a" target, with wgmma and setmaxnreg; plain sm_90 builds empty kernels.)
// Run:
//   ./MM-GPU-WGMMA --width 4096 --precision bf16 --compare-cublas
//   ./MM-GPU-WGMMA --width 4096 --precision tf32 --step 4 --data uniform
//   ./MM-GPU-WGMMA --help                every option

#include <cuda.h>          // CUtensorMap, the description of a matrix for the TMA unit
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled: its maker, from the driver
#include <cstdint>
#include <type_traits>
#include "../common/handle_error.h"
#include "../common/report.h"
#include "cublas_yardstick.h"
#include "matrix.h"
#include "tensor_inputs.h"

// The block's tile of P is BM x BN; each step through Width takes a slice of 128 bytes of
// each row: BK = 64 BF16 or 32 TF32 values. 128 bytes is the widest swizzle (below).
const int BM = 128, BN = 256, SLICE_BYTES = 128;
const int CONSUMERS = 2;               // warpgroups that multiply: 64 rows of the tile each
const int WARPGROUP = 128;             // threads: 4 warps
const int A_BYTES = BM * SLICE_BYTES;  // 16 KB: a BM x BK slice of A
const int B_BYTES = BN * SLICE_BYTES;  // 32 KB: a BN x BK slice of N transposed
const int STAGE_BYTES = A_BYTES + B_BYTES;
const int STAGES = 4;  // steps 2-4: 4 x 48 KB of shared memory
#ifndef WGMMA_CLUSTER
#define WGMMA_CLUSTER 2  // step 4: blocks per cluster (1: no cluster, no multicast)
#endif
#ifndef WGMMA_GROUP_ROWS
#define WGMMA_GROUP_ROWS 16  // step 4: row tiles per group in the tile order (0: none)
#endif
#ifndef WGMMA_IN_FLIGHT
#define WGMMA_IN_FLIGHT 0  // steps 3-4: 1 keeps one wgmma group running across slices
#endif
const int CLUSTER = WGMMA_CLUSTER, GROUP_ROWS = WGMMA_GROUP_ROWS;

template <typename T>
__host__ __device__ constexpr int slice_k() {  // BK: the Width covered by one slice
    return SLICE_BYTES / (int)sizeof(T);
}

// ---------------------------------------------------------------------------------------
// The instructions, one small function each, in PTX (the PTX ISA manual, chapters
// "wgmma", "cp.async.bulk.tensor" and "mbarrier", says what each operand is).
// Built for anything but sm_90a, the kernels below are empty (__CUDA_ARCH_FEAT_SM90_ALL:
// the "a" target's features), and main() refuses to run them (require_wgmma_build).

__device__ unsigned shared_address(const void* p) {  // an address in the .shared window
    return (unsigned)__cvta_generic_to_shared(p);
}

// An mbarrier that completes a phase when `count` threads have arrived and every byte
// announced with arrive_expect_tx has landed.
__device__ void init_barrier(uint64_t* bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count)
                 : "memory");
}
// Arrive, and announce `bytes` more that the TMA unit will deliver in this phase.
__device__ void arrive_expect_tx(uint64_t* bar, int bytes) {
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)),
        "r"(bytes)
        : "memory");
}
// Arrive on the barrier at the same place in block `cta` of my cluster (my own included):
// mapa turns my shared address into that block's. (Its ordering is the default, release at
// the block's scope: what it orders, the wgmma reads of a stage, are complete already;
// .release.cluster would make every arrival wait for a cluster-wide fence.)
__device__ void arrive_cluster(uint64_t* bar, unsigned cta) {
    asm volatile(
        "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(shared_address(bar)),
        "r"(cta)
        : "memory");
}
// Wait until the phase of parity `parity` (0, 1, 0, ...: the k-th use of the barrier has
// parity k % 2) has completed.
__device__ void wait_barrier(uint64_t* bar, int parity) {
    unsigned done = 0;
    while (!done)
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}"
            : "=r"(done)
            : "r"(shared_address(bar)), "r"(parity)
            : "memory");
}

// The TMA unit: the box of the matrix `map` whose first element is (row, k) -- k along
// the rows, in elements -- into shared memory at dst; its bytes are counted on `bar`.
__device__ void copy_box(void* dst, const CUtensorMap* map, uint64_t* bar, int k, int row) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(shared_address(dst)),
        "l"(map), "r"(k), "r"(row), "r"(shared_address(bar))
        : "memory");
}
// The same box delivered to every block of the cluster named in the bit mask `ctas`, at
// the same shared-memory offset in each, its bytes counted on each block's own `bar`.
__device__ void copy_box_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, int k, int row,
                                   uint16_t ctas) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(shared_address(dst)),
        "l"(map), "r"(k), "r"(row), "r"(shared_address(bar)), "h"(ctas)
        : "memory");
}

// A wgmma matrix descriptor: where a slice lies in shared memory and how it is laid out.
// The slices are "K-major": each row (of A, or of N transposed) is 128 bytes of K. With
// 128-byte swizzling, 8 rows form a 1 KB atom in which the 16-byte chunks of row r are
// stored in the order chunk ^ (r % 8). Why: the 8 rows that wgmma reads together would
// otherwise all start in the same 4 banks (rows 128 bytes apart); swizzled, they spread
// over all 32. TMA writes this layout (CU_TENSOR_MAP_SWIZZLE_128B), wgmma reads it:
//   bits  0-13  start address / 16
//   bits 16-29  leading byte offset / 16: unused for a swizzled K-major slice (1)
//   bits 32-45  stride byte offset / 16: from one 8-row atom to the next, 1024 bytes
//   bits 62-63  the swizzle: 1 = 128 bytes
// The slice must start on 1 KB (the swizzle is a function of the address bits).
__device__ uint64_t make_descriptor(const void* slice) {
    uint64_t start = (shared_address(slice) & 0x3FFFF) >> 4;
    uint64_t leading = 1, stride = 1024 >> 4, swizzle_128B = 1;
    return start | leading << 16 | stride << 32 | swizzle_128B << 62;
}

// The ordering of wgmma: fence before the first wgmma that touches registers other
// instructions wrote; commit closes a group of wgmma's; wait_group<N> waits until at most
// N groups are still running.
__device__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
__device__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// The compiler does not know that wgmma writes the sums LATER, at wgmma_wait: this empty
// asm, which "reads and writes" each of them, keeps it from moving uses across the wait.
__device__ void fence_sums(float (&d)[128]) {
#pragma unroll
    for (int i = 0; i < 128; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// D (64 x 256, FP32, 128 registers a thread) += A (64 x K) x B (K x 256), A and B read
// from shared memory through their descriptors; K = 8 TF32 or 16 BF16 values, 32 bytes.
// accumulate = 0 would ignore D (the first step); we zero D once instead.
template <typename T>
__device__ void wgmma_64x256(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    if constexpr (std::is_same_v<T, float>)
        asm volatile(
            "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
            "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
            "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
            "%96, %97, %98, %99, %100, %101, %102, %103, "
            "%104, %105, %106, %107, %108, %109, %110, %111, "
            "%112, %113, %114, %115, %116, %117, %118, %119, "
            "%120, %121, %122, %123, %124, %125, %126, %127}, "
            "%128, %129, accumulate, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
              "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
              "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
              "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
              "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
              "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
              "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
              "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
              "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
              "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),
              "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]),
              "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
              "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),
              "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),
              "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
              "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
              "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]),
              "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]),
              "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]),
              "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
              "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),
              "+f"(d[127])
            : "l"(desc_a), "l"(desc_b), "r"(accumulate));
    else if constexpr (true)
        asm volatile(
            "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
            "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
            "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
            "%96, %97, %98, %99, %100, %101, %102, %103, "
            "%104, %105, %106, %107, %108, %109, %110, %111, "
            "%112, %113, %114, %115, %116, %117, %118, %119, "
            "%120, %121, %122, %123, %124, %125, %126, %127}, "
            "%128, %129, accumulate, 1, 1, 0, 0;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
              "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
              "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
              "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
              "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
              "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
              "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
              "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
              "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
              "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),
              "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]),
              "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
              "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),
              "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),
              "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
              "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
              "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]),
              "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]),
              "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]),
              "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
              "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),
              "+f"(d[127])
            : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// A block of the cluster: its rank (0 without a cluster), and the barrier that all the
// cluster's threads reach before any goes on (arrive with release, wait with acquire).
__device__ unsigned cluster_rank() {
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}
__device__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}
// An arrival on a barrier of my own block.
__device__ void arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}
// Makes the barriers just initialised visible to the TMA unit and to the cluster.
__device__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// The dynamic shared memory, moved up to the next 1 KB (the swizzle's alignment; the
// launch asks for 1 KB more than the stages need).
__device__ unsigned char* align_1k(unsigned char* p) {
    return p + ((1024 - (shared_address(p) & 1023)) & 1023);
}

// One slice of Width through the tensor cores: my warpgroup's 64 rows of the A slice
// times the whole B slice, in 4 wgmma's of 32 bytes of K each. Moving 32 bytes along K
// inside the swizzled rows is adding 32 to the start address: the hardware applies the
// swizzle to the address it computes, so the descriptor names the logical position.
// Issued as one group (commit): the caller waits for it (wgmma_wait) before the stage may
// be refilled, and before it reads the sums.
template <typename T>
__device__ void multiply_slice(float (&sums)[128], const unsigned char* stage, int consumer) {
    uint64_t a = make_descriptor(stage + consumer * 64 * SLICE_BYTES);
    uint64_t b = make_descriptor(stage + A_BYTES);
    const int K_STEP = 32 >> 4;  // 32 bytes, in the descriptor's units of 16
    fence_sums(sums);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < SLICE_BYTES / 32; k++)
        wgmma_64x256<T>(sums, a + k * K_STEP, b + k * K_STEP, 1);
    wgmma_commit();
}

// My warpgroup's 64 x 256 sums into P, where they fall inside it. wgmma's layout of D:
// warp w of the warpgroup holds rows 16 w .. 16 w + 15; in it, lane l holds rows l / 4
// and l / 4 + 8, and in each 8 columns the two at 2 (l % 4): d[4 j + 0, 1] at (row,
// 8 j + 2 (l % 4) + 0, 1), d[4 j + 2, 3] 8 rows down. Two neighbours go out as one
// 8-byte store when W is even (their address is then a multiple of 8 bytes).
__device__ void store_sums(const float (&d)[128], float* P, int W, int row0, int col0) {
    int t = threadIdx.x % WARPGROUP, warp = t / 32, lane = t % 32;
    int row = row0 + 16 * warp + lane / 4, col = col0 + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < 32; j++) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            int r = row + 8 * half, c = col + 8 * j;
            float v0 = d[4 * j + 2 * half], v1 = d[4 * j + 2 * half + 1];
            if (r >= W) continue;
            float* p = P + (size_t)r * W + c;
            if (c + 1 < W && W % 2 == 0) {
                *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
            } else {
                if (c < W) p[0] = v0;
                if (c + 1 < W) p[1] = v1;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Steps 1 and 2: every warpgroup multiplies; thread 0 also issues the copies.
// map_a: M converted (W x W, K-major); map_b: N transposed (W x W, K-major); boxes of
// BK x BM and BK x BN. A block computes P[row0 .. row0 + 127][col0 .. col0 + 255].
// NSTAGES = 1 is step 1: copy, wait, multiply, and only then the next copy.
template <typename T, int NSTAGES>
__global__ void __launch_bounds__(CONSUMERS* WARPGROUP, 1)
    matmul_wgmma_stages(const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b, float* P, int W) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char shared_raw[];
    unsigned char* stages = align_1k(shared_raw);
    __shared__ uint64_t full[NSTAGES];  // full[s]: stage s holds its slices
    const int consumer = threadIdx.x / WARPGROUP;
    const int row0 = blockIdx.x * BM, col0 = blockIdx.y * BN;
    const int steps = (W + slice_k<T>() - 1) / slice_k<T>();  // a partial last slice: zeros

    if (threadIdx.x == 0) {
        for (int s = 0; s < NSTAGES; s++) init_barrier(&full[s], 1);
        fence_barrier_init();
    }
    __syncthreads();

    // The copies of one step's slices into its stage, by thread 0: announce the bytes,
    // then ask for the two boxes. Where a box sticks out of the matrix (a partial tile,
    // the last slice), the TMA unit fills the rest with zeros, and still counts them.
    auto load = [&](int step) {
        int s = step % NSTAGES;
        unsigned char* stage = stages + s * STAGE_BYTES;
        arrive_expect_tx(&full[s], STAGE_BYTES);
        copy_box(stage, &map_a, &full[s], step * slice_k<T>(), row0);
        copy_box(stage + A_BYTES, &map_b, &full[s], step * slice_k<T>(), col0);
    };

    float sums[128];
#pragma unroll
    for (int i = 0; i < 128; i++) sums[i] = 0.0f;
    if (threadIdx.x == 0)
        for (int step = 0; step < NSTAGES - 1 && step < steps; step++) load(step);
    for (int step = 0; step < steps; step++) {
        // The stage of step - 1 is free (the barrier at the end of the last round): refill
        // it with the slices of step + NSTAGES - 1...
        int next = step + NSTAGES - 1;
        if (threadIdx.x == 0 && next < steps) load(next);
        // ...and wait for this step's, the use number step / NSTAGES of its barrier.
        wait_barrier(&full[step % NSTAGES], (step / NSTAGES) % 2);
        multiply_slice<T>(sums, stages + step % NSTAGES * STAGE_BYTES, consumer);
        wgmma_wait<0>();
        __syncthreads();  // both warpgroups are done with this stage
    }
    fence_sums(sums);
    store_sums(sums, P, W, row0 + 64 * consumer, col0);
#endif
}

// ---------------------------------------------------------------------------------------
// Steps 3 and 4: warp specialisation. Warpgroup 0 is the producer: its thread 0 only
// issues copies. Warpgroups 1 and 2 are consumers: they only wait and multiply. Two
// barriers per stage say who may go on: full[s] (the TMA unit has delivered stage s:
// the consumers may read it) and empty[s] (every consumer is done with it: the producer
// may refill it). No __syncthreads() in the loop: nobody waits for more than it needs.
// setmaxnreg: the producer needs few registers, the consumers 128 for the sums alone;
// the producer gives back down to 40 a thread, the consumers take up to 232.
// CLUSTER_SIZE = 2 is step 4: the blocks of a cluster have the same col0 and neighbouring
// row0, so they need the same B slices; each copies half of the rows (map_b's box is
// BN / 2 rows) and multicasts them to both. A stage may then be refilled only when the
// consumers of BOTH blocks are done with it: each consumer arrives on empty[s] in every
// block of the cluster, and full[s] waits for the bytes from both blocks' copies.
// GROUP_ROWS > 0 (step 4): the order of the tiles, below.
template <typename T, int CLUSTER_SIZE, int GROUP_ROWS>
__global__ void __launch_bounds__((CONSUMERS + 1) * WARPGROUP, 1)
    matmul_wgmma_specialized(const __grid_constant__ CUtensorMap map_a,
                             const __grid_constant__ CUtensorMap map_b, float* P, int W,
                             int row_tiles) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char shared_raw[];
    unsigned char* stages = align_1k(shared_raw);
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int warpgroup = threadIdx.x / WARPGROUP;
    // The blocks start in the order of blockIdx.x, about one per multiprocessor at a time.
    // Row tiles fastest (as in steps 1-2), the blocks running together share a few columns
    // of tiles but need every row of A: at W = 8192, 128 MB of BF16, more than the L2
    // cache holds, read again for every few columns. In groups of GROUP_ROWS row tiles,
    // they share GROUP_ROWS row slices of A and a few more columns of B, which stay in L2.
    int row_tile = blockIdx.x % row_tiles, col_tile = blockIdx.x / row_tiles;
    if (GROUP_ROWS > 0) {
        int col_tiles = (W + BN - 1) / BN, per_group = GROUP_ROWS * col_tiles;
        int first = blockIdx.x / per_group * GROUP_ROWS, in_group = blockIdx.x % per_group;
        int rows = min(GROUP_ROWS, row_tiles - first);  // the last group may be smaller
        row_tile = first + in_group % rows;
        col_tile = in_group / rows;
    }
    const int row0 = row_tile * BM, col0 = col_tile * BN;
    const int steps = (W + slice_k<T>() - 1) / slice_k<T>();
    const unsigned rank = CLUSTER_SIZE > 1 ? cluster_rank() : 0;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            init_barrier(&full[s], 1);
            init_barrier(&empty[s], CONSUMERS * CLUSTER_SIZE);
        }
        fence_barrier_init();
    }
    // Every barrier of the cluster is ready before anyone copies into it or arrives on it.
    if (CLUSTER_SIZE > 1)
        cluster_sync();
    else
        __syncthreads();

    if (warpgroup == 0) {  // the producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x == 0) {
            for (int step = 0; step < steps; step++) {
                int s = step % STAGES;
                unsigned char* stage = stages + s * STAGE_BYTES;
                // Wait until the consumers have released the previous use of stage s. The
                // first round passes at once: a new barrier counts its phase "before 0"
                // (parity 1) as complete.
                wait_barrier(&empty[s], ((step / STAGES) % 2) ^ 1);
                arrive_expect_tx(&full[s], STAGE_BYTES);
                copy_box(stage, &map_a, &full[s], step * slice_k<T>(), row0);
                if (CLUSTER_SIZE == 1) {
                    copy_box(stage + A_BYTES, &map_b, &full[s], step * slice_k<T>(), col0);
                } else {
                    const int rows = BN / CLUSTER_SIZE;  // my part of the B slice, for all
                    copy_box_multicast(stage + A_BYTES + rank * rows * SLICE_BYTES, &map_b,
                                       &full[s], step * slice_k<T>(), col0 + rank * rows,
                                       (uint16_t)((1u << CLUSTER_SIZE) - 1));
                }
            }
        }
    } else {  // a consumer
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int consumer = warpgroup - 1;
        float sums[128];
#pragma unroll
        for (int i = 0; i < 128; i++) sums[i] = 0.0f;
        // Stage s is released by one arrival per warpgroup (in every block of the cluster).
        auto release = [&](int s) {
            if (threadIdx.x % WARPGROUP != 0) return;
            if (CLUSTER_SIZE == 1)
                arrive(&empty[s]);
            else
                for (int cta = 0; cta < CLUSTER_SIZE; cta++) arrive_cluster(&empty[s], cta);
        };
        for (int step = 0; step < steps; step++) {
            int s = step % STAGES;
            wait_barrier(&full[s], (step / STAGES) % 2);
            multiply_slice<T>(sums, stages + s * STAGE_BYTES, consumer);
#if WGMMA_IN_FLIGHT
            // Keep this slice's group running; wait for the one before and release its stage.
            wgmma_wait<1>();
            if (step > 0) release((step - 1) % STAGES);
#else
            wgmma_wait<0>();
            release(s);
#endif
        }
        wgmma_wait<0>();
        fence_sums(sums);
        store_sums(sums, P, W, row0 + 64 * consumer, col0);
    }
    // No block of a cluster leaves while the other may still arrive on its barriers.
    if (CLUSTER_SIZE > 1) cluster_sync();
#endif
}

// Built for sm_90a? A kernel that says so (the others are empty otherwise).
__global__ void wgmma_built(int* yes) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *yes = 1;
#else
    *yes = 0;
#endif
}

// ---------------------------------------------------------------------------------------
// The host side.

// The conversion, once per product and outside the timing (as in MM-GPU-TC), into what
// the TMA unit reads: rows of `pitch` elements, pitch = W rounded up to 16 bytes (TMA
// wants every row stride a multiple of 16 bytes; the padding is never read: the tensor
// map says the matrix is W wide). transposed: out row r is column r of in (N^T).
template <typename T>
__global__ void convert_for_tma(const float* in, T* out, int W, int pitch, bool transposed) {
    size_t n = (size_t)W * pitch;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        int r = (int)(i / pitch), c = (int)(i % pitch);
        float x = c < W ? in[transposed ? (size_t)c * W + r : (size_t)r * W + c] : 0.0f;
        if constexpr (std::is_same_v<T, float>)
            out[i] = round_to_tf32(x);
        else
            out[i] = __float2bfloat16_rn(x);
    }
}

// What the kernels read: M as A and N transposed as B_t, converted and padded, with the
// tensor maps that describe them to the TMA unit.
struct WgmmaInputs {
    Precision precision = Precision::bf16;
    int W = 0, pitch = 0;  // the matrices are W x W, their rows pitch elements apart
    void *A = nullptr, *B_t = nullptr;
    CUtensorMap map_a, map_b, map_b_half;  // boxes of BK x BM, BK x BN and BK x BN / 2
};

inline size_t element_bytes(Precision p) {
    return p == Precision::bf16 ? sizeof(__nv_bfloat16) : sizeof(float);
}
inline int padded_pitch(Precision p, int W) {
    int per_16_bytes = 16 / (int)element_bytes(p);
    return (W + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
}

// A tensor map: the matrix at `base` (W x W, rows `pitch` elements apart) cut into boxes of
// BK elements x box_rows rows, each delivered with the 128-byte swizzle, zeros outside.
// cuTensorMapEncodeTiled is a driver function; we ask the runtime for it
// (cudaGetDriverEntryPointByVersion), so the program needs no -lcuda.
inline CUtensorMap make_tensor_map(Precision p, const void* base, int W, int pitch, int box_rows) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    if (!encode) {
        cudaDriverEntryPointQueryResult found;
        HANDLE_ERROR(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void**)&encode,
                                                      12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || !encode) {
            std::fprintf(stderr, "cuTensorMapEncodeTiled: not found in this driver\n");
            std::exit(EXIT_CODE_FAILED);
        }
    }
    CUtensorMap map;
    cuuint64_t size[2] = {(cuuint64_t)W, (cuuint64_t)W};                // K (along rows), rows
    cuuint64_t row_stride[1] = {(cuuint64_t)pitch * element_bytes(p)};  // bytes, 16 | it
    cuuint32_t box[2] = {(cuuint32_t)(SLICE_BYTES / element_bytes(p)), (cuuint32_t)box_rows};
    cuuint32_t element_stride[2] = {1, 1};
    CUresult result = encode(
        &map,
        p == Precision::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        2, const_cast<void*>(base), size, row_stride, box, element_stride,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuTensorMapEncodeTiled failed (CUresult %d), Width %d\n", (int)result,
                     W);
        std::exit(EXIT_CODE_FAILED);
    }
    return map;
}

// dev_M and dev_N (W x W floats, on the GPU) converted for the kernels.
inline WgmmaInputs prepare_wgmma_inputs(Precision p, const float* dev_M, const float* dev_N,
                                        int W) {
    WgmmaInputs in;
    in.precision = p;
    in.W = W;
    in.pitch = padded_pitch(p, W);
    size_t bytes = (size_t)W * in.pitch * element_bytes(p);
    HANDLE_ERROR(cudaMalloc(&in.A, bytes));
    HANDLE_ERROR(cudaMalloc(&in.B_t, bytes));
    int blocks = (int)std::min<size_t>(((size_t)W * in.pitch + 255) / 256, 4096);
    if (p == Precision::bf16) {
        convert_for_tma<<<blocks, 256>>>(dev_M, (__nv_bfloat16*)in.A, W, in.pitch, false);
        convert_for_tma<<<blocks, 256>>>(dev_N, (__nv_bfloat16*)in.B_t, W, in.pitch, true);
    } else {
        convert_for_tma<<<blocks, 256>>>(dev_M, (float*)in.A, W, in.pitch, false);
        convert_for_tma<<<blocks, 256>>>(dev_N, (float*)in.B_t, W, in.pitch, true);
    }
    CHECK_LAUNCH();
    in.map_a = make_tensor_map(p, in.A, W, in.pitch, BM);
    in.map_b = make_tensor_map(p, in.B_t, W, in.pitch, BN);
    in.map_b_half = make_tensor_map(p, in.B_t, W, in.pitch, BN / CLUSTER);
    return in;
}

inline void free_wgmma_inputs(WgmmaInputs& in) {
    HANDLE_ERROR(cudaFree(in.A));
    HANDLE_ERROR(cudaFree(in.B_t));
    in.A = in.B_t = nullptr;
}

const int STEPS = 4;
const char* STEP_NAMES[STEPS + 1] = {"", "wgmma + TMA, one stage", "mbarrier pipeline, 4 stages",
                                     "warp specialisation",
                                     "clusters of 2, B multicast, tile order"};

// The launches: one block per 128 x 256 tile of P, blockIdx.x along the rows (blocks
// launched one after another share their B slices in the L2 cache). Step 4 rounds the
// row tiles up to whole clusters (an extra block copies zeros and stores nothing).
template <typename T>
void launch_step(int step, const WgmmaInputs& in, float* P) {
    int W = in.W;
    dim3 blocks((unsigned)ceil_div(W, BM), (unsigned)ceil_div(W, BN));
    if (step <= 2) {
        auto kernel = step == 1 ? matmul_wgmma_stages<T, 1> : matmul_wgmma_stages<T, STAGES>;
        int shared = (step == 1 ? 1 : STAGES) * STAGE_BYTES + 1024;
        HANDLE_ERROR(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
        kernel<<<blocks, CONSUMERS * WARPGROUP, shared>>>(in.map_a, in.map_b, P, W);
        CHECK_LAUNCH();
        return;
    }
    // Steps 3 and 4: one block per tile in a 1-D grid (the kernel orders the tiles), with
    // cudaLaunchKernelEx, which takes the cluster shape.
    int cluster = step == 4 ? CLUSTER : 1;
    auto kernel = step == 4 ? matmul_wgmma_specialized<T, CLUSTER, GROUP_ROWS>
                            : matmul_wgmma_specialized<T, 1, 0>;
    int shared = STAGES * STAGE_BYTES + 1024;
    HANDLE_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
    int row_tiles = (int)(ceil_div(blocks.x, cluster) * cluster);
    blocks = dim3((unsigned)(row_tiles * blocks.y));
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = cluster;
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.gridDim = blocks;
    config.blockDim = dim3((CONSUMERS + 1) * WARPGROUP);
    config.dynamicSmemBytes = shared;
    config.attrs = attribute;
    config.numAttrs = 1;
    HANDLE_ERROR(cudaLaunchKernelEx(&config, kernel, in.map_a,
                                    cluster > 1 ? in.map_b_half : in.map_b, P, W, row_tiles));
}

// The same, with the precision chosen at run time.
inline void launch_matmul_wgmma(int step, const WgmmaInputs& in, float* P) {
    if (in.precision == Precision::tf32)
        launch_step<float>(step, in, P);
    else
        launch_step<__nv_bfloat16>(step, in, P);
}

// wgmma, setmaxnreg and the rest exist on compute capability 9.0 only (Blackwell has
// other instructions): elsewhere the program says so and exits 77 (ctest: skipped).
inline void require_hopper(const DeviceInfo& dev, const char* program) {
    if (dev.cc_major == 9 && dev.cc_minor == 0) return;
    std::printf(
        "%s: wgmma and the tensor memory accelerator as used here need compute "
        "capability 9.0 (H100, H200); this GPU is %s\n",
        program, dev.compute_capability().c_str());
    std::exit(EXIT_CODE_NO_DEVICE);
}

// A build without sm_90a code (an architecture list without 90a) runs empty kernels: refuse.
inline bool wgmma_build_present() {
    int* dev_yes;
    int yes = 0;
    HANDLE_ERROR(cudaMalloc(&dev_yes, sizeof(int)));
    wgmma_built<<<1, 1>>>(dev_yes);
    CHECK_LAUNCH();
    HANDLE_ERROR(cudaMemcpy(&yes, dev_yes, sizeof(int), cudaMemcpyDeviceToHost));
    HANDLE_ERROR(cudaFree(dev_yes));
    return yes == 1;
}
inline void require_wgmma_build(const char* program) {
    if (wgmma_build_present()) return;
    std::printf(
        "%s: built without code for sm_90a, the target with wgmma; rebuild with "
        "-arch=sm_90a\n",
        program);
    std::exit(EXIT_CODE_NO_DEVICE);
}

// --step: 'all' runs steps 1 to STEPS in turn; a number runs that step alone.
inline void read_steps(Args& args, int* first, int* last) {
    std::string text = args.text("--step", "all");
    *first = 1, *last = STEPS;
    if (text == "all") return;
    if (text.size() != 1 || text[0] < '1' || text[0] > '0' + STEPS)
        args.fail("--step must be 1, 2, 3, 4 or 'all'");
    *first = *last = text[0] - '0';
}

// The launch of the last step run: a block per 128 x 256 tile (step 4: whole clusters), and
// the producer's warpgroup from step 3 on.
inline void report_wgmma_launch(Report& report, int W, int last) {
    long long row_tiles = ceil_div(W, BM), col_tiles = ceil_div(W, BN);
    if (last == 4) row_tiles = ceil_div(row_tiles, CLUSTER) * CLUSTER;
    report.launch(row_tiles * col_tiles, (last <= 2 ? CONSUMERS : CONSUMERS + 1) * WARPGROUP);
}

// The conversion of M and N for the kernels (padded rows, N transposed), timed once more.
inline TimingStats time_conversion(Precision precision, const float* dev_M, const float* dev_N,
                                   int W) {
    return time_gpu(
        [&] {
            WgmmaInputs again = prepare_wgmma_inputs(precision, dev_M, dev_N, W);
            free_wgmma_inputs(again);
        },
        3, 1);
}

// --compare-cublas: cuBLAS on the same rounded inputs, unpadded and N as it is, in GFLOP/s
// (NaN without the option). It overwrites dev_P: call it after the steps are checked.
inline double cublas_gflops_here(Report& report, bool compare, Precision precision,
                                 const float* dev_M, const float* dev_N, float* dev_P, int W,
                                 double flops) {
    if (!compare) return NAN;
    void *dev_A, *dev_B;
    HANDLE_ERROR(cudaMalloc(&dev_A, input_bytes(precision, W)));
    HANDLE_ERROR(cudaMalloc(&dev_B, input_bytes(precision, W)));
    convert_inputs(precision, dev_M, dev_A, (size_t)W * W);
    convert_inputs(precision, dev_N, dev_B, (size_t)W * W);
    TimingStats t = time_cublas_yardstick(precision, dev_A, dev_B, dev_P, W, report.repeats());
    double gflops = flops / (t.median_ms * 1e6);
    report.record(precision == Precision::tf32 ? "cublas-tf32" : "cublas-bf16",
                  "cuBLAS (yardstick)", t, NAN, gflops, NAN, nullptr);
    HANDLE_ERROR(cudaFree(dev_A));
    HANDLE_ERROR(cudaFree(dev_B));
    return gflops;
}

// The steps' records: kernel only, and their share of cuBLAS in the same run.
inline void record_steps(Report& report, Precision precision, int first, int last,
                         const TimingStats* kernel, double flops, double cublas_gflops,
                         bool compare) {
    for (int step = first; step <= last; step++) {
        char variant[32], label[64];
        std::snprintf(variant, sizeof variant, "step%d-%s", step, precision_name(precision));
        std::snprintf(label, sizeof label, "step %d, kernel only", step);
        double gflops = flops / (kernel[step].median_ms * 1e6);
        report.record(variant, label, kernel[step], NAN, gflops, NAN, nullptr);
        report.extra("cublas_gflops", cublas_gflops);
        report.extra("ratio_to_cublas", gflops / cublas_gflops);
        if (compare) std::printf("  %-34s %.1f%% of cuBLAS\n", "", 100 * gflops / cublas_gflops);
    }
}

// The device memory of a run: M, N, P (bytes, guarded), the padded inputs and, for cuBLAS,
// the unpadded ones.
inline size_t wgmma_device_bytes(Precision p, int W, size_t bytes, size_t guarded) {
    size_t padded = (size_t)W * padded_pitch(p, W) * element_bytes(p);
    return 2 * bytes + guarded + 2 * padded + 2 * input_bytes(p, W);
}

// What the steps did: the last check, the first that failed and the list of failed steps,
// each step's kernel time, and the end-to-end time of the first step.
struct Steps {
    CheckResult check, first_wrong;
    std::string failures;  // "2, 4"
    TimingStats kernel[STEPS + 1];
    double end_to_end_ms = NAN;
};

// Each step: P poisoned, one launch, checked against the double product of the UNROUNDED M
// and N (matrix.h: the rounding of the inputs is in the tolerance), then timed. A step is
// printed with the check it passed or failed. end_to_end (started before the uploads) stops
// when the first step's P is back on the host.
inline Steps run_steps(int first, int last, const WgmmaInputs& in, const float* M, const float* N,
                       float* P, float* dev_P, size_t guarded, HostTimer& end_to_end, int repeats) {
    Steps s;
    for (int step = first; step <= last; step++) {
        HANDLE_ERROR(cudaMemset(dev_P, 0xFF, guarded));  // an unwritten element reads NaN
        launch_matmul_wgmma(step, in, dev_P);
        CHECK_LAUNCH_SYNC();
        HANDLE_ERROR(cudaMemcpy(P, dev_P, guarded, cudaMemcpyDeviceToHost));
        if (step == first) s.end_to_end_ms = end_to_end.stop_ms();
        s.check = check_product(M, N, P, in.W, 7, unit_roundoff(in.precision));
        check_guard(P, in.W, &s.check);  // P[W * W] must still hold the poison
        std::printf("  step %d (%s): %s\n", step, STEP_NAMES[step],
                    s.check.passed() ? "correct" : describe(s.check).c_str());
        if (!s.check.passed() && s.failures.empty()) s.first_wrong = s.check;
        if (!s.check.passed())
            s.failures += (s.failures.empty() ? "" : ", ") + std::to_string(step);
        s.kernel[step] = time_gpu([&] { launch_matmul_wgmma(step, in, dev_P); }, repeats);
    }
    return s;
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-GPU-WGMMA [--precision bf16|tf32] [--step 1|2|3|4|all] [--width W]\n"
    "                    [--data random|uniform|document] [--seed S] [--repeats R] [--cpu]\n"
    "                    [--compare-cublas] [--json]\n"
    "  --precision P        the inputs' format on the Tensor Cores: 'bf16' (default), 'tf32'\n"
    "  --step S             which kernel: 1 wgmma + TMA, one stage; 2 a 4-stage mbarrier\n"
    "                       pipeline; 3 warp specialisation; 4 clusters with TMA multicast\n"
    "                       and a tile order that shares A in L2;\n"
    "                       'all' (default): each in turn, each checked and timed\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --data KIND          'random': odd multiples of 1/8 in [-1, 1], exact in TF32 and\n"
    "                       BF16 too, checked exactly (default); 'uniform': uniform in\n"
    "                       [-1, 1], which shows the error of rounded inputs;\n"
    "                       'document': M[y*W+x] = x + y*W, as the original\n"
    "  --seed S             seed of the random data (default 1)\n"
    "  --repeats R          timed kernel launches after a warm-up (default 10)\n"
    "  --cpu                also time the CPU triple loop (MM-CPU) at this Width: slow\n"
    "  --compare-cublas     also time cuBLAS on the same inputs and print each step's share\n"
    "  --json               also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    MatrixRun run = read_matrix_run(args, "random", true, true);  // --width, --data, ...
    Precision precision = read_precision(args, "bf16", false);
    int first, last;
    read_steps(args, &first, &last);
    bool compare = args.flag("--compare-cublas");
    Report report(args, 10);
    int W = run.W;
    size_t bytes = run.bytes, guarded = run.guarded_bytes();
    report.start(wgmma_device_bytes(precision, W, bytes, guarded), 0);
    require_hopper(report.device(), args.program());
    require_wgmma_build(args.program());
    report_matrix_run(report, run).size("precision", precision_name(precision));
    report_wgmma_launch(report, W, last);

    float* M = (float*)host_alloc(args, bytes);
    float* N = (float*)host_alloc(args, bytes);
    float* P = (float*)host_alloc(args, guarded);
    fill_inputs(M, N, run);
    // End to end, for the first step: allocate, copy in, convert, multiply, copy out.
    HostTimer end_to_end;
    float *dev_M, *dev_N, *dev_P;
    HANDLE_ERROR(cudaMalloc(&dev_M, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_N, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_P, guarded));
    HANDLE_ERROR(cudaMemcpy(dev_M, M, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_N, N, bytes, cudaMemcpyHostToDevice));
    WgmmaInputs in = prepare_wgmma_inputs(precision, dev_M, dev_N, W);
    TimingStats conversion = time_conversion(precision, dev_M, dev_N, W);

    Steps steps = run_steps(first, last, in, M, N, P, dev_P, guarded, end_to_end, report.repeats());

    double flops = run.flops();
    double cublas_gflops =
        cublas_gflops_here(report, compare, precision, dev_M, dev_N, dev_P, W, flops);
    record_steps(report, precision, first, last, steps.kernel, flops, cublas_gflops, compare);
    report.note("end to end, first step", "end_to_end_ms", steps.end_to_end_ms);
    report.note("conversion of M and N (once)", "convert_ms", conversion.median_ms);
    report_relative_error(report, steps.check);
    report_cpu_baseline(report, args, run, M, N, steps.end_to_end_ms, steps.kernel[last]);

    free_wgmma_inputs(in);
    HANDLE_ERROR(cudaFree(dev_M));
    HANDLE_ERROR(cudaFree(dev_N));
    HANDLE_ERROR(cudaFree(dev_P));
    std::free(M);
    std::free(N);
    std::free(P);
    if (!steps.failures.empty())
        return report.verdict(false, "step(s) %s wrong; the first: %s", steps.failures.c_str(),
                              describe(steps.first_wrong).c_str());
    return report.verdict(true, "%s: %s", first == last ? "the step" : "every step",
                          describe(steps.check).c_str());
}
#endif
