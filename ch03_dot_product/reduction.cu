// reduction.cu -- one sum, four ways: what the shape of a tree and memory choice cost.
//
// Every kernel here does the same job: each block of T threads adds up T
// consecutive elements (one per thread; past the end a thread contributes 0)
// and writes one partial sum; the CPU adds the partial sums, as the originals
// do. Only the way the block adds up its T values changes:
//
//   thread0             thread 0 adds all T values alone, the others wait
//   interleaved-global  a tree in global memory: at stride s, the threads whose
//                       index is a multiple of 2s add the value s places on
//   interleaved-shared  the same tree in __shared__ memory
//   sequential          a tree that halves the block: the first T/2 threads add
//                       the upper half into the lower half, then T/4, ...
//
// In every tree every warp runs every step and waits at every barrier; a
// thread with nothing to add only skips the add. The interleaved trees keep
// threads 0, 2, 4, ... busy at the first step, 0, 4, 8, ... at the second:
// every warp has a few working lanes among idle ones (divergence), so every
// warp does an add's loads and store at every early step. The sequential tree
// keeps the working threads contiguous: once fewer than 32 work, one warp adds
// and the others go straight to the barrier. The interleaved trees also test
// t % (2 * stride) in every thread at every step: an integer division, since
// the compiler cannot know that 2 * stride is a power of two.
// The trees need T to be a power of two, so --threads insists on one.
//
// The data is dot_reference.h's random data: values of both signs, each one
// of +-1/8, +-3/8, +-5/8, +-7/8. Every sum of them is a multiple of 1/8, and
// a block's sum of T <= 1024 of them stays below 1024 in magnitude, where a
// float holds every multiple of 1/8 exactly (up to 2^24 / 8 = 2^21): every
// kernel's arithmetic is exact, in any order (and so is the CPU's double sum
// of the partials), so the check allows no error. Every element is non-zero:
// a sum that misses one, or counts one twice, always fails.
//
// Source: memory hierarchy chapter of a GPU course (the small, medium and shared
// reductions) and "CUDA Programming" slides (University of Bologna), reduction #0 and #1.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o reduction reduction.cu
// Run:
//   ./reduction                         all four kernels, N = 2^28, T = 512
//   ./reduction --kernel sequential     one of them
//   ./reduction --help                  every option

#include <climits>
#include <cstdio>
#include <string>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "dot_reference.h"

// The block's T values live in dynamically sized shared memory: its size, T
// floats, is the third number between <<< and >>> at the launch.
extern __shared__ float cache[];

// The value a thread brings: its element, or 0 past the end of the input.
// (The originals padded the host array with zeros instead.)
__device__ float my_element(const float* in, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    return i < n ? in[i] : 0.0f;
}

// Solution #0: the block's threads fill the cache, then thread 0 adds it up.
// T - 1 threads do nothing while one does T additions.
__global__ void reduce_thread0(const float* in, float* partial, long long n) {
    cache[threadIdx.x] = my_element(in, n);
    __syncthreads();
    if (threadIdx.x == 0) {
        float sum = 0;
        for (int k = 0; k < blockDim.x; k++) sum += cache[k];
        partial[blockIdx.x] = sum;
    }
}

// The interleaved tree in global memory. The original reduced its input in
// place; we copy it to `work` first so the input survives (and so every
// timed run adds the same numbers). Every step reads and writes global memory.
//
// The loop's trip count depends on blockDim.x only, so every thread runs
// every step and reaches every __syncthreads(). The original's small
// reduction looped while `i + stride < n`: threads near the end stopped
// early, and a barrier that some threads of a block skip is undefined.
__global__ void reduce_interleaved_global(const float* in, float* work, float* partial,
                                          long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    work[i] = my_element(in, n);
    __syncthreads();  // also orders global memory between the threads of a block
    for (int stride = 1; stride < blockDim.x; stride *= 2) {
        if (threadIdx.x % (2 * stride) == 0) work[i] += work[i + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = work[i];
}

// The same interleaved tree in shared memory: one global read per element.
__global__ void reduce_interleaved_shared(const float* in, float* partial, long long n) {
    int t = threadIdx.x;
    cache[t] = my_element(in, n);
    __syncthreads();
    for (int stride = 1; stride < blockDim.x; stride *= 2) {
        if (t % (2 * stride) == 0) cache[t] += cache[t + stride];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = cache[0];
}

// Solution #1 (and Dot-SM's tree): halve the block each step.
__global__ void reduce_sequential(const float* in, float* partial, long long n) {
    int t = threadIdx.x;
    cache[t] = my_element(in, n);
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) cache[t] += cache[t + half];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = cache[0];
}

const char* KERNEL_NAMES[] = {"thread0", "interleaved-global", "interleaved-shared", "sequential"};
const int KERNEL_COUNT = 4;

// A kernel's number from its name, or -1.
int kernel_number(const std::string& name) {
    for (int k = 0; k < KERNEL_COUNT; k++)
        if (name == KERNEL_NAMES[k]) return k;
    return -1;
}

// The launch shared by main() below and by tests/ch03_dot_product: kernel k
// on `threads` threads per block (a power of two), one element per thread,
// one partial sum per block. dev_partial holds ceil_div(n, threads) floats;
// dev_work (only for interleaved-global) holds that many blocks of threads.
void launch_reduce(int k, const float* dev_in, float* dev_work, float* dev_partial, long long n,
                   int threads) {
    unsigned blocks = (unsigned)ceil_div(n, threads);
    size_t shared_bytes = threads * sizeof(float);
    if (k == 0) reduce_thread0<<<blocks, threads, shared_bytes>>>(dev_in, dev_partial, n);
    if (k == 1) reduce_interleaved_global<<<blocks, threads>>>(dev_in, dev_work, dev_partial, n);
    if (k == 2)
        reduce_interleaved_shared<<<blocks, threads, shared_bytes>>>(dev_in, dev_partial, n);
    if (k == 3) reduce_sequential<<<blocks, threads, shared_bytes>>>(dev_in, dev_partial, n);
    CHECK_LAUNCH();
}

double sum_on_cpu(const float* partial, long long count) {
    double sum = 0;
    for (long long i = 0; i < count; i++) sum += partial[i];
    return sum;
}

// The CPU adds the partial sums; the data makes every sum exact, so the total
// must equal the reference. Prints it and adds it to the last measurement.
bool check_sum(Report& report, const char* kernel, const float* partial, long long blocks,
               const Reference& ref, double cpu_ms) {
    double gpu_sum = sum_on_cpu(partial, blocks);
    bool pass = gpu_sum == ref.sum;  // exact arithmetic: equal, or wrong
    double error = std::fabs(gpu_sum - ref.sum);
    std::printf("  %-18s sum %.9e  |error| %.2e (must be 0): %s\n", kernel, gpu_sum, error,
                pass ? "right" : "WRONG");
    report.extra("cpu_ms", cpu_ms);
    report.extra("abs_error", error);
    report.extra("error_bound", 0.0);
    return pass;
}

#ifndef CUDA_EXAMPLES_NO_MAIN
// The lesson, checked when all four kernels ran at a size that streams from
// DRAM: the sequential tree beats both interleaved trees. Most of the gap is
// the interleaved trees' t % (2 * stride), a division in every thread at every
// step, more than their scattered working lanes: docs/ch03_dot_product.md
// measures both (the same tree with a mask instead of the division).
// (Memory choice is not checked: on an H200 the tree in shared memory is no
// faster than in global memory, 0.96 of its rate: L1 caches the global one.)
void check_ranking_lesson(Report& report, const TimingStats* times, int only, long long n) {
    if (only >= 0) return report.lesson_not_checked("one kernel ran: --kernel all ranks the four");
    if (n * sizeof(float) < 4.0 * report.device().l2_bytes)
        return report.lesson_not_checked(
            "the input fits within 4 x the L2 cache: use --n 2^26 "
            "or more");
    // H200, 3 runs at n = 2^28, T = 512: 2.51 (2.51..2.51) over the shared tree,
    // 2.40 (2.40..2.41) over the global one. 1.5 leaves room for a busy machine
    // and fails a sequential tree made divergent again (about 1.0).
    report.lesson("sequential over interleaved-shared: speed-up",
                  times[2].median_ms / times[3].median_ms, 1.5);
    report.lesson("sequential over interleaved-global: speed-up",
                  times[1].median_ms / times[3].median_ms, 1.5);
}

const char* USAGE =
    "usage: reduction [--kernel K|all] [--n N] [--threads T] [--repeats R] [--json]\n"
    "  --kernel K     thread0, interleaved-global, interleaved-shared, sequential, or all "
    "(default)\n"
    "  --n N          elements to add up, random +-1/8 .. +-7/8 (default 2^28; at most 2^31)\n"
    "  --threads T    threads per block, a power of two from 1 to 1024 (default 512)\n"
    "  --repeats R    timed launches after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    std::string kernel = args.text("--kernel", "all");
    int only = kernel == "all" ? -1 : kernel_number(kernel);
    if (kernel != "all" && only < 0)
        args.fail(
            "--kernel '" + kernel +
            "' is not one of thread0, interleaved-global, interleaved-shared, sequential, all");
    long long n = args.integer("--n", 1LL << 28, 1, 1LL << 31);
    int threads = (int)args.integer("--threads", 512, 1, 1024);
    if (!is_power_of_two(threads))
        args.fail("--threads " + std::to_string(threads) +
                  " is not a power of two: the trees halve the block until one value is left");
    Report report(args, 20);
    long long blocks = ceil_div(n, threads);
    if (blocks > INT_MAX) args.fail("--n over --threads needs more than 2^31 - 1 blocks");
    size_t bytes = checked_bytes(args, n, sizeof(float), 1);
    size_t work_bytes = checked_bytes(args, blocks * threads, sizeof(float), 1);
    size_t partial_bytes = checked_bytes(args, blocks, sizeof(float), 1);
    report.start(bytes + work_bytes + partial_bytes, bytes + partial_bytes);
    report.size("n", n).size("bytes_moved", bytes).launch(blocks, threads);

    float* in = (float*)host_alloc(args, bytes);
    float* partial = (float*)host_alloc(args, partial_bytes);
    fill_random(in, n, 3);
    HostTimer cpu;
    Reference ref = sum_reference(in, n, true);  // exact: see the top of this file
    double cpu_ms = cpu.stop_ms();
    std::printf("  CPU reference in double: %.9e (%.1f ms)\n", ref.sum, cpu_ms);

    float *dev_in, *dev_work, *dev_partial;
    HANDLE_ERROR(cudaMalloc(&dev_in, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_work, work_bytes));
    HANDLE_ERROR(cudaMalloc(&dev_partial, partial_bytes));
    HANDLE_ERROR(cudaMemcpy(dev_in, in, bytes, cudaMemcpyHostToDevice));
    std::string failed;
    TimingStats times[KERNEL_COUNT];
    for (int k = 0; k < KERNEL_COUNT; k++) {
        if (only >= 0 && k != only) continue;
        HANDLE_ERROR(cudaMemset(dev_partial, 0xFF, partial_bytes));  // poison: NaN until written
        launch_reduce(k, dev_in, dev_work, dev_partial, n, threads);
        HANDLE_ERROR(cudaMemcpy(partial, dev_partial, partial_bytes, cudaMemcpyDeviceToHost));
        // Each input element is read once.
        times[k] = report.bandwidth(KERNEL_NAMES[k], KERNEL_NAMES[k], (double)bytes, [&] {
            launch_reduce(k, dev_in, dev_work, dev_partial, n, threads);
        });
        if (!check_sum(report, KERNEL_NAMES[k], partial, blocks, ref, cpu_ms))
            failed += std::string(failed.empty() ? "" : ", ") + KERNEL_NAMES[k];
    }
    check_ranking_lesson(report, times, only, n);

    HANDLE_ERROR(cudaFree(dev_in));
    HANDLE_ERROR(cudaFree(dev_work));
    HANDLE_ERROR(cudaFree(dev_partial));
    std::free(in);
    std::free(partial);
    if (failed.empty())
        return report.verdict(true, "every kernel's sum equals the CPU's exact sum");
    return report.verdict(false, "wrong sum from: %s", failed.c_str());
}
#endif
