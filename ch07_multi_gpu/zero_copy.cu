// zero_copy.cu -- the book's zero-copy dot product, and the honest conclusion (chapter 7).
//
// Mapped ("zero-copy") host memory: cudaHostAlloc(..., cudaHostAllocMapped) gives pinned
// host memory that a kernel can read directly; every load crosses the PCIe (or C2C)
// link, and nothing is copied first. The same dot product three ways on GPU 0:
//   zero-copy          the kernel reads a and b from mapped host memory
//   copy-then-compute  cudaMemcpyAsync a and b to the GPU, then the kernel
//   on-device          the kernel alone on data already on the GPU (the memory's speed)
// and, with more than one GPU, the book's PORTABLE pinned memory
// (cudaHostAllocPortable): the same host buffers are pinned for every GPU, and each
// GPU reads its own slice of them zero-copy, one host thread per GPU.
//
// The book's conclusion (a laptop's integrated GPU shares the host's memory: zero-copy
// saves a copy for nothing) does not carry over to a discrete GPU: zero-copy reads run
// at the link's speed, a few percent of HBM's. They can match copy-then-compute for data
// read exactly once (the same bytes cross the same link once), never on-device work.
//
// Source: CUDA by Example (Sanders and Kandrot, 2010), chapter 11.1 "Zero-Copy Host
// Memory" and 11.3 "Portable Pinned Memory".
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o zero_copy zero_copy.cu
// Run:
//   ./zero_copy                  N = 2^26 (256 MiB per vector)

#include <string>
#include <thread>
#include <vector>
#include "../common/report.h"  // also args.h, device_info.h, timer.h, handle_error.h
#include "multi_gpu.h"

// The dot product of the slice [begin, begin + count) of the mapped vectors on GPU g,
// read zero-copy; its result and its kernel time (host thread g).
struct ZeroCopyPart {
    float sum = 0;
    TimingStats kernel;
};

void zero_copy_on_gpu(int g, const float* a, const float* b, Slice s, int repeats,
                      ZeroCopyPart* out) {
    HANDLE_ERROR(cudaSetDevice(g));
    // Portable + mapped: the pointer that GPU g uses for the same host bytes.
    float *dev_a, *dev_b, *dev_partial, *dev_result;
    HANDLE_ERROR(cudaHostGetDevicePointer((void**)&dev_a, (void*)a, 0));
    HANDLE_ERROR(cudaHostGetDevicePointer((void**)&dev_b, (void*)b, 0));
    dev_a += s.begin;
    dev_b += s.begin;
    int blocks = dot_blocks(s.count);
    HANDLE_ERROR(cudaMalloc(&dev_partial, blocks * sizeof(float)));
    HANDLE_ERROR(cudaMalloc(&dev_result, sizeof(float)));
    HANDLE_ERROR(cudaMemset(dev_result, 0xFF, sizeof(float)));  // poison: NaN
    launch_dot(dev_a, dev_b, dev_partial, dev_result, s.count, blocks);
    HANDLE_ERROR(cudaMemcpy(&out->sum, dev_result, sizeof(float), cudaMemcpyDeviceToHost));
    out->kernel = time_gpu(
        [&] { launch_dot(dev_a, dev_b, dev_partial, dev_result, s.count, blocks); }, repeats);
    HANDLE_ERROR(cudaFree(dev_partial));
    HANDLE_ERROR(cudaFree(dev_result));
}

#ifndef CUDA_EXAMPLES_NO_MAIN
// The lesson: zero-copy reads cross the host link, so on a discrete GPU the
// kernel runs at the link's speed -- about as fast as copying the data first
// (each byte crosses once either way), and many times slower than data already
// in the GPU's memory. Checked from 2^22 elements up (32 MiB to read: below,
// the launch and copy overheads of some 10 us decide instead).
void check_link_lesson(Report& report, long long n, const TimingStats& zero_copy,
                       const TimingStats& copied, const TimingStats& on_device) {
    std::printf(
        "  zero-copy takes %.2fx the time of copy-then-compute and %.0fx that of on-device\n",
        zero_copy.median_ms / copied.median_ms, zero_copy.median_ms / on_device.median_ms);
    if (n < (1LL << 22)) return report.lesson_not_checked("use --n 2^22 or more");
    // H200, 3 runs at n = 2^26: 1.07 (1.07..1.07). At most 1.5: room for a busy
    // link, while reads that no longer coalesce (many small link transactions) take longer.
    report.lesson_at_most("zero-copy's time over copy-then-compute's",
                          zero_copy.median_ms / copied.median_ms, 1.5);
    // H200: 82 (the tour's log: 10.46 ms against 0.127). At least 10: a kernel
    // that reads device memory while it claims to read the host's shows about 1.
    report.lesson("zero-copy's time over the on-device kernel's",
                  zero_copy.median_ms / on_device.median_ms, 10);
}

// A vector of the chapter's random eighths (seed), in pinned host memory that
// every GPU can read directly: mapped into their address spaces, and portable.
float* mapped_vector(long long n, int seed) {
    float* v;
    HANDLE_ERROR(cudaHostAlloc(&v, n * sizeof(float), cudaHostAllocMapped | cudaHostAllocPortable));
    fill_eighths_host(v, n, seed);
    return v;
}

// One checked run of `work`, which leaves a dot product in dev_result (poisoned first).
template <typename Work>
float dot_once(float* dev_result, Work work) {
    float sum;
    HANDLE_ERROR(cudaMemset(dev_result, 0xFF, sizeof(float)));  // poison: NaN until written
    work();
    HANDLE_ERROR(cudaMemcpy(&sum, dev_result, sizeof(float), cudaMemcpyDeviceToHost));
    return sum;
}

// Portable pinned memory: every GPU reads its slice of the same host buffers,
// one host thread per GPU, each over its own link. True when the slices' sums
// add up to the reference.
bool portable_zero_copy(Report& report, const float* a, const float* b, long long n, int k,
                        double reference) {
    std::vector<ZeroCopyPart> parts(k);
    std::vector<std::thread> threads;
    for (int g = 0; g < k; ++g)
        threads.emplace_back(zero_copy_on_gpu, g, a, b, slice_of(n, k, g), report.repeats(),
                             &parts[g]);
    for (std::thread& t : threads) t.join();
    double total = 0;
    TimingStats slowest = parts[0].kernel;
    for (const ZeroCopyPart& p : parts) {
        total += p.sum;
        if (p.kernel.median_ms > slowest.median_ms) slowest = p.kernel;
    }
    report.record("portable", ("portable, zero-copy on " + std::to_string(k) + " GPUs").c_str(),
                  slowest, 2.0 * n * sizeof(float) / (slowest.median_ms * 1e6), NAN, NAN, nullptr,
                  "pcie", k);  // k GPUs, k links
    return total == reference;
}

const char* USAGE =
    "usage: zero_copy [--n N] [--gpus K] [--repeats R] [--json]\n"
    "  --n N          elements per vector (default 2^26; at most 2^30)\n"
    "  --gpus K       GPUs for the portable run (default: all visible; more: skipped)\n"
    "  --repeats R    timed runs after a warm-up (default 10)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long n = args.integer("--n", 1LL << 26, 1, 1LL << 30);
    int requested = read_gpus(args);
    Report report(args, 10);
    size_t bytes = checked_bytes(args, n, sizeof(float), 1);
    report.start(2 * bytes, 2 * bytes);
    int k = use_gpus(args.program(), requested);
    report.size("n", n).size("gpus", (long long)k);
    float* a = mapped_vector(n, 1);  // pinned, mapped into every GPU's address space
    float* b = mapped_vector(n, 2);
    double reference = dot_reference(a, b, n);
    // GPU 0, three ways. Copy-then-compute copies into device buffers first.
    HANDLE_ERROR(cudaSetDevice(0));
    float *dev_a, *dev_b, *dev_partial, *dev_result;
    int blocks = dot_blocks(n);
    HANDLE_ERROR(cudaMalloc(&dev_a, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_b, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_partial, blocks * sizeof(float)));
    HANDLE_ERROR(cudaMalloc(&dev_result, sizeof(float)));
    auto copy_then_compute = [&] {
        HANDLE_ERROR(cudaMemcpyAsync(dev_a, a, bytes, cudaMemcpyHostToDevice));
        HANDLE_ERROR(cudaMemcpyAsync(dev_b, b, bytes, cudaMemcpyHostToDevice));
        launch_dot(dev_a, dev_b, dev_partial, dev_result, n, blocks);
    };
    float sums[3];
    sums[1] = dot_once(dev_result, copy_then_compute);
    sums[2] =
        dot_once(dev_result, [&] { launch_dot(dev_a, dev_b, dev_partial, dev_result, n, blocks); });

    ZeroCopyPart zc;
    zero_copy_on_gpu(0, a, b, slice_of(n, 1, 0), report.repeats(), &zc);
    sums[0] = zc.sum;
    HANDLE_ERROR(cudaSetDevice(0));
    double link = 2.0 * bytes / (zc.kernel.median_ms * 1e6);
    report.record("zero-copy", "zero-copy (reads cross the link)", zc.kernel, link, NAN, NAN,
                  nullptr, "pcie");
    report.extra("ceiling", "pcie");  // its limit: the host link (pinned copies), not DRAM
    TimingStats copied = report.bandwidth("copy-then-compute", "copy a and b, then compute",
                                          2.0 * bytes, copy_then_compute);
    report.extra("ceiling", "pcie");  // the copies cross the same link
    TimingStats on_device =
        report.bandwidth("on-device", "data already on the GPU", 2.0 * bytes,
                         [&] { launch_dot(dev_a, dev_b, dev_partial, dev_result, n, blocks); });
    check_link_lesson(report, n, zc.kernel, copied, on_device);
    bool pass = sums[0] == reference && sums[1] == reference && sums[2] == reference;
    std::printf("  sums: zero-copy %.9e, copied %.9e, on-device %.9e, reference %.9e\n", sums[0],
                sums[1], sums[2], reference);
    if (k > 1) pass = portable_zero_copy(report, a, b, n, k, reference) && pass;

    HANDLE_ERROR(cudaFree(dev_a));
    HANDLE_ERROR(cudaFree(dev_b));
    HANDLE_ERROR(cudaFree(dev_partial));
    HANDLE_ERROR(cudaFree(dev_result));
    HANDLE_ERROR(cudaFreeHost(a));
    HANDLE_ERROR(cudaFreeHost(b));
    return report.verdict(
        pass, "%s (random eighths: exact, no tolerance)",
        pass ? "every way gives the CPU's dot product" : "a dot product differs from the CPU's");
}
#endif
