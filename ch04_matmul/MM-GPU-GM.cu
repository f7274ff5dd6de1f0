// MM-GPU-GM.cu -- matrix multiplication from global memory (chapter 4, step 2).
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
//   ./MM-GPU-GM                          the document's run: Width 1024, 32 x 32 blocks
//   ./MM-GPU-GM --accumulate global      the sum in global memory instead of a register
//   ./MM-GPU-GM --width 4096 --compare-cublas
//   ./MM-GPU-GM --help                   every option

#include <cstdio>
#include <string>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "cublas_yardstick.h"
#include "matrix.h"

// One thread computes one element of P. The running sum is a local scalar,
// which the compiler keeps in a register: the fastest memory there is.
__global__ void matmul_gm(const float* M, const float* N, float* P, int Width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;  // my column of P
    int y = blockIdx.y * blockDim.y + threadIdx.y;  // my row of P
    // The grid is rounded up to whole blocks, so some threads of the last
    // blocks lie outside the matrix; they must neither read nor write.
    if (x < Width && y < Width) {
        float sum = 0;
        for (int k = 0; k < Width; k++)
            sum += M[y * Width + k] * N[k * Width + x];
        P[y * Width + x] = sum;
    }
}

// The same, but accumulating in global memory. The compiler may not keep
// P[y][x] in a register here: for all it knows P overlaps M or N, so every
// += must really be written back to memory before the next read.
__global__ void matmul_gm_global_sum(const float* M, const float* N, float* P, int Width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < Width && y < Width) {
        P[y * Width + x] = 0;
        for (int k = 0; k < Width; k++)
            P[y * Width + x] += M[y * Width + k] * N[k * Width + x];
    }
}

// The launch shared by main() below and by tests/ch04_matmul. A 2D block of
// block x block threads (the document's 32 x 32 = 1024, the most a block may
// hold), and enough blocks in x and in y to cover Width, rounded up.
void matmul_gm_launch(const float* dev_M, const float* dev_N, float* dev_P, int Width, int block,
                      bool accumulate_in_global) {
    dim3 threads(block, block);
    dim3 blocks((Width + block - 1) / block, (Width + block - 1) / block);
    if (accumulate_in_global)
        matmul_gm_global_sum<<<blocks, threads>>>(dev_M, dev_N, dev_P, Width);
    else
        matmul_gm<<<blocks, threads>>>(dev_M, dev_N, dev_P, Width);
    CHECK_LAUNCH();
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-GPU-GM [--width W] [--block B] [--accumulate register|global] [--init document|random]\n"
    "                 [--seed S] [--repeats R] [--cpu] [--compare-cublas] [--json]\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --block B            blocks of B x B threads, 1..32 (default 32)\n"
    "  --accumulate WHERE   the running sum in a 'register' (default) or in 'global' memory\n"
    "  --init KIND          'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "                       (default); 'document': M[y*W+x] = x + y*W, as the course text\n"
    "  --seed S             seed of the random data (default 1)\n"
    "  --repeats R          timed kernel launches after a warm-up (default 10)\n"
    "  --cpu                also time the CPU triple loop (MM-CPU) at this Width: slow\n"
    "  --compare-cublas     also time cuBLAS at this Width and print the ratio\n"
    "  --json               also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, "MM-GPU-GM", USAGE);
    int W = (int)args.integer("--width", 1024, 1, MAX_WIDTH);
    int block = (int)args.integer("--block", 32, 1, 32);
    std::string where = args.text("--accumulate", "register");
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
    if (where != "register" && where != "global") args.fail("--accumulate must be 'register' or 'global'");
    if (init != "document" && init != "random") args.fail("--init must be 'document' or 'random'");
    bool global_sum = where == "global";
    size_t bytes = checked_bytes(args, (long long)W * W, sizeof(float), 1);

    check_matrices_fit_on_host(args, run_cpu ? 4 : 3, W);  // before the GPU: no device needed

    DeviceInfo dev = require_device("MM-GPU-GM");
    check_fits_on_device(args, 3 * bytes);
    print_device(dev);
    int grid = (W + block - 1) / block;
    std::printf("MM-GPU-GM: Width %d, %s data, grid %d x %d of %d x %d-thread blocks, sum in a %s\n", W,
                init.c_str(), grid, grid, block, block, global_sum ? "global-memory element" : "register");

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
    matmul_gm_launch(dev_M, dev_N, dev_P, W, block, global_sum);
    HANDLE_ERROR(cudaMemcpy(P, dev_P, bytes + sizeof(float), cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();

    CheckResult check = check_product(M, N, P, W);
    check_guard(P, W, &check);  // P[W * W] must still hold the poison

    // Kernel only: the same launch repeated, each timed with events.
    TimingStats kernel = time_gpu([&] { matmul_gm_launch(dev_M, dev_N, dev_P, W, block, global_sum); },
                                  repeats);
    double gflops = matmul_gflops(W, kernel.median_ms);
    std::printf("  %-28s %10.3f ms  (malloc + copies + kernel, one run)\n", "end to end", end_to_end_ms);
    print_matmul_timing("kernel only", kernel, W, dev.peak_fp32_gflops());

    double cpu_ms = NAN;  // the document's CPU baseline, on request
    if (run_cpu) cpu_ms = time_cpu_baseline(args, M, N, W, end_to_end_ms, kernel.median_ms);
    double cublas_gflops = NAN;  // dev_P is checked already, so cuBLAS may overwrite it
    if (compare)
        cublas_gflops = compare_with_cublas("MM-GPU-GM", gflops, dev_M, dev_N, dev_P, W, repeats,
                                            dev.peak_fp32_gflops());

    const char* result = check.passed() ? "PASS" : "FAIL";
    JsonRecord size, launch;
    size.add("width", W).add("flops", 2.0 * W * (double)W * W);
    launch.add("grid_x", grid).add("grid_y", grid).add("block_x", block).add("block_y", block);
    print_json(json, measurement("MM-GPU-GM", global_sum ? "global-sum" : "register-sum", dev, kernel, NAN,
                                 gflops, result)
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
