// MM-GPU-GM.cu -- matrix multiplication from global memory (chapter 4, step 2).
// Source: "GPU Programming" (CSInParallel, 2012), chapter 4, MM-GPU-GM.
//
// P = M x N for square Width x Width matrices, one thread per element of P,
// on a 2D grid of 2D blocks: thread (x, y) reads row y of M and column x of N
// straight from global memory and writes P[y][x]. Any Width works: the grid
// is rounded up and threads that fall outside the matrix do nothing.
//
// --accumulate global shows the contrast of the memory-hierarchy chapter:
// the same kernel, but the running sum lives in P[y][x] (global memory)
// instead of a register.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o MM-GPU-GM MM-GPU-GM.cu -lcublas
// Run:
//   ./MM-GPU-GM                          the original's run: Width 1024, 32 x 32 blocks
//   ./MM-GPU-GM --accumulate global      the sum in global memory instead of a register
//   ./MM-GPU-GM --width 4096 --compare-cublas
//   ./MM-GPU-GM --help                   every option

#include <string>
#include "../common/handle_error.h"
#include "../common/report.h"
#include "cublas_yardstick.h"
#include "matrix.h"

// One thread computes one element of P. The running sum is a local scalar,
// which the compiler keeps in a register: the fastest memory there is.
__global__ void matmul_gm(const float* M, const float* N, float* P, int Width) {
    // LAB ch04.one-per-element {
    int x = blockIdx.x * blockDim.x + threadIdx.x;  // my column of P
    int y = blockIdx.y * blockDim.y + threadIdx.y;  // my row of P
    // The grid is rounded up to whole blocks, so some threads of the last
    // blocks lie outside the matrix; they must neither read nor write.
    if (x < Width && y < Width) {
        float sum = 0;
        for (int k = 0; k < Width; k++) sum += M[y * Width + k] * N[k * Width + x];
        P[y * Width + x] = sum;
    }
    // LAB }
}

// The same, but accumulating in global memory. The compiler may not keep
// P[y][x] in a register here: for all it knows P overlaps M or N, so every
// += must really be written back to memory before the next read.
__global__ void matmul_gm_global_sum(const float* M, const float* N, float* P, int Width) {
    // LAB ch04.global-sum {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < Width && y < Width) {
        P[y * Width + x] = 0;
        for (int k = 0; k < Width; k++) P[y * Width + x] += M[y * Width + k] * N[k * Width + x];
    }
    // LAB }
}

// The launch shared by main() below and by tests/ch04_matmul. A 2D block of
// block_side x block_side threads (the original's 32 x 32 = 1024, the most a block may
// hold), and enough blocks in x and in y to cover Width, rounded up.
void launch_matmul_gm(const float* dev_M, const float* dev_N, float* dev_P, int Width,
                      int block_side, bool accumulate_in_global) {
    // LAB ch04.grid {
    dim3 threads(block_side, block_side);
    dim3 blocks(ceil_div(Width, block_side), ceil_div(Width, block_side));
    // LAB }
    if (accumulate_in_global)
        matmul_gm_global_sum<<<blocks, threads>>>(dev_M, dev_N, dev_P, Width);
    else
        matmul_gm<<<blocks, threads>>>(dev_M, dev_N, dev_P, Width);
    CHECK_LAUNCH();
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-GPU-GM [--width W] [--block B] [--accumulate register|global]\n"
    "                 [--data document|random] [--seed S] [--repeats R] [--cpu]\n"
    "                 [--compare-cublas] [--json]\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --block B            blocks of B x B threads, 1..32 (default 32)\n"
    "  --accumulate WHERE   the running sum in a 'register' (default) or in 'global' memory\n"
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
    int block_side = (int)args.integer("--block", 32, 1, 32);
    std::string where = args.text("--accumulate", "register");
    if (where != "register" && where != "global")
        args.fail("--accumulate must be 'register' or 'global'");
    bool global_sum = where == "global";
    Report report(args, 10);
    int W = run.W;
    size_t bytes = run.bytes, guarded = run.guarded_bytes();  // P has a guard float
    // The host's memory is checked already, by read_matrix_run (at most 3/4 of the RAM).
    report.start(2 * bytes + guarded, 0);
    long long grid = ceil_div(W, block_side);  // blocks in x and in y
    report_matrix_run(report, run).launch(grid * grid, block_side * block_side);

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
    launch_matmul_gm(dev_M, dev_N, dev_P, W, block_side, global_sum);
    HANDLE_ERROR(cudaMemcpy(P, dev_P, guarded, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();
    report.note("end to end (malloc + copies + kernel)", "end_to_end_ms", end_to_end_ms);

    CheckResult check = check_product(M, N, P, W);
    check_guard(P, W, &check);  // P[W * W] must still hold the poison

    // Kernel only: the same launch repeated, each timed with events.
    TimingStats kernel =
        report.compute(global_sum ? "global-sum" : "register-sum", "kernel only", run.flops(),
                       [&] { launch_matmul_gm(dev_M, dev_N, dev_P, W, block_side, global_sum); });
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
