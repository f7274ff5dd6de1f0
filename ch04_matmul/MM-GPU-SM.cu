// MM-GPU-SM.cu -- tiled matrix multiplication through shared memory (chapter 4, step 3).
//
// The global-memory kernel reads every element of M and N Width times from
// global memory. Here each block of TILE x TILE threads computes a
// TILE x TILE tile of P in phases: in each phase the block copies one tile of
// M and one tile of N into __shared__ memory (one element per thread), waits,
// and then every thread takes TILE multiply-adds from the fast shared copy.
// Global traffic drops by a factor TILE.
//
// Unlike the document's version, any Width works: tiles that stick out past
// the edge of the matrix are filled with zeros, which add nothing to the sum.
//
// Standalone build, from this folder (add -DTILE=16 to try another tile):
//   nvcc -std=c++17 -O2 -o MM-GPU-SM MM-GPU-SM.cu -lcublas
// Run:
//   ./MM-GPU-SM                          the document's run: Width 1024, TILE 32
//   ./MM-GPU-SM --width 1000             a Width the document's kernel gets wrong
//   ./MM-GPU-SM --width 4096 --compare-cublas
//   ./MM-GPU-SM --help                   every option

#include <cstdio>
#include <string>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "cublas_yardstick.h"
#include "matrix.h"

// The tile is TILE x TILE elements, and a block is TILE x TILE threads. It is
// a compile-time constant because the size of a __shared__ array must be.
// 32 (the document's blockD): 1024 threads, 2 x 4 KB of shared memory a block.
#ifndef TILE
#define TILE 32
#endif

__global__ void matmul_sm(const float* M, const float* N, float* P, int Width) {
    __shared__ float Ms[TILE][TILE];  // this phase's tile of M
    __shared__ float Ns[TILE][TILE];  // this phase's tile of N

    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE + tx;  // my column of P
    int y = blockIdx.y * TILE + ty;  // my row of P

    float sum = 0;
    // Rounded up: the document's Width / blockD drops the last, partial phase.
    int phases = (Width + TILE - 1) / TILE;
    for (int phase = 0; phase < phases; phase++) {
        // Each thread copies one element of each tile. Past the edge of the
        // matrix it writes a zero instead: 0 x anything adds nothing to sum.
        int m_col = phase * TILE + tx;  // the column of M I copy
        int n_row = phase * TILE + ty;  // the row of N I copy
        Ms[ty][tx] = (y < Width && m_col < Width) ? M[y * Width + m_col] : 0.0f;
        Ns[ty][tx] = (n_row < Width && x < Width) ? N[n_row * Width + x] : 0.0f;
        // Barrier 1: nobody may read the tiles before everyone has written them.
        __syncthreads();

        for (int k = 0; k < TILE; k++)
            sum += Ms[ty][k] * Ns[k][tx];
        // Barrier 2: nobody may overwrite the tiles (next phase) while a
        // slower thread of the block is still reading them.
        __syncthreads();
    }
    // Only now may threads outside the matrix drop out: had they returned
    // early, they would have missed the barriers that the others wait at.
    if (y < Width && x < Width) P[y * Width + x] = sum;
}

// The launch shared by main() below and by tests/ch04_matmul.
void matmul_sm_launch(const float* dev_M, const float* dev_N, float* dev_P, int Width) {
    dim3 threads(TILE, TILE);
    dim3 blocks((Width + TILE - 1) / TILE, (Width + TILE - 1) / TILE);
    matmul_sm<<<blocks, threads>>>(dev_M, dev_N, dev_P, Width);
    CHECK_LAUNCH();
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-GPU-SM [--width W] [--init document|random] [--seed S] [--repeats R] [--cpu]\n"
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
    Args args(argc, argv, "MM-GPU-SM", USAGE);
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

    DeviceInfo dev = require_device("MM-GPU-SM");
    check_fits_on_device(args, 3 * bytes);
    print_device(dev);
    int grid = (W + TILE - 1) / TILE;
    std::printf("MM-GPU-SM: Width %d, %s data, grid %d x %d of %d x %d-thread blocks, %d phases\n", W,
                init.c_str(), grid, grid, TILE, TILE, grid);

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
    matmul_sm_launch(dev_M, dev_N, dev_P, W);
    HANDLE_ERROR(cudaMemcpy(P, dev_P, bytes + sizeof(float), cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();

    CheckResult check = check_product(M, N, P, W);
    check_guard(P, W, &check);  // P[W * W] must still hold the poison

    // Kernel only: the same launch repeated, each timed with events.
    TimingStats kernel = time_gpu([&] { matmul_sm_launch(dev_M, dev_N, dev_P, W); },
                                  repeats);
    double gflops = matmul_gflops(W, kernel.median_ms);
    std::printf("  %-28s %10.3f ms  (malloc + copies + kernel, one run)\n", "end to end", end_to_end_ms);
    print_matmul_timing("kernel only", kernel, W, dev.peak_fp32_gflops());

    double cpu_ms = NAN;  // the document's CPU baseline, on request
    if (run_cpu) cpu_ms = time_cpu_baseline(args, M, N, W, end_to_end_ms, kernel.median_ms);
    double cublas_gflops = NAN;  // dev_P is checked already, so cuBLAS may overwrite it
    if (compare)
        cublas_gflops = compare_with_cublas("MM-GPU-SM", gflops, dev_M, dev_N, dev_P, W, repeats,
                                            dev.peak_fp32_gflops());

    const char* result = check.passed() ? "PASS" : "FAIL";
    JsonRecord size, launch;
    size.add("width", W).add("flops", 2.0 * W * (double)W * W);
    launch.add("grid_x", grid).add("grid_y", grid).add("block_x", TILE).add("block_y", TILE).add("tile", TILE);
    print_json(json, measurement("MM-GPU-SM", "tiled", dev, kernel, NAN, gflops, result)
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
