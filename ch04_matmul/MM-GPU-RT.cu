// MM-GPU-RT.cu -- register tiling: many outputs per thread (chapter 4, advanced lab).
// Source: none; the step after "GPU Programming" (CSInParallel, 2012), chapter 4.
//
// MM-GPU-SM moves the data from global memory into shared memory, but every
// multiply-add still needs two loads from shared memory, and shared memory
// cannot deliver two numbers per multiply-add to all 128 FP32 lanes of a
// multiprocessor. The way out is one level further down the hierarchy of
// the memory-types table: registers. Here each thread computes an 8 x 8
// patch of P. For each k it loads 8 numbers of M and 8 of N from shared
// memory into registers and does 8 x 8 = 64 multiply-adds with them: 16
// loads for 64 multiply-adds instead of 2 for 1. The patches and tiles:
//
//   a block of 256 threads computes a 128 x 128 tile of P ("block tiling"),
//   stepping through Width in slices of BK = 8: a 128 x 8 slice of M and an
//   8 x 128 slice of N pass through shared memory per step;
//   each thread keeps its 8 x 8 sums in registers ("register tiling") and
//   moves data 16 bytes at a time (float4: "wide loads").
//
// Large tiles are fast only when there are enough of them: at Width 1024,
// 128 x 128 tiles make 64 blocks, and half of an H200's 132 multiprocessors
// would sit idle. So the tile is a template parameter, and the launch picks a
// 64 x 128 tile (128 threads, the same 8 x 8 sums each) whenever the large one
// gives fewer blocks than there are multiprocessors. (On the H200 at Width
// 1024, 64 x 128 measured faster than 64 x 64, 32 x 64 and 128 x 64.)
//
// Any Width >= 1 works: slices that stick out of the matrix are zero-filled,
// and the wide loads and stores fall back to single floats at the edges and
// whenever Width is not a multiple of 4 (a float4 must sit on 16 bytes).
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o MM-GPU-RT MM-GPU-RT.cu -lcublas
// (add -arch=native, or -arch=sm_90 on an H100/H200, for the full speed.)
// Run:
//   ./MM-GPU-RT --width 4096 --compare-cublas
//   ./MM-GPU-RT --help                   every option

#include "../common/handle_error.h"
#include "../common/report.h"
#include "cublas_yardstick.h"
#include "matrix.h"

// The step before, for the lesson (matrix.h: check_step_lesson): MM-GPU-SM's
// kernel, from its own file with its main() left out.
#ifdef CUDA_EXAMPLES_NO_MAIN
#include "MM-GPU-SM.cu"
#else
#define CUDA_EXAMPLES_NO_MAIN
#include "MM-GPU-SM.cu"
#undef CUDA_EXAMPLES_NO_MAIN
#endif

// The tiles: BM x BN of P per block (a template parameter of the kernel,
// 128 x 128 or, at small Widths, RT_SMALL_BM x RT_SMALL_BN), TM x TN per thread.
#ifndef RT_SMALL_BM
#define RT_SMALL_BM 64
#endif
#ifndef RT_SMALL_BN
#define RT_SMALL_BN 128
#endif
#ifndef RT_BLOCKS_PER_SM
#define RT_BLOCKS_PER_SM 1  // fewer large tiles than this per multiprocessor: the small tile
#endif
const int BK = 8;  // the slice of Width that one step stages in shared memory
const int TM = 8;  // rows of P per thread
const int TN = 8;  // columns of P per thread
// The threads of a block: one per TM x TN patch, (128 / 8) x (128 / 8) = 256.
__host__ __device__ constexpr int threads_rt(int BM, int BN) {
    return (BM / TM) * (BN / TN);
}

// Four consecutive floats A[row][col..col+3] of a W x W matrix, as one float4;
// zeros for any of them outside the matrix. The single 16-byte load is used
// only when all four are inside and 16-byte aligned (W a multiple of 4).
__device__ float4 load4(const float* A, int row, int col, int W) {
    if (row < W && W % 4 == 0 && col + 3 < W)
        return *reinterpret_cast<const float4*>(&A[row * W + col]);
    float4 v = make_float4(0, 0, 0, 0);
    if (row < W) {
        if (col + 0 < W) v.x = A[row * W + col + 0];
        if (col + 1 < W) v.y = A[row * W + col + 1];
        if (col + 2 < W) v.z = A[row * W + col + 2];
        if (col + 3 < W) v.w = A[row * W + col + 3];
    }
    return v;
}

// The opposite: writes v to A[row][col..col+3], skipping what lies outside.
__device__ void store4(float* A, int row, int col, int W, float4 v) {
    if (row >= W) return;
    if (W % 4 == 0 && col + 3 < W) {
        *reinterpret_cast<float4*>(&A[row * W + col]) = v;
        return;
    }
    if (col + 0 < W) A[row * W + col + 0] = v.x;
    if (col + 1 < W) A[row * W + col + 1] = v.y;
    if (col + 2 < W) A[row * W + col + 2] = v.z;
    if (col + 3 < W) A[row * W + col + 3] = v.w;
}

// __launch_bounds__ promises at most threads_rt(BM, BN) threads per block, so the
// compiler may give each thread up to 255 registers -- it needs 64 for the sums.
template <int BM, int BN>
__global__ void __launch_bounds__(threads_rt(BM, BN))
    matmul_rt(const float* M, const float* N, float* P, int W) {
    const int THREADS = threads_rt(BM, BN);
    const int M_LOADS = BM * BK / 4 / THREADS;  // float4s of each slice per thread:
    const int N_LOADS = BK * BN / 4 / THREADS;  // 1 each with 128 x 128 tiles
    static_assert(M_LOADS * THREADS == BM * BK / 4 && N_LOADS * THREADS == BK * BN / 4 &&
                      M_LOADS >= 1 && N_LOADS >= 1,
                  "every thread copies the same number of float4s of each slice");
    // The slice of M is stored transposed, Ms[k][row], so that the 8 numbers
    // of M a thread needs for one k are side by side and come in two float4
    // loads. Each row is padded by 4 floats so that the transposing stores of
    // neighbouring threads land in different shared-memory banks.
    __shared__ __align__(16) float Ms[BK][BM + 4];
    __shared__ __align__(16) float Ns[BK][BN];

    int t = threadIdx.x;
    int row0 = blockIdx.y * BM;  // this block's tile of P starts at (row0, col0)
    int col0 = blockIdx.x * BN;

    // Who copies what: float4 number c of a slice goes to thread c % THREADS
    // (with 128 x 128 tiles: 256 threads, 256 float4s in each slice).
    // M slice: BM rows x 2 float4s; N slice: 8 rows x BN / 4 float4s.
    int m_row[M_LOADS], m_col[M_LOADS], n_row[N_LOADS], n_col[N_LOADS];
#pragma unroll
    for (int i = 0; i < M_LOADS; i++) {
        m_row[i] = (t + i * THREADS) / 2;
        m_col[i] = (t + i * THREADS) % 2 * 4;
    }
#pragma unroll
    for (int i = 0; i < N_LOADS; i++) {
        n_row[i] = (t + i * THREADS) / (BN / 4);
        n_col[i] = (t + i * THREADS) % (BN / 4) * 4;
    }

    // Which outputs are mine: 16 x 16 threads (with 128 x 128 tiles), each
    // owning rows ty*4..ty*4+3 and 64+ty*4..64+ty*4+3 of the tile, and the
    // same pattern of columns with tx. Splitting the 8 into two groups of 4,
    // half a tile apart, lets the 8 threads that share a float4 load from
    // shared memory read 128 consecutive bytes: no two of them in the same bank.
    int tx = t % (BN / TN), ty = t / (BN / TN);

    float sum[TM][TN] = {};  // 64 running sums, all in registers

    // Step 0's slices go straight to registers; the loop below then always
    // loads the NEXT slices while it computes with the current ones, so the
    // long wait for global memory overlaps with arithmetic.
    float4 next_m[M_LOADS], next_n[N_LOADS];
#pragma unroll
    for (int i = 0; i < M_LOADS; i++) next_m[i] = load4(M, row0 + m_row[i], m_col[i], W);
#pragma unroll
    for (int i = 0; i < N_LOADS; i++) next_n[i] = load4(N, n_row[i], col0 + n_col[i], W);

    for (int k0 = 0; k0 < W; k0 += BK) {
        // Hand the slices over to shared memory (M transposed).
#pragma unroll
        for (int i = 0; i < M_LOADS; i++) {
            Ms[m_col[i] + 0][m_row[i]] = next_m[i].x;
            Ms[m_col[i] + 1][m_row[i]] = next_m[i].y;
            Ms[m_col[i] + 2][m_row[i]] = next_m[i].z;
            Ms[m_col[i] + 3][m_row[i]] = next_m[i].w;
        }
#pragma unroll
        for (int i = 0; i < N_LOADS; i++)
            *reinterpret_cast<float4*>(&Ns[n_row[i]][n_col[i]]) = next_n[i];
        __syncthreads();  // the slices are complete

        // Start fetching the next slices; nothing waits for them until the
        // top of the next step.
        if (k0 + BK < W) {
#pragma unroll
            for (int i = 0; i < M_LOADS; i++)
                next_m[i] = load4(M, row0 + m_row[i], k0 + BK + m_col[i], W);
#pragma unroll
            for (int i = 0; i < N_LOADS; i++)
                next_n[i] = load4(N, k0 + BK + n_row[i], col0 + n_col[i], W);
        }

#pragma unroll
        for (int k = 0; k < BK; k++) {
            // 8 numbers of M's column k and 8 of N's row k, into registers.
            float4 a_lo = *reinterpret_cast<const float4*>(&Ms[k][ty * 4]);
            float4 a_hi = *reinterpret_cast<const float4*>(&Ms[k][BM / 2 + ty * 4]);
            float4 b_lo = *reinterpret_cast<const float4*>(&Ns[k][tx * 4]);
            float4 b_hi = *reinterpret_cast<const float4*>(&Ns[k][BN / 2 + tx * 4]);
            float a[TM] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            float b[TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
            // The outer product: 64 multiply-adds from 16 loaded numbers.
            // Fully unrolled, so every a[i], b[j], sum[i][j] is a register.
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) sum[i][j] += a[i] * b[j];
        }
        __syncthreads();  // everyone is done with the slices: they may be overwritten
    }

    // Write the 8 x 8 sums back, four at a time.
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int row = row0 + (i < 4 ? ty * 4 + i : BM / 2 + ty * 4 + (i - 4));
        store4(P, row, col0 + tx * 4, W, make_float4(sum[i][0], sum[i][1], sum[i][2], sum[i][3]));
        store4(P, row, col0 + BN / 2 + tx * 4, W,
               make_float4(sum[i][4], sum[i][5], sum[i][6], sum[i][7]));
    }
}

// One launch of the kernel with a BM x BN tile: a 1D block of threads_rt(BM, BN)
// threads per tile of P, the grid rounded up.
template <int BM, int BN>
void launch_matmul_rt_tile(const float* dev_M, const float* dev_N, float* dev_P, int Width) {
    dim3 blocks(ceil_div(Width, BN), ceil_div(Width, BM));
    matmul_rt<BM, BN><<<blocks, threads_rt(BM, BN)>>>(dev_M, dev_N, dev_P, Width);
    CHECK_LAUNCH();
}

// The tile for this Width: 128 x 128, unless that leaves multiprocessors of this
// GPU without a block; then the small tile (64 x 128: twice as many blocks). On
// the H200 (132 SMs), Width 1024 gives 64 large tiles, so it takes the small one.
bool small_tile_rt(int Width) {
    static int sm_count = 0;  // asked once: it does not change
    if (sm_count == 0) {
        int device;
        HANDLE_ERROR(cudaGetDevice(&device));
        HANDLE_ERROR(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    }
    long long large_blocks = (long long)ceil_div(Width, 128) * ceil_div(Width, 128);
    return large_blocks < (long long)RT_BLOCKS_PER_SM * sm_count;
}

// The launch shared by main() below and by tests/ch04_matmul.
void launch_matmul_rt(const float* dev_M, const float* dev_N, float* dev_P, int Width) {
    if (small_tile_rt(Width))
        launch_matmul_rt_tile<RT_SMALL_BM, RT_SMALL_BN>(dev_M, dev_N, dev_P, Width);
    else
        launch_matmul_rt_tile<128, 128>(dev_M, dev_N, dev_P, Width);
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-GPU-RT [--width W] [--data document|random] [--seed S] [--repeats R] [--cpu]\n"
    "                 [--compare-cublas] [--json]\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --data KIND          'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "                       (default); 'document': M[y*W+x] = x + y*W, as the original\n"
    "  --seed S             seed of the random data (default 1)\n"
    "  --repeats R          timed kernel launches after a warm-up (default 10)\n"
    "  --cpu                also time the CPU triple loop (MM-CPU) at this Width: slow\n"
    "  --compare-cublas     also time cuBLAS at this Width and print the ratio\n"
    "  --json               also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    MatrixRun run = read_matrix_run(args, "random", true);  // --width, --data, --seed, --cpu
    bool compare = args.flag("--compare-cublas");
    Report report(args, 10);
    int W = run.W;
    size_t bytes = run.bytes, guarded = run.guarded_bytes();  // P has a guard float
    // The host's memory is checked already, by read_matrix_run (at most 3/4 of the RAM).
    report.start(2 * bytes + guarded, 0);
    bool small = small_tile_rt(W);  // the tile for this Width
    int BM = small ? RT_SMALL_BM : 128, BN = small ? RT_SMALL_BN : 128;
    long long blocks = (long long)ceil_div(W, BM) * ceil_div(W, BN);
    report_matrix_run(report, run).launch(blocks, threads_rt(BM, BN));

    float* M = (float*)host_alloc(args, bytes);
    float* N = (float*)host_alloc(args, bytes);
    float* P = (float*)host_alloc(args, guarded);
    fill_inputs(M, N, run);

    // End to end, as the original timed it: allocate, copy in, multiply, copy out.
    HostTimer end_to_end;
    float *dev_M, *dev_N, *dev_P;
    HANDLE_ERROR(cudaMalloc(&dev_M, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_N, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_P, guarded));
    HANDLE_ERROR(cudaMemset(dev_P, 0xFF, guarded));  // poison: an unwritten element reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_M, M, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_N, N, bytes, cudaMemcpyHostToDevice));
    launch_matmul_rt(dev_M, dev_N, dev_P, W);
    HANDLE_ERROR(cudaMemcpy(P, dev_P, guarded, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();
    report.note("end to end (malloc + copies + kernel)", "end_to_end_ms", end_to_end_ms);

    CheckResult check = check_product(M, N, P, W);
    check_guard(P, W, &check);  // P[W * W] must still hold the poison

    // Kernel only: the same launch repeated, each timed with events.
    TimingStats kernel = report.compute("register-tiled", "kernel only", run.flops(),
                                        [&] { launch_matmul_rt(dev_M, dev_N, dev_P, W); });
    // H200, 3 runs: 3.04 (3.03..3.08) times MM-GPU-SM's speed at Width 1024, 5.1 at
    // 4096 (the tour's log). At least 1.8: room for a busy machine, far above 1.0.
    check_step_lesson(
        report, W, kernel, "register tiles over shared-memory tiles (MM-GPU-SM): speed-up",
        [&] { launch_matmul_sm(dev_M, dev_N, dev_P, W); }, 1.8);
    report_cpu_baseline(report, args, run, M, N, end_to_end_ms, kernel);
    report_cublas_yardstick(report, compare, dev_M, dev_N, dev_P, W, kernel);  // overwrites P

    HANDLE_ERROR(cudaFree(dev_M));
    HANDLE_ERROR(cudaFree(dev_N));
    HANDLE_ERROR(cudaFree(dev_P));
    std::free(M);
    std::free(N);
    std::free(P);
    return report.verdict(check.passed(), "%s", describe(check).c_str());
}
#endif
