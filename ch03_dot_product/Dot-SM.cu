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
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o Dot-SM Dot-SM.cu
// Run:
//   ./Dot-SM                      the document's grid: imin(32, (N+255)/256) blocks
//   ./Dot-SM --blocks uncapped    one element per thread: (N+255)/256 blocks
//   ./Dot-SM --blocks auto        a grid sized to fill this GPU
//   ./Dot-SM --data random        +-1/8 ... +-7/8 at random, both signs, checked exactly
//   ./Dot-SM --help               every option

#include <algorithm>
#include <cstdio>
#include <string>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "dot_reference.h"

const int THREADS_PER_BLOCK = 256;
static_assert(THREADS_PER_BLOCK > 0 && (THREADS_PER_BLOCK & (THREADS_PER_BLOCK - 1)) == 0,
              "the tree reduction in dot() halves the block each step: "
              "THREADS_PER_BLOCK must be a power of two (32, 64, 128, 256, 512 or 1024)");
const int DOCUMENT_BLOCK_CAP = 32;  // the document's imin(32, ...): see the handout for what it costs

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

    // 4. One partial sum per block goes back to global memory.
    if (threadIdx.x == 0) partial[blockIdx.x] = cache[0];
}

// The launch shared by main() below and by tests/ch03_dot_product.
// dev_partial must hold `blocks` floats.
void dot_sm(const float* dev_a, const float* dev_b, float* dev_partial, long long n, int blocks) {
    dot<<<blocks, THREADS_PER_BLOCK>>>(dev_a, dev_b, dev_partial, n);
    CHECK_LAUNCH();
}

// The document's grid: enough blocks for one element per thread, but at most 32.
int document_blocks(long long n) {
    return (int)std::min<long long>(DOCUMENT_BLOCK_CAP, ceil_div(n, THREADS_PER_BLOCK));
}

// "--blocks uncapped": one element per thread, however many blocks that takes.
long long uncapped_blocks(long long n) { return ceil_div(n, THREADS_PER_BLOCK); }

// "--blocks auto": as many blocks as the GPU keeps resident at once.
int dot_sm_auto_blocks(const DeviceInfo& dev) {
    int blocks_per_sm = 0;
    HANDLE_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, dot, THREADS_PER_BLOCK, 0));
    return blocks_per_sm * dev.sm_count;
}

// The CPU's share: add up the partial sums (in double).
double sum_partials(const float* partial, long long count) {
    double sum = 0;
    for (long long i = 0; i < count; i++) sum += partial[i];
    return sum;
}

// The longest chain of float roundings any product goes through: its own
// product, the additions of its thread's loop, and the tree's levels.
long long dot_sm_rounding_depth(long long n, long long blocks) {
    return 1 + ceil_div(n, blocks * THREADS_PER_BLOCK) + tree_levels(THREADS_PER_BLOCK);
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: Dot-SM [--n N] [--data document|random] [--blocks B|auto|uncapped] [--repeats R] [--json]\n"
    "  --n N          elements per vector (default 2^28; at most 2^31)\n"
    "  --data D       'document': a[i] = i, b[i] = 2i (default); 'random': +-1/8 .. +-7/8\n"
    "  --blocks B     blocks of 256 threads (default: the document's imin(32, (N+255)/256));\n"
    "                 'uncapped' = (N+255)/256, one element per thread; 'auto' = fill the GPU\n"
    "  --repeats R    timed kernel launches after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, "Dot-SM", USAGE);
    long long n = args.integer("--n", 1LL << 28, 1, 1LL << 31);
    std::string data = args.text("--data", "document");
    if (data != "document" && data != "random") args.fail("--data must be 'document' or 'random'");
    std::string blocks_text = args.text("--blocks", "document");
    long long blocks = 0;
    if (blocks_text == "document") blocks = document_blocks(n);
    else if (blocks_text == "uncapped") blocks = uncapped_blocks(n);
    else if (blocks_text != "auto") blocks = args.to_integer("--blocks", blocks_text, 1, 2147483647);
    int repeats = (int)args.integer("--repeats", 20, 1, 100000);
    bool json = args.flag("--json");
    args.done();
    size_t bytes = checked_bytes(args, n, sizeof(float), 1);
    // a, b and the partials live in host memory too: refuse a size that would
    // use more than half of it (exit 2) rather than be killed half way by the OS.
    check_fits_on_host(args, checked_bytes(args, 2 * n + blocks, sizeof(float), 1));
    bool random = data == "random";

    DeviceInfo dev = require_device("Dot-SM");
    if (blocks_text == "auto") blocks = dot_sm_auto_blocks(dev);
    size_t partial_bytes = checked_bytes(args, blocks, sizeof(float), 1);
    check_fits_on_device(args, 2 * bytes + partial_bytes);
    print_device(dev);
    std::printf("Dot-SM: N = %lld (%s data), %lld blocks (%s) x %d threads\n", n, data.c_str(), blocks,
                blocks_text.c_str(), THREADS_PER_BLOCK);

    float* a = (float*)host_alloc(args, bytes);
    float* b = (float*)host_alloc(args, bytes);
    float* partial = (float*)host_alloc(args, partial_bytes);
    if (random) {
        fill_random(a, n, 1);
        fill_random(b, n, 2);
    } else {
        fill_document_data(a, b, n);
    }
    HostTimer cpu_timer;
    Reference ref = dot_reference(a, b, n, random);  // random: exact, see dot_reference.h
    double cpu_ms = cpu_timer.stop_ms();

    // End to end, as the document timed it: allocate, copy in, reduce, copy
    // the partial sums back. The CPU's final sum comes after.
    HostTimer end_to_end;
    float *dev_a, *dev_b, *dev_partial;
    HANDLE_ERROR(cudaMalloc((void**)&dev_a, bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dev_b, bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dev_partial, partial_bytes));
    HANDLE_ERROR(cudaMemset(dev_partial, 0xFF, partial_bytes));  // poison: a block that never writes reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_a, a, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_b, b, bytes, cudaMemcpyHostToDevice));
    dot_sm(dev_a, dev_b, dev_partial, n, (int)blocks);
    HANDLE_ERROR(cudaMemcpy(partial, dev_partial, partial_bytes, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();

    HostTimer sum_timer;
    double gpu_sum = sum_partials(partial, blocks);
    double cpu_sum_ms = sum_timer.stop_ms();

    // The document's data: within the rounding bound. The random data: exactly equal.
    long long depth = dot_sm_rounding_depth(n, blocks);
    bool pass = within_bound(gpu_sum, ref, depth);
    double error = std::fabs(gpu_sum - ref.sum), bound = allowed_error(depth, ref);

    HostTimer copy_timer;
    HANDLE_ERROR(cudaMemcpy(partial, dev_partial, partial_bytes, cudaMemcpyDeviceToHost));
    double copy_back_ms = copy_timer.stop_ms();
    TimingStats kernel = time_gpu([&] { dot_sm(dev_a, dev_b, dev_partial, n, (int)blocks); }, repeats);

    double kernel_gbs = 2.0 * bytes / (kernel.median_ms * 1e6);  // read a and b
    double dot_ms = kernel.median_ms + copy_back_ms + cpu_sum_ms;
    double dot_gbs = 2.0 * bytes / (dot_ms * 1e6);

    std::printf("  GPU dot product (partials summed on the CPU) %.9e\n", gpu_sum);
    std::printf("  CPU reference in double                      %.9e  (%.1f ms)\n", ref.sum, cpu_ms);
    if (data == "document")
        std::printf("  closed form 2*sum(i^2): exact %.9e, in float as the document %.9e\n",
                    closed_form_exact(n), (double)document_closed_form_float(n));
    if (ref.exact)
        std::printf("  |GPU - reference| = %.3e, allowed 0 (the random data leaves nothing to round)\n", error);
    else
        std::printf("  |GPU - reference| = %.3e, allowed %.3e (%lld roundings x 2^-24 x sum|a*b| = %.3e)\n",
                    error, bound, depth, ref.sum_abs);
    std::printf("  end to end (malloc + copies + kernel + copy back): %.3f ms\n", end_to_end_ms);
    print_timing("kernel only (reads a, b)", kernel, kernel_gbs, 100 * kernel_gbs / dev.peak_bandwidth_gbs());
    std::printf("  + copy %lld partials back %.3f ms + CPU sum %.3f ms = dot product %.3f ms (%.1f GB/s)\n",
                blocks, copy_back_ms, cpu_sum_ms, dot_ms, dot_gbs);

    const char* result = pass ? "PASS" : "FAIL";
    JsonRecord size, launch;
    size.add("n", n).add("bytes_moved", (long long)(2 * bytes));
    launch.add("blocks", blocks).add("threads", THREADS_PER_BLOCK).add("grid", blocks_text);
    print_json(json, measurement("Dot-SM", blocks_text.c_str(), dev, kernel, kernel_gbs, NAN, result)
                         .add("size", size).add("launch", launch).add("data", data)
                         .add("end_to_end_ms", end_to_end_ms).add("cpu_ms", cpu_ms)
                         .add("copy_back_ms", copy_back_ms).add("cpu_sum_ms", cpu_sum_ms)
                         .add("dot_ms", dot_ms).add("dot_gbs", dot_gbs)
                         .add("abs_error", error).add("error_bound", bound));

    HANDLE_ERROR(cudaFree(dev_a));
    HANDLE_ERROR(cudaFree(dev_b));
    HANDLE_ERROR(cudaFree(dev_partial));
    std::free(a);
    std::free(b);
    std::free(partial);

    char detail[200];
    std::snprintf(detail, sizeof detail, "%s: |GPU - CPU double| = %.3e, allowed %.3e",
                  pass ? "the GPU dot product matches the CPU" : "the GPU dot product is wrong", error, bound);
    return verdict(pass, detail);
}
#endif
