// Dot-SM.cu -- the dot product with a shared-memory reduction (chapter 3, step 2 of 3).
//
// Dot-GM sent N products back for the CPU to add. Here each thread keeps a
// running sum of its products in a register, the threads of a block add their
// sums together in a __shared__ array (the "cache"), and only one partial sum
// per block goes back: the CPU adds `blocks` numbers instead of N.
//
// The block's sum is a tree: 256 values -> 128 -> 64 -> ... -> 1, halving the
// active threads each step. Halving only lands exactly on 1 when the block
// size is a power of two, so THREADS_PER_BLOCK is checked at compile time.
//
// Source: "GPU Programming" (CSInParallel, 2012), chapter 3, Dot-SM.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o Dot-SM Dot-SM.cu
// Run:
//   ./Dot-SM                      the original's grid: imin(32, (N+255)/256) blocks
//   ./Dot-SM --blocks uncapped    one element per thread: (N+255)/256 blocks
//   ./Dot-SM --blocks auto        a grid sized to fill this GPU
//   ./Dot-SM --data random        +-1/8 ... +-7/8 at random, both signs, checked exactly
//   ./Dot-SM --help               every option

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "dot.h"

const int THREADS_PER_BLOCK = 256;
static_assert(THREADS_PER_BLOCK > 0 && (THREADS_PER_BLOCK & (THREADS_PER_BLOCK - 1)) == 0,
              "the tree reduction in dot() halves the block each step: "
              "THREADS_PER_BLOCK must be a power of two (32, 64, 128, 256, 512 or 1024)");
const int ORIGINAL_BLOCK_CAP = 32;  // the original's imin(32, ...): the handout says what it costs

__global__ void dot(const float* a, const float* b, float* partial, long long n) {
    // One copy of `cache` per block, shared by the block's threads.
    __shared__ float cache[THREADS_PER_BLOCK];

    // 1. My running sum over a grid-stride loop, kept in a register.
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    float temp = 0;
    while (i < n) {
        temp += a[i] * b[i];
        i += stride;
    }
    // LAB ch03.tree {
    cache[threadIdx.x] = temp;

    // 2. Nobody may read the cache until everybody has written it.
    __syncthreads();

    // 3. The tree: the lower half adds the upper half into itself, then the
    //    lower quarter adds the second quarter, ... Every thread runs every
    //    step, active or not, so every thread reaches every __syncthreads():
    //    a barrier that some threads of the block skip is undefined behaviour.
    for (int half = THREADS_PER_BLOCK / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) cache[threadIdx.x] += cache[threadIdx.x + half];
        __syncthreads();  // this step's sums are written before the next step reads them
    }
    // LAB }

    // 4. One partial sum per block goes back to global memory.
    if (threadIdx.x == 0) partial[blockIdx.x] = cache[0];
}

// The launch shared by main() below and by tests/ch03_dot_product.
// dev_partial must hold `blocks` floats.
void launch_dot(const float* dev_a, const float* dev_b, float* dev_partial, long long n,
                int blocks) {
    dot<<<blocks, THREADS_PER_BLOCK>>>(dev_a, dev_b, dev_partial, n);
    CHECK_LAUNCH();
}

// The original's grid: enough blocks for one element per thread, but at most 32.
int original_blocks(long long n) {
    return (int)std::min<long long>(ORIGINAL_BLOCK_CAP, ceil_div(n, THREADS_PER_BLOCK));
}

// Without the cap: one element per thread, as many blocks as that takes.
long long uncapped_blocks(long long n) {
    return ceil_div(n, THREADS_PER_BLOCK);
}

// The CPU's share: add up the partial sums (in double).
double sum_partials_on_cpu(const float* partial, long long count) {
    double sum = 0;
    for (long long i = 0; i < count; i++) sum += partial[i];
    return sum;
}

// The longest chain of float roundings any product goes through: its own
// product, the additions of its thread's loop, and the tree's levels.
long long dot_rounding_depth(long long n, long long blocks) {
    return 1 + ceil_div(n, blocks * THREADS_PER_BLOCK) + tree_levels(THREADS_PER_BLOCK);
}

#ifndef CUDA_EXAMPLES_NO_MAIN
// The lesson, checked in every large enough run: the original's cap of 32 blocks
// leaves most of the GPU idle; without it the same kernel runs several times
// faster. Both grids are timed here (into a scratch array of partial sums).
void check_cap_lesson(Report& report, const float* dev_a, const float* dev_b, long long n) {
    if (2.0 * n * sizeof(float) < 4.0 * report.device().l2_bytes)
        return report.lesson_not_checked(
            "a and b fit within 4 x the L2 cache: use --n 2^26 or "
            "more to see what the 32-block cap costs");
    float* dev_scratch;
    long long most = uncapped_blocks(n);
    HANDLE_ERROR(cudaMalloc(&dev_scratch, most * sizeof(float)));
    TimingStats capped = time_gpu(
        [&] { launch_dot(dev_a, dev_b, dev_scratch, n, original_blocks(n)); }, report.repeats());
    TimingStats uncapped =
        time_gpu([&] { launch_dot(dev_a, dev_b, dev_scratch, n, (int)most); }, report.repeats());
    HANDLE_ERROR(cudaFree(dev_scratch));
    // H200, 3 runs at n = 2^28: 2.78 (2.77..2.79). 1.6 leaves room for a shared
    // machine and fails the cap put back (1.0) or a grid of a few blocks per SM.
    report.lesson("uncapped grid over the 32-block cap: speed-up",
                  capped.median_ms / uncapped.median_ms, 1.6);
}

const char* USAGE =
    "usage: Dot-SM [--n N] [--data document|random] [--blocks B|auto|uncapped] [--repeats R]\n"
    "              [--json]\n"
    "  --n N          elements per vector (default 2^28; at most 2^31)\n"
    "  --data D       'document': a[i] = i, b[i] = 2i (default); 'random': +-1/8 .. +-7/8\n"
    "  --blocks B     blocks of 256 threads (default: the original's imin(32, (N+255)/256));\n"
    "                 'uncapped' = (N+255)/256, one element per thread; 'auto' = fill the GPU\n"
    "  --repeats R    timed kernel launches after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long n = args.integer("--n", 1LL << 28, 1, 1LL << 31);
    bool random = read_random_data(args);
    std::string grid = args.text("--blocks", "document");
    long long blocks = grid == "document"   ? original_blocks(n)
                       : grid == "uncapped" ? uncapped_blocks(n)
                       : grid == "auto"     ? 0
                                            : args.to_integer("--blocks", grid, 1, INT_MAX);
    Report report(args, 20);
    size_t bytes = checked_bytes(args, n, sizeof(float), 1);
    size_t all_bytes = checked_bytes(args, 2 * n + blocks, sizeof(float), 1);  // a, b, partials
    report.start(all_bytes, all_bytes);
    if (grid == "auto") blocks = blocks_to_fill_gpu(dot, THREADS_PER_BLOCK);
    report.size("n", n).size("bytes_moved", 2 * bytes).launch(blocks, THREADS_PER_BLOCK);
    DotData data = make_dot_data(args, report, n, random);
    float* partial = (float*)host_alloc(args, blocks * sizeof(float));

    // End to end, as the original timed it: allocate, copy in, reduce, copy
    // the partial sums back. The CPU's final sum comes after.
    HostTimer end_to_end;
    float *dev_a, *dev_b, *dev_partial;
    HANDLE_ERROR(cudaMalloc(&dev_a, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_b, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_partial, blocks * sizeof(float)));
    HANDLE_ERROR(cudaMemset(dev_partial, 0xFF, blocks * sizeof(float)));  // poison: NaN
    HANDLE_ERROR(cudaMemcpy(dev_a, data.a, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_b, data.b, bytes, cudaMemcpyHostToDevice));
    launch_dot(dev_a, dev_b, dev_partial, n, (int)blocks);
    HANDLE_ERROR(cudaMemcpy(partial, dev_partial, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    report.note("end to end (malloc + copies + kernel + copy back)", "end_to_end_ms",
                end_to_end.stop_ms());

    // The last step on the CPU: `blocks` partial sums instead of N products.
    double gpu_sum = sum_partials_on_cpu(partial, blocks);
    DotCheck check = check_dot(report, data, gpu_sum, dot_rounding_depth(n, blocks));

    TimingStats kernel =
        report.bandwidth(grid.c_str(), "kernel only (reads a, b)", 2.0 * bytes,
                         [&] { launch_dot(dev_a, dev_b, dev_partial, n, (int)blocks); });
    report_cpu_finish(report, kernel, dev_partial, partial, blocks, "partials", sum_partials_on_cpu,
                      n);
    check_cap_lesson(report, dev_a, dev_b, n);

    HANDLE_ERROR(cudaFree(dev_a));
    HANDLE_ERROR(cudaFree(dev_b));
    HANDLE_ERROR(cudaFree(dev_partial));
    free_dot_data(data);
    std::free(partial);
    return report.verdict(check.pass, "%s", check.detail);
}
#endif
