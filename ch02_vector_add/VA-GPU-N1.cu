// VA-GPU-N1.cu -- vector addition with many blocks of one thread (chapter 2, step 2 of 3).
//
// c[i] = a[i] + b[i], now split between `blocks` blocks of one thread each.
// Block b does elements b, b + blocks, b + 2*blocks, ...: each block strides by
// the number of blocks in the grid (gridDim.x), so any N is covered.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o VA-GPU-N1 VA-GPU-N1.cu
// Run:
//   ./VA-GPU-N1            (./VA-GPU-N1 --help lists the options)

#include <algorithm>
#include <cstdio>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"

// 64-bit integers: the document's `int` overflows once i*i passes 2^31 - 1.
typedef long long elem_t;

__global__ void add(const elem_t* a, const elem_t* b, elem_t* c, long long n) {
    long long i = blockIdx.x;  // one thread per block: the block's index is ours
    while (i < n) {
        c[i] = a[i] + b[i];
        i += gridDim.x;  // jump over the elements the other blocks handle
    }
}

// The launch shared by main() below and by tests/ch02_vector_add.
void vector_add_n1(const elem_t* dev_a, const elem_t* dev_b, elem_t* dev_c, long long n, int blocks) {
    add<<<blocks, 1>>>(dev_a, dev_b, dev_c, n);
    CHECK_LAUNCH();
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: VA-GPU-N1 [--n N] [--blocks B] [--repeats R] [--json]\n"
    "  --n N          elements per vector (default 2^20; at most 3000000000)\n"
    "  --blocks B     blocks of one thread each (default 128, as the document)\n"
    "  --repeats R    timed kernel launches after a warm-up (default 5)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, "VA-GPU-N1", USAGE);
    long long n = args.integer("--n", 1LL << 20, 1, 3000000000LL);
    int blocks = (int)args.integer("--blocks", 128, 1, 2147483647);
    int repeats = (int)args.integer("--repeats", 5, 1, 100000);
    bool json = args.flag("--json");
    args.done();
    size_t bytes = checked_bytes(args, n, sizeof(elem_t), 1);
    // a, b and c, each with one guard element (below), on the host and on the GPU.
    size_t all_bytes = checked_bytes(args, n + 1, sizeof(elem_t), 3);
    check_fits_on_host(args, all_bytes);

    DeviceInfo dev = require_device("VA-GPU-N1");
    check_fits_on_device(args, all_bytes);
    print_device(dev);
    std::printf("VA-GPU-N1: N = %lld, %d blocks x 1 thread\n", n, blocks);
    // A long run says so first. The rates are conservative: each thread adds
    // 4 million elements a second (an H200's: 5.4 million each, 128 blocks of
    // one), the GPU in all at most 5 billion (an H200: 35 billion), and the host
    // fills, copies and checks 50 million a second (the H200 machine's: about 90 million).
    double gpu_rate = std::min(blocks * 4e6, 5e9);
    int launches = repeats + 2;  // the checked launch, a warm-up, the timed ones
    announce_long_run(launches * (n / gpu_rate) + n / 5e7,
                      "estimated for 4 million elements a second per GPU thread");

    // Host data as in the document: a[i] = -i, b[i] = i*i. Each array has one
    // element more than the vector: a guard at [n]. a[n] = b[n] = 0, and c[n]
    // must still hold the poison after the kernel; if it does not, the kernel
    // wrote past the end (as a loop bound of i <= n would).
    size_t guarded = bytes + sizeof(elem_t);
    elem_t* a = (elem_t*)host_alloc(args, guarded);
    elem_t* b = (elem_t*)host_alloc(args, guarded);
    elem_t* c = (elem_t*)host_alloc(args, guarded);
    for (long long i = 0; i < n; i++) {
        a[i] = -i;
        b[i] = i * i;
    }
    a[n] = b[n] = 0;

    // End to end, as the document timed it: allocate, copy in, add, copy out.
    HostTimer end_to_end;
    elem_t *dev_a, *dev_b, *dev_c;
    HANDLE_ERROR(cudaMalloc((void**)&dev_a, guarded));
    HANDLE_ERROR(cudaMalloc((void**)&dev_b, guarded));
    HANDLE_ERROR(cudaMalloc((void**)&dev_c, guarded));
    HANDLE_ERROR(cudaMemset(dev_c, 0xFF, guarded));  // poison: every element reads -1, guard too
    HANDLE_ERROR(cudaMemcpy(dev_a, a, guarded, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_b, b, guarded, cudaMemcpyHostToDevice));
    vector_add_n1(dev_a, dev_b, dev_c, n, blocks);
    HANDLE_ERROR(cudaMemcpy(c, dev_c, guarded, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();

    // Check every element on the CPU: c[i] must be the CPU's a[i] + b[i], and
    // with the document's data that is i*i - i, worked out here in 64 bits
    // whatever elem_t is (so a type too narrow for i*i, like the document's
    // int, fails). -1, the poison, is never a right answer.
    // Timed, since the loop does the CPU's version of the same additions.
    HostTimer cpu;
    long long wrong = 0, first_wrong = -1;
    for (long long i = 0; i < n; i++) {
        if (c[i] != a[i] + b[i] || c[i] != i * i - i) {
            if (wrong++ == 0) first_wrong = i;
        }
    }
    double cpu_ms = cpu.stop_ms();
    bool past_the_end = (c[n] != (elem_t)-1);  // the guard was written

    // Kernel only: the same launch repeated, each timed with events.
    TimingStats kernel = time_gpu([&] { vector_add_n1(dev_a, dev_b, dev_c, n, blocks); }, repeats, 1);
    double kernel_gbs = 3.0 * bytes / (kernel.median_ms * 1e6);  // read a and b, write c
    std::printf("  end to end (malloc + copies + kernel): %.3f ms\n", end_to_end_ms);
    std::printf("  CPU, the same additions (while checking): %.3f ms\n", cpu_ms);
    print_timing("kernel only", kernel, kernel_gbs, 100 * kernel_gbs / dev.peak_bandwidth_gbs());

    bool pass = (wrong == 0 && !past_the_end);
    const char* result = pass ? "PASS" : "FAIL";
    JsonRecord size, launch;
    size.add("n", n).add("bytes_moved", (long long)(3 * bytes));
    launch.add("blocks", blocks).add("threads", 1);
    print_json(json, measurement("VA-GPU-N1", "kernel", dev, kernel, kernel_gbs, NAN, result)
                         .add("size", size).add("launch", launch).add("end_to_end_ms", end_to_end_ms).add("cpu_ms", cpu_ms));

    HANDLE_ERROR(cudaFree(dev_a));
    HANDLE_ERROR(cudaFree(dev_b));
    HANDLE_ERROR(cudaFree(dev_c));
    std::free(a);
    std::free(b);
    std::free(c);

    char detail[160];
    if (wrong)
        std::snprintf(detail, sizeof detail, "%lld of %lld elements wrong, first at i = %lld", wrong, n, first_wrong);
    else if (past_the_end)
        std::snprintf(detail, sizeof detail, "the kernel wrote past the end (guard c[%lld])", n);
    else
        std::snprintf(detail, sizeof detail, "all %lld elements match the CPU", n);
    return verdict(pass, detail);
}
#endif
