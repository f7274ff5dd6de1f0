// Dot-GM.cu -- the dot product, global memory only (chapter 3, step 1 of 3).
//
// The result of a dot product is one number, sum of a[i] * b[i]. This first
// version splits the work the simplest way: the GPU computes every product
// and writes it to global memory, c[i] = a[i] * b[i], with the grid-stride
// loop of chapter 2; all N products are copied back and the CPU adds them up.
// It works, but it moves N more floats to the GPU's memory, N floats across
// the PCIe bus, and leaves an N-element sum to the CPU: Dot-SM fixes that.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o Dot-GM Dot-GM.cu
// Run:
//   ./Dot-GM                      the document's data, a[i] = i, b[i] = 2i, N = 2^28
//   ./Dot-GM --data random        +-1/8 ... +-7/8 at random, both signs, checked exactly
//   ./Dot-GM --blocks auto        a grid sized to fill this GPU
//   ./Dot-GM --help               every option

#include <cstdio>
#include <string>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "dot_reference.h"

// Each thread multiplies the pairs at its global index, then jumps by the
// number of threads in the grid, until it passes the end.
__global__ void dot_products(const float* a, const float* b, float* c, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    while (i < n) {
        c[i] = a[i] * b[i];
        i += stride;
    }
}

// The launch shared by main() below and by tests/ch03_dot_product.
void dot_gm(const float* dev_a, const float* dev_b, float* dev_c, long long n, int blocks, int threads) {
    dot_products<<<blocks, threads>>>(dev_a, dev_b, dev_c, n);
    CHECK_LAUNCH();
}

// The CPU's half of the work: add up the N products. In double: the
// document's `float sum` stops growing once the sum is 2^24 times larger
// than the next product (see the handout), so main() shows both.
double sum_products(const float* c, long long n) {
    double sum = 0;
    for (long long i = 0; i < n; i++) sum += c[i];
    return sum;
}

// "--blocks auto": as many blocks as the GPU keeps resident at once.
int dot_gm_auto_blocks(int threads, const DeviceInfo& dev) {
    int blocks_per_sm = 0;
    HANDLE_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, dot_products, threads, 0));
    return blocks_per_sm * dev.sm_count;
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: Dot-GM [--n N] [--data document|random] [--blocks B|auto] [--threads T] [--repeats R] [--json]\n"
    "  --n N          elements per vector (default 2^28; at most 2^31)\n"
    "  --data D       'document': a[i] = i, b[i] = 2i (default); 'random': +-1/8 .. +-7/8\n"
    "  --blocks B     blocks in the grid, or 'auto' to fill the GPU (default 128)\n"
    "  --threads T    threads per block, 1..1024 (default 128; 256 with auto)\n"
    "  --repeats R    timed kernel launches after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, "Dot-GM", USAGE);
    long long n = args.integer("--n", 1LL << 28, 1, 1LL << 31);
    std::string data = args.text("--data", "document");
    if (data != "document" && data != "random") args.fail("--data must be 'document' or 'random'");
    std::string blocks_text = args.text("--blocks", "128");
    bool auto_grid = blocks_text == "auto";
    long long blocks = auto_grid ? 0 : args.to_integer("--blocks", blocks_text, 1, 2147483647);
    int threads = (int)args.integer("--threads", auto_grid ? 256 : 128, 1, 1024);
    int repeats = (int)args.integer("--repeats", 20, 1, 100000);
    bool json = args.flag("--json");
    args.done();
    size_t bytes = checked_bytes(args, n, sizeof(float), 1);
    // a, b and c live in host memory too: refuse a size that would use more
    // than half of it (exit 2) rather than be killed half way by the OS.
    check_fits_on_host(args, checked_bytes(args, n, sizeof(float), 3));
    bool random = data == "random";

    DeviceInfo dev = require_device("Dot-GM");
    check_fits_on_device(args, 3 * bytes);
    if (auto_grid) blocks = dot_gm_auto_blocks(threads, dev);
    print_device(dev);
    std::printf("Dot-GM: N = %lld (%s data), %lld blocks x %d threads%s\n", n, data.c_str(), blocks, threads,
                auto_grid ? " (auto)" : "");

    float* a = (float*)host_alloc(args, bytes);
    float* b = (float*)host_alloc(args, bytes);
    float* c = (float*)host_alloc(args, bytes);
    if (random) {
        fill_random(a, n, 1);
        fill_random(b, n, 2);
    } else {
        fill_document_data(a, b, n);
    }
    HostTimer cpu_timer;
    Reference ref = dot_reference(a, b, n, random);  // random: exact, see dot_reference.h
    double cpu_ms = cpu_timer.stop_ms();

    // End to end, as the document timed it: allocate, copy in, multiply, copy
    // all N products back. The CPU's sum comes after, outside the timed region.
    HostTimer end_to_end;
    float *dev_a, *dev_b, *dev_c;
    HANDLE_ERROR(cudaMalloc((void**)&dev_a, bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dev_b, bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dev_c, bytes));
    HANDLE_ERROR(cudaMemset(dev_c, 0xFF, bytes));  // poison: a product never written reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_a, a, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_b, b, bytes, cudaMemcpyHostToDevice));
    dot_gm(dev_a, dev_b, dev_c, n, (int)blocks, threads);
    HANDLE_ERROR(cudaMemcpy(c, dev_c, bytes, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();

    HostTimer sum_timer;
    double gpu_sum = sum_products(c, n);
    double cpu_sum_ms = sum_timer.stop_ms();
    float document_sum = 0;  // the document's way: a float running sum
    for (long long i = 0; i < n; i++) document_sum += c[i];

    // The document's data: each term went through one float rounding (its
    // product on the GPU); the double sum on the CPU adds nothing measurable
    // (float_error_bound counts it). The random data: no rounding at all.
    const long long depth = 1;
    bool pass = within_bound(gpu_sum, ref, depth);
    double error = std::fabs(gpu_sum - ref.sum), bound = allowed_error(depth, ref);

    // The costs that follow the kernel: all N products back to the host ...
    HostTimer copy_timer;
    HANDLE_ERROR(cudaMemcpy(c, dev_c, bytes, cudaMemcpyDeviceToHost));
    double copy_back_ms = copy_timer.stop_ms();
    // ... and the kernel alone, each launch timed with events.
    TimingStats kernel = time_gpu([&] { dot_gm(dev_a, dev_b, dev_c, n, (int)blocks, threads); }, repeats);

    double kernel_gbs = 3.0 * bytes / (kernel.median_ms * 1e6);  // read a and b, write c
    double dot_ms = kernel.median_ms + copy_back_ms + cpu_sum_ms;  // the whole dot product
    double dot_gbs = 2.0 * bytes / (dot_ms * 1e6);                 // input bytes per second

    std::printf("  GPU dot product (CPU sum in double)  %.9e\n", gpu_sum);
    std::printf("  the document's float CPU sum         %.9e  (off by %.2e of sum|a*b|)\n", document_sum,
                std::fabs(document_sum - ref.sum) / ref.sum_abs);
    std::printf("  CPU reference in double              %.9e  (%.1f ms)\n", ref.sum, cpu_ms);
    if (data == "document")
        std::printf("  closed form 2*sum(i^2): exact %.9e, in float as the document %.9e\n",
                    closed_form_exact(n), (double)document_closed_form_float(n));
    if (ref.exact)
        std::printf("  |GPU - reference| = %.3e, allowed 0 (the random data leaves nothing to round)\n", error);
    else
        std::printf("  |GPU - reference| = %.3e, allowed %.3e (%lld rounding x 2^-24 x sum|a*b| = %.3e)\n",
                    error, bound, depth, ref.sum_abs);
    std::printf("  end to end (malloc + copies + kernel + copy back): %.3f ms\n", end_to_end_ms);
    print_timing("kernel only (reads a, b, writes c)", kernel, kernel_gbs,
                 100 * kernel_gbs / dev.peak_bandwidth_gbs());
    std::printf("  + copy %lld products back %.3f ms + CPU sum %.3f ms = dot product %.3f ms (%.1f GB/s of input)\n",
                n, copy_back_ms, cpu_sum_ms, dot_ms, dot_gbs);

    const char* result = pass ? "PASS" : "FAIL";
    JsonRecord size, launch;
    size.add("n", n).add("bytes_moved", (long long)(3 * bytes));
    launch.add("blocks", blocks).add("threads", threads).add("auto", auto_grid);
    print_json(json, measurement("Dot-GM", "kernel", dev, kernel, kernel_gbs, NAN, result)
                         .add("size", size).add("launch", launch).add("data", data)
                         .add("end_to_end_ms", end_to_end_ms).add("cpu_ms", cpu_ms)
                         .add("copy_back_ms", copy_back_ms).add("cpu_sum_ms", cpu_sum_ms)
                         .add("dot_ms", dot_ms).add("dot_gbs", dot_gbs)
                         .add("abs_error", error).add("error_bound", bound));

    HANDLE_ERROR(cudaFree(dev_a));
    HANDLE_ERROR(cudaFree(dev_b));
    HANDLE_ERROR(cudaFree(dev_c));
    std::free(a);
    std::free(b);
    std::free(c);

    char detail[200];
    std::snprintf(detail, sizeof detail, "%s: |GPU - CPU double| = %.3e, allowed %.3e",
                  pass ? "the GPU dot product matches the CPU" : "the GPU dot product is wrong", error, bound);
    return verdict(pass, detail);
}
#endif
