// MM-GPU-RT.cu -- register tiling: many outputs per thread (chapter 4, advanced lab).
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

#include <cstdio>
#include <string>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "cublas_yardstick.h"
#include "matrix.h"

const int BM = 128;        // rows of P per block
const int BN = 128;        // columns of P per block
const int BK = 8;          // the slice of Width that one step stages in shared memory
const int TM = 8;          // rows of P per thread
const int TN = 8;          // columns of P per thread
const int THREADS = (BM / TM) * (BN / TN);  // 16 x 16 = 256 threads per block

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

// __launch_bounds__ promises at most THREADS threads per block, so the
// compiler may give each thread up to 255 registers -- it needs 64 for the sums.
__global__ void __launch_bounds__(THREADS) matmul_rt(const float* M, const float* N, float* P, int W) {
    // The slice of M is stored transposed, Ms[k][row], so that the 8 numbers
    // of M a thread needs for one k are side by side and come in two float4
    // loads. Each row is padded by 4 floats so that the transposing stores of
    // neighbouring threads land in different shared-memory banks.
    __shared__ __align__(16) float Ms[BK][BM + 4];
    __shared__ __align__(16) float Ns[BK][BN];

    int t = threadIdx.x;
    int row0 = blockIdx.y * BM;  // this block's tile of P starts at (row0, col0)
    int col0 = blockIdx.x * BN;

    // Who copies what: 256 threads, 256 float4s in each slice.
    int m_row = t / 2, m_col = (t % 2) * 4;    // M slice: 128 rows x 2 float4s
    int n_row = t / 32, n_col = (t % 32) * 4;  // N slice: 8 rows x 32 float4s

    // Which outputs are mine: 16 x 16 threads, each owning rows
    // ty*4..ty*4+3 and 64+ty*4..64+ty*4+3 of the tile, and the same pattern of
    // columns with tx. Splitting the 8 into two groups of 4, 64 apart, lets
    // the 8 threads that share a float4 load from shared memory read 128
    // consecutive bytes: no two of them in the same bank.
    int tx = t % 16, ty = t / 16;

    float sum[TM][TN] = {};  // 64 running sums, all in registers

    // Step 0's slices go straight to registers; the loop below then always
    // loads the NEXT slices while it computes with the current ones, so the
    // long wait for global memory overlaps with arithmetic.
    float4 next_m = load4(M, row0 + m_row, m_col, W);
    float4 next_n = load4(N, n_row, col0 + n_col, W);

    for (int k0 = 0; k0 < W; k0 += BK) {
        // Hand the slices over to shared memory (M transposed).
        Ms[m_col + 0][m_row] = next_m.x;
        Ms[m_col + 1][m_row] = next_m.y;
        Ms[m_col + 2][m_row] = next_m.z;
        Ms[m_col + 3][m_row] = next_m.w;
        *reinterpret_cast<float4*>(&Ns[n_row][n_col]) = next_n;
        __syncthreads();  // the slices are complete

        // Start fetching the next slices; nothing waits for them until the
        // top of the next step.
        if (k0 + BK < W) {
            next_m = load4(M, row0 + m_row, k0 + BK + m_col, W);
            next_n = load4(N, k0 + BK + n_row, col0 + n_col, W);
        }

#pragma unroll
        for (int k = 0; k < BK; k++) {
            // 8 numbers of M's column k and 8 of N's row k, into registers.
            float4 a_lo = *reinterpret_cast<const float4*>(&Ms[k][ty * 4]);
            float4 a_hi = *reinterpret_cast<const float4*>(&Ms[k][64 + ty * 4]);
            float4 b_lo = *reinterpret_cast<const float4*>(&Ns[k][tx * 4]);
            float4 b_hi = *reinterpret_cast<const float4*>(&Ns[k][64 + tx * 4]);
            float a[TM] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            float b[TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
            // The outer product: 64 multiply-adds from 16 loaded numbers.
            // Fully unrolled, so every a[i], b[j], sum[i][j] is a register.
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    sum[i][j] += a[i] * b[j];
        }
        __syncthreads();  // everyone is done with the slices: they may be overwritten
    }

    // Write the 8 x 8 sums back, four at a time.
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int row = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        store4(P, row, col0 + tx * 4, W, make_float4(sum[i][0], sum[i][1], sum[i][2], sum[i][3]));
        store4(P, row, col0 + 64 + tx * 4, W, make_float4(sum[i][4], sum[i][5], sum[i][6], sum[i][7]));
    }
}

// The launch shared by main() below and by tests/ch04_matmul: a 1D block of
// 256 threads per 128 x 128 tile of P, the grid rounded up.
void matmul_rt_launch(const float* dev_M, const float* dev_N, float* dev_P, int Width) {
    dim3 blocks((Width + BN - 1) / BN, (Width + BM - 1) / BM);
    matmul_rt<<<blocks, THREADS>>>(dev_M, dev_N, dev_P, Width);
    CHECK_LAUNCH();
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-GPU-RT [--width W] [--init document|random] [--seed S] [--repeats R] [--cpu]\n"
    "                 [--compare-cublas] [--json]\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --init KIND          'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "                       (default); 'document': M[y*W+x] = x + y*W, as the course text\n"
    "  --seed S             seed of the random data (default 1)\n"
    "  --repeats R          timed kernel launches after a warm-up (default 10)\n"
    "  --cpu                also time the CPU triple loop (MM-CPU) at this Width: slow\n"
    "  --compare-cublas     also time cuBLAS at this Width and print the ratio\n"
    "  --json               also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, "MM-GPU-RT", USAGE);
    int W = (int)args.integer("--width", 1024, 1, MAX_WIDTH);
    // Random data by default: on it the check is exact, so any wrong index shows.
    // The document's data is checked only to within float rounding of its
    // large positive sums, which hides a wrong column a few places off.
    std::string init = args.text("--init", "random");
    unsigned seed = (unsigned)args.integer("--seed", 1, 0, 4294967295LL);
    int repeats = (int)args.integer("--repeats", 10, 1, 100000);
    bool run_cpu = args.flag("--cpu");
    bool compare = args.flag("--compare-cublas");
    bool json = args.flag("--json");
    args.done();
    if (init != "document" && init != "random") args.fail("--init must be 'document' or 'random'");
    size_t bytes = checked_bytes(args, (long long)W * W, sizeof(float), 1);

    check_matrices_fit_on_host(args, run_cpu ? 4 : 3, W);  // before the GPU: no device needed

    DeviceInfo dev = require_device("MM-GPU-RT");
    check_fits_on_device(args, 3 * bytes);
    print_device(dev);
    int grid = (W + BM - 1) / BM;
    std::printf("MM-GPU-RT: Width %d, %s data, grid %d x %d blocks of %d threads, each thread %d x %d outputs\n",
                W, init.c_str(), grid, grid, THREADS, TM, TN);

    float* M = (float*)host_alloc(args, bytes);
    float* N = (float*)host_alloc(args, bytes);
    // P gets one float more than the matrix: a guard past its end, poisoned
    // like the rest. A kernel that writes past the end of P changes it.
    float* P = (float*)host_alloc(args, bytes + sizeof(float));
    if (init == "document") {
        fill_document(M, W);
        fill_document(N, W);
    } else {
        fill_random(M, W, seed);
        fill_random(N, W, seed + 1);
    }

    // End to end, as the document timed it: allocate, copy in, multiply, copy out.
    HostTimer end_to_end;
    float *dev_M, *dev_N, *dev_P;
    HANDLE_ERROR(cudaMalloc((void**)&dev_M, bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dev_N, bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dev_P, bytes + sizeof(float)));
    HANDLE_ERROR(cudaMemset(dev_P, 0xFF, bytes + sizeof(float)));  // poison: unwritten reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_M, M, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_N, N, bytes, cudaMemcpyHostToDevice));
    matmul_rt_launch(dev_M, dev_N, dev_P, W);
    HANDLE_ERROR(cudaMemcpy(P, dev_P, bytes + sizeof(float), cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();

    CheckResult check = check_product(M, N, P, W);
    check_guard(P, W, &check);  // P[W * W] must still hold the poison

    // Kernel only: the same launch repeated, each timed with events.
    TimingStats kernel = time_gpu([&] { matmul_rt_launch(dev_M, dev_N, dev_P, W); },
                                  repeats);
    double gflops = matmul_gflops(W, kernel.median_ms);
    std::printf("  %-28s %10.3f ms  (malloc + copies + kernel, one run)\n", "end to end", end_to_end_ms);
    print_matmul_timing("kernel only", kernel, W, dev.peak_fp32_gflops());

    double cpu_ms = NAN;  // the document's CPU baseline, on request
    if (run_cpu) cpu_ms = time_cpu_baseline(args, M, N, W, end_to_end_ms, kernel.median_ms);
    double cublas_gflops = NAN;  // dev_P is checked already, so cuBLAS may overwrite it
    if (compare)
        cublas_gflops = compare_with_cublas("MM-GPU-RT", gflops, dev_M, dev_N, dev_P, W, repeats,
                                            dev.peak_fp32_gflops());

    const char* result = check.passed() ? "PASS" : "FAIL";
    JsonRecord size, launch;
    size.add("width", W).add("flops", 2.0 * W * (double)W * W);
    launch.add("grid_x", grid).add("grid_y", grid).add("threads", THREADS).add("block_tile", BM)
        .add("bk", BK).add("thread_tile", TM);
    print_json(json, measurement("MM-GPU-RT", "register-tiled", dev, kernel, NAN, gflops, result)
                         .add("size", size).add("launch", launch).add("init", init)
                         .add("end_to_end_ms", end_to_end_ms).add("cpu_ms", cpu_ms)
                         .add("cublas_gflops", cublas_gflops).add("ratio_to_cublas", gflops / cublas_gflops));

    HANDLE_ERROR(cudaFree(dev_M));
    HANDLE_ERROR(cudaFree(dev_N));
    HANDLE_ERROR(cudaFree(dev_P));
    std::free(M);
    std::free(N);
    std::free(P);
    return verdict(check.passed(), describe(check));
}
#endif
