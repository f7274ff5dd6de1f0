// stencil_1d.cu -- threads that share data: a 1D stencil in shared memory.
//
// out[i] = in[i-3] + in[i-2] + ... + in[i+3]: each output is the sum of the
// 2*RADIUS + 1 inputs around it (values outside the array count as 0).
// Computed straight from global memory, every input would be read 7 times.
// Instead each block copies its THREADS_PER_BLOCK inputs once into __shared__
// memory, plus a "halo" of RADIUS inputs on each side that belong to its
// neighbours, and computes its outputs from there.
//
// The halo is loaded by the block's first RADIUS threads, but read by others
// (the last threads of the block need the right halo). Without a barrier,
// a thread of another warp can read a halo slot before it is written: a race.
// __syncthreads() between the loads and the sums removes it. The flag
// --no-barrier leaves it out, for compute-sanitizer to catch:
//   compute-sanitizer --tool racecheck ./stencil_1d --no-barrier --n 1000
//
// Source: "CUDA Programming" slides (University of Bologna), the 1D stencil.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o stencil_1d stencil_1d.cu
// Run:
//   ./stencil_1d                  N = 2^24 random integers, checked against the CPU
//   ./stencil_1d --n 1000         any length, not only multiples of the block
//   ./stencil_1d --help           every option

#include <cstdio>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/random.h"
#include "../common/timer.h"

const int RADIUS = 3;
const int THREADS_PER_BLOCK = 256;
static_assert(THREADS_PER_BLOCK >= RADIUS, "the first RADIUS threads of a block load the halos");

__global__ void stencil_1d(const int* in, int* out, long long n, bool use_barrier) {
    __shared__ int temp[THREADS_PER_BLOCK + 2 * RADIUS];
    long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // my element of in/out
    int l = threadIdx.x + RADIUS;                                    // its slot in temp

    // 1. Every thread loads its own element (0 past the end) ...
    temp[l] = g < n ? in[g] : 0;
    // ... and the first RADIUS threads also load the halos on both sides.
    if (threadIdx.x < RADIUS) {
        long long left = g - RADIUS, right = g + THREADS_PER_BLOCK;
        temp[l - RADIUS] = left >= 0 ? in[left] : 0;
        temp[l + THREADS_PER_BLOCK] = right < n ? in[right] : 0;
    }

    // 2. Wait until the whole of temp is written. `use_barrier` is the same
    //    for every thread, so either all threads reach the barrier or none.
    //    Note that threads past the end (g >= n) did not return early: they
    //    must still reach the barrier with the others.
    if (use_barrier) __syncthreads();

    // 3. Apply the stencil from shared memory.
    if (g < n) {
        int result = 0;
        for (int offset = -RADIUS; offset <= RADIUS; offset++) result += temp[l + offset];
        out[g] = result;
    }
}

// The launch shared by main() below and by tests/ch03_dot_product.
void launch_stencil_1d(const int* dev_in, int* dev_out, long long n, bool use_barrier = true) {
    unsigned blocks = (unsigned)ceil_div(n, THREADS_PER_BLOCK);
    stencil_1d<<<blocks, THREADS_PER_BLOCK>>>(dev_in, dev_out, n, use_barrier);
    CHECK_LAUNCH();
}

// The inputs are random integers in [-INPUT_MAX, INPUT_MAX], so every right
// output lies in [-(2 * RADIUS + 1) * INPUT_MAX, +(2 * RADIUS + 1) * INPUT_MAX]
// = [-7000, 7000]. The output is poisoned with the byte 0x80 before the kernel:
// every int then reads 0x80808080 = -2139062144, a value no correct run can
// produce, so an output the kernel never writes can never pass for a right
// one. (The usual 0xFF would read -1: a sum the stencil can produce.)
const int INPUT_MAX = 1000;
const unsigned char POISON_BYTE = 0x80;

// The CPU reference, written independently: the sum over the window, 0 outside.
void stencil_on_cpu(const int* in, int* out, long long n) {
    for (long long i = 0; i < n; i++) {
        int sum = 0;
        for (long long j = i - RADIUS; j <= i + RADIUS; j++)
            if (j >= 0 && j < n) sum += in[j];
        out[i] = sum;
    }
}

// Random integers in [-INPUT_MAX, INPUT_MAX], the same on every machine.
void fill_random_ints(int* x, long long n, uint64_t seed) {
    SplitMix64 rng(seed);
    for (long long i = 0; i < n; i++) x[i] = (int)rng.below(2 * INPUT_MAX + 1) - INPUT_MAX;
}

// Compares every output with the CPU's; returns the number wrong.
long long count_wrong(const int* out, const int* expected, long long n, long long* first_wrong) {
    long long wrong = 0;
    for (long long i = 0; i < n; i++)
        if (out[i] != expected[i] && wrong++ == 0) *first_wrong = i;
    return wrong;
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: stencil_1d [--n N] [--no-barrier] [--repeats R] [--json]\n"
    "  --n N          elements (default 2^24; at most 2^31)\n"
    "  --no-barrier   leave out __syncthreads(): a data race, for compute-sanitizer's racecheck\n"
    "  --repeats R    timed launches after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long n = args.integer("--n", 1LL << 24, 1, 1LL << 31);
    bool barrier = !args.flag("--no-barrier");
    Report report(args, 20);
    size_t bytes = checked_bytes(args, n, sizeof(int), 1);
    report.start(2 * bytes, 3 * bytes);
    report.size("n", n)
        .size("bytes_moved", 2 * bytes)
        .size("radius", RADIUS)
        .size("barrier", barrier ? "yes" : "NO: a data race, on purpose")
        .launch(ceil_div(n, THREADS_PER_BLOCK), THREADS_PER_BLOCK);

    // Integer sums are exact, so the GPU must match the CPU exactly.
    int* in = (int*)host_alloc(args, bytes);
    int* out = (int*)host_alloc(args, bytes);
    int* expected = (int*)host_alloc(args, bytes);
    fill_random_ints(in, n, 12345);
    HostTimer cpu;
    stencil_on_cpu(in, expected, n);
    report.note("CPU reference", "cpu_ms", cpu.stop_ms());

    HostTimer end_to_end;
    int *dev_in, *dev_out;
    HANDLE_ERROR(cudaMalloc(&dev_in, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_out, bytes));
    HANDLE_ERROR(cudaMemset(dev_out, POISON_BYTE, bytes));  // poison: no stencil sum, see above
    HANDLE_ERROR(cudaMemcpy(dev_in, in, bytes, cudaMemcpyHostToDevice));
    launch_stencil_1d(dev_in, dev_out, n, barrier);
    HANDLE_ERROR(cudaMemcpy(out, dev_out, bytes, cudaMemcpyDeviceToHost));
    report.note("end to end (malloc + copies + kernel)", "end_to_end_ms", end_to_end.stop_ms());
    long long first_wrong = -1, wrong = count_wrong(out, expected, n, &first_wrong);

    // Reads in, writes out (the halos come from the cache).
    report.bandwidth(barrier ? "shared" : "no-barrier", "kernel only", 2.0 * bytes,
                     [&] { launch_stencil_1d(dev_in, dev_out, n, barrier); });

    HANDLE_ERROR(cudaFree(dev_in));
    HANDLE_ERROR(cudaFree(dev_out));
    std::free(in);
    std::free(out);
    std::free(expected);
    if (wrong)
        return report.verdict(false, "%lld of %lld outputs wrong, first at i = %lld%s", wrong, n,
                              first_wrong, barrier ? "" : " -- the race without the barrier");
    return report.verdict(true, "all %lld outputs match the CPU%s", n,
                          barrier ? "" : " (this time: a race may go unseen; racecheck sees it)");
}
#endif
