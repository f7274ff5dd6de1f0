// stencil_1d.cu -- threads that share data: a 1D stencil in shared memory.
//
// out[i] = in[i-3] + in[i-2] + ... + in[i+3]: each output is the sum of the
// 2*RADIUS + 1 inputs around it (values outside the array count as 0).
// Computed straight from global memory, every input would be read 7 times.
// Instead each block copies its BLOCK_SIZE inputs once into __shared__
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
#include "../common/timer.h"

const int RADIUS = 3;
const int BLOCK_SIZE = 256;
static_assert(BLOCK_SIZE >= RADIUS, "the first RADIUS threads of a block load the halos");

__global__ void stencil_1d(const int* in, int* out, long long n, bool use_barrier) {
    __shared__ int temp[BLOCK_SIZE + 2 * RADIUS];
    long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // my element of in/out
    int l = threadIdx.x + RADIUS;                                     // its slot in temp

    // 1. Every thread loads its own element (0 past the end) ...
    temp[l] = g < n ? in[g] : 0;
    // ... and the first RADIUS threads also load the halos on both sides.
    if (threadIdx.x < RADIUS) {
        long long left = g - RADIUS, right = g + BLOCK_SIZE;
        temp[l - RADIUS] = left >= 0 ? in[left] : 0;
        temp[l + BLOCK_SIZE] = right < n ? in[right] : 0;
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
void stencil(const int* dev_in, int* dev_out, long long n, bool use_barrier = true) {
    unsigned blocks = (unsigned)((n + BLOCK_SIZE - 1) / BLOCK_SIZE);
    stencil_1d<<<blocks, BLOCK_SIZE>>>(dev_in, dev_out, n, use_barrier);
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

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: stencil_1d [--n N] [--no-barrier] [--repeats R] [--json]\n"
    "  --n N          elements (default 2^24; at most 2^31)\n"
    "  --no-barrier   leave out __syncthreads(): a data race, for compute-sanitizer's racecheck\n"
    "  --repeats R    timed launches after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, "stencil_1d", USAGE);
    long long n = args.integer("--n", 1LL << 24, 1, 1LL << 31);
    bool no_barrier = args.flag("--no-barrier");
    int repeats = (int)args.integer("--repeats", 20, 1, 100000);
    bool json = args.flag("--json");
    args.done();
    size_t bytes = checked_bytes(args, n, sizeof(int), 1);
    // in, out and expected live in host memory: refuse a size that would use
    // more than half of it (exit 2) rather than be killed half way by the OS.
    check_fits_on_host(args, checked_bytes(args, n, sizeof(int), 3));

    DeviceInfo dev = require_device("stencil_1d");
    check_fits_on_device(args, 2 * bytes);
    print_device(dev);
    std::printf("stencil_1d: N = %lld, radius %d, blocks of %d threads%s\n", n, RADIUS, BLOCK_SIZE,
                no_barrier ? ", WITHOUT the barrier (a data race, on purpose)" : "");

    // Random integers in [-INPUT_MAX, INPUT_MAX]: integer sums are exact, so
    // the GPU must match the CPU exactly.
    int* in = (int*)host_alloc(args, bytes);
    int* out = (int*)host_alloc(args, bytes);
    int* expected = (int*)host_alloc(args, bytes);
    unsigned long long state = 12345;
    for (long long i = 0; i < n; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;  // a 64-bit LCG
        in[i] = (int)((state >> 33) % (2 * INPUT_MAX + 1)) - INPUT_MAX;
    }
    HostTimer cpu_timer;
    stencil_on_cpu(in, expected, n);
    double cpu_ms = cpu_timer.stop_ms();

    HostTimer end_to_end;
    int *dev_in, *dev_out;
    HANDLE_ERROR(cudaMalloc((void**)&dev_in, bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dev_out, bytes));
    HANDLE_ERROR(cudaMemset(dev_out, POISON_BYTE, bytes));  // poison: no stencil sum, see above
    HANDLE_ERROR(cudaMemcpy(dev_in, in, bytes, cudaMemcpyHostToDevice));
    stencil(dev_in, dev_out, n, !no_barrier);
    HANDLE_ERROR(cudaMemcpy(out, dev_out, bytes, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();

    long long wrong = 0, first_wrong = -1;
    for (long long i = 0; i < n; i++) {
        if (out[i] != expected[i] && wrong++ == 0) first_wrong = i;
    }

    TimingStats kernel = time_gpu([&] { stencil(dev_in, dev_out, n, !no_barrier); }, repeats);
    double gbs = 2.0 * bytes / (kernel.median_ms * 1e6);  // read in, write out (halos come from cache)
    std::printf("  CPU reference %.1f ms; end to end (malloc + copies + kernel) %.3f ms\n", cpu_ms, end_to_end_ms);
    print_timing("kernel only", kernel, gbs, 100 * gbs / dev.peak_bandwidth_gbs());

    JsonRecord size, launch;
    size.add("n", n).add("bytes_moved", (long long)(2 * bytes)).add("radius", RADIUS);
    launch.add("blocks", (n + BLOCK_SIZE - 1) / BLOCK_SIZE).add("threads", BLOCK_SIZE).add("barrier", !no_barrier);
    print_json(json, measurement("stencil_1d", no_barrier ? "no-barrier" : "shared", dev, kernel, gbs, NAN,
                                 wrong ? "FAIL" : "PASS")
                         .add("size", size).add("launch", launch).add("cpu_ms", cpu_ms)
                         .add("end_to_end_ms", end_to_end_ms));

    HANDLE_ERROR(cudaFree(dev_in));
    HANDLE_ERROR(cudaFree(dev_out));
    std::free(in);
    std::free(out);
    std::free(expected);

    char detail[160];
    if (wrong)
        std::snprintf(detail, sizeof detail, "%lld of %lld outputs wrong, first at i = %lld%s", wrong, n, first_wrong,
                      no_barrier ? " -- the race without the barrier" : "");
    else
        std::snprintf(detail, sizeof detail, "all %lld outputs match the CPU%s", n,
                      no_barrier ? " (this time: a race may go unseen; racecheck sees it)" : "");
    return verdict(wrong == 0, detail);
}
#endif
