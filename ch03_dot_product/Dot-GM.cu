// Dot-GM.cu -- the dot product, global memory only (chapter 3, step 1 of 3).
//
// The result of a dot product is one number, sum of a[i] * b[i]. This first
// version splits the work the simplest way: the GPU computes every product
// and writes it to global memory, c[i] = a[i] * b[i], with the grid-stride
// loop of chapter 2; all N products are copied back and the CPU adds them up.
// It works, but it moves N more floats to the GPU's memory, N floats across
// the PCIe bus, and leaves an N-element sum to the CPU: Dot-SM fixes that.
//
// Source: "GPU Programming" (CSInParallel, 2012), chapter 3, Dot-GM.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o Dot-GM Dot-GM.cu
// Run:
//   ./Dot-GM                      the original's data, a[i] = i, b[i] = 2i, N = 2^28
//   ./Dot-GM --data random        +-1/8 ... +-7/8 at random, both signs, checked exactly
//   ./Dot-GM --blocks auto        a grid sized to fill this GPU
//   ./Dot-GM --help               every option

#include <climits>
#include <cstdio>
#include <string>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "dot.h"

// Each thread multiplies the pairs at its global index, then jumps by the
// number of threads in the grid, until it passes the end.
__global__ void multiply(const float* a, const float* b, float* c, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    while (i < n) {
        c[i] = a[i] * b[i];
        i += stride;
    }
}

// The launch shared by main() below and by tests/ch03_dot_product.
void launch_multiply(const float* dev_a, const float* dev_b, float* dev_c, long long n, int blocks,
                     int threads) {
    multiply<<<blocks, threads>>>(dev_a, dev_b, dev_c, n);
    CHECK_LAUNCH();
}

// The CPU's half of the work: add up the N products. In double: the
// original's `float sum` stops growing once the sum is 2^24 times larger
// than the next product (see the handout).
double sum_products(const float* c, long long n) {
    double sum = 0;
    for (long long i = 0; i < n; i++) sum += c[i];
    return sum;
}

// The original's way, shown beside it: a float running sum.
void print_original_float_sum(const float* c, long long n, const Reference& ref) {
    float sum = 0;
    for (long long i = 0; i < n; i++) sum += c[i];
    std::printf("  the original's float CPU sum %.9e  (off by %.2e of sum|a*b|)\n", sum,
                std::fabs(sum - ref.sum) / ref.sum_abs);
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: Dot-GM [--n N] [--data document|random] [--blocks B|auto] [--threads T]\n"
    "              [--repeats R] [--json]\n"
    "  --n N          elements per vector (default 2^28; at most 2^31)\n"
    "  --data D       'document': a[i] = i, b[i] = 2i (default); 'random': +-1/8 .. +-7/8\n"
    "  --blocks B     blocks in the grid, or 'auto' to fill the GPU (default 128)\n"
    "  --threads T    threads per block, 1..1024 (default 128; 256 with auto)\n"
    "  --repeats R    timed kernel launches after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long n = args.integer("--n", 1LL << 28, 1, 1LL << 31);
    bool random = read_random_data(args);
    std::string grid = args.text("--blocks", "128");
    long long blocks = grid == "auto" ? 0 : args.to_integer("--blocks", grid, 1, INT_MAX);
    int threads = (int)args.integer("--threads", grid == "auto" ? 256 : 128, 1, 1024);
    Report report(args, 20);
    size_t bytes = checked_bytes(args, n, sizeof(float), 1);
    size_t all_bytes = checked_bytes(args, n, sizeof(float), 3);  // a, b and the products c
    report.start(all_bytes, all_bytes);
    if (grid == "auto") blocks = blocks_to_fill_gpu(multiply, threads);
    report.size("n", n).size("bytes_moved", 3 * bytes).launch(blocks, threads);
    DotData data = make_dot_data(args, report, n, random);
    float* c = (float*)host_alloc(args, bytes);

    // End to end, as the original timed it: allocate, copy in, multiply, copy
    // all N products back. The CPU's sum comes after.
    HostTimer end_to_end;
    float *dev_a, *dev_b, *dev_c;
    HANDLE_ERROR(cudaMalloc(&dev_a, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_b, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_c, bytes));
    HANDLE_ERROR(cudaMemset(dev_c, 0xFF, bytes));  // poison: a product never written reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_a, data.a, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_b, data.b, bytes, cudaMemcpyHostToDevice));
    launch_multiply(dev_a, dev_b, dev_c, n, (int)blocks, threads);
    HANDLE_ERROR(cudaMemcpy(c, dev_c, bytes, cudaMemcpyDeviceToHost));
    report.note("end to end (malloc + copies + kernel + copy back)", "end_to_end_ms",
                end_to_end.stop_ms());

    // The last step on the CPU: N products. Each went through one float
    // rounding (its product); the double sum adds nothing measurable.
    double gpu_sum = sum_products(c, n);
    DotCheck check = check_dot(report, data, gpu_sum, 1);
    print_original_float_sum(c, n, data.ref);

    TimingStats kernel =
        report.bandwidth("kernel", "kernel only (reads a, b, writes c)", 3.0 * bytes,
                         [&] { launch_multiply(dev_a, dev_b, dev_c, n, (int)blocks, threads); });
    report_cpu_finish(report, kernel, dev_c, c, n, "products", sum_products, n);

    HANDLE_ERROR(cudaFree(dev_a));
    HANDLE_ERROR(cudaFree(dev_b));
    HANDLE_ERROR(cudaFree(dev_c));
    free_dot_data(data);
    std::free(c);
    return report.verdict(check.pass, "%s", check.detail);
}
#endif
