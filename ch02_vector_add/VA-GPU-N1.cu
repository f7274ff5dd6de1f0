// VA-GPU-N1.cu -- vector addition with many blocks of one thread (chapter 2, step 2 of 3).
// Source: "GPU Programming" (CSInParallel, 2012), chapter 2, program VA-GPU-N1.
//
// c[i] = a[i] + b[i], now split between `blocks` blocks of one thread each.
// Block b does elements b, b + blocks, b + 2*blocks, ...: each block strides by
// the number of blocks in the grid (gridDim.x), so any N is covered.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o VA-GPU-N1 VA-GPU-N1.cu
// Run:
//   ./VA-GPU-N1            (./VA-GPU-N1 --help lists the options)

#include "../common/handle_error.h"
#include "../common/report.h"
#include "vectors.h"

__global__ void add(const elem_t* a, const elem_t* b, elem_t* c, long long n) {
    // LAB ch02.one-per-block {
    long long i = blockIdx.x;  // one thread per block: the block's index is ours
    while (i < n) {
        c[i] = a[i] + b[i];
        i += gridDim.x;  // jump over the elements the other blocks handle
    }
    // LAB }
}

// The launch, shared by main() below and by tests/ch02_vector_add.
void launch_add(const elem_t* dev_a, const elem_t* dev_b, elem_t* dev_c, long long n, int blocks) {
    add<<<blocks, 1>>>(dev_a, dev_b, dev_c, n);
    CHECK_LAUNCH();
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: VA-GPU-N1 [--n N] [--blocks B] [--repeats R] [--json]\n"
    "  --n N          elements per vector (default 2^20; at most 3000000000)\n"
    "  --blocks B     blocks of one thread each (default 128, as the original)\n"
    "  --repeats R    timed kernel launches after a warm-up (default 5)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long n = args.integer("--n", 1LL << 20, 1, MAX_N);
    int blocks = (int)args.integer("--blocks", 128, 1, 2147483647);
    Report report(args, 5);
    size_t bytes = guarded_bytes(args, n);  // n elements and a guard (vectors.h)
    report.start(3 * bytes, 3 * bytes);
    report.size("n", n).size("bytes_moved", 3 * n * sizeof(elem_t)).launch(blocks, 1);
    announce_vector_add(n, blocks, report.repeats() + 2);

    elem_t* a = (elem_t*)host_alloc(args, bytes);
    elem_t* b = (elem_t*)host_alloc(args, bytes);
    elem_t* c = (elem_t*)host_alloc(args, bytes);
    fill_inputs(a, b, n);  // a[i] = -i, b[i] = i*i

    // End to end, as the original timed it: allocate, copy in, add, copy out.
    HostTimer end_to_end;
    elem_t *dev_a, *dev_b, *dev_c;
    HANDLE_ERROR(cudaMalloc(&dev_a, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_b, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_c, bytes));
    HANDLE_ERROR(cudaMemset(dev_c, 0xFF, bytes));  // poison: every element reads -1, guard too
    HANDLE_ERROR(cudaMemcpy(dev_a, a, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_b, b, bytes, cudaMemcpyHostToDevice));
    launch_add(dev_a, dev_b, dev_c, n, blocks);
    HANDLE_ERROR(cudaMemcpy(c, dev_c, bytes, cudaMemcpyDeviceToHost));
    report.note("end to end (malloc + copies + kernel)", "end_to_end_ms", end_to_end.stop_ms());

    // Check every element on the CPU, timed: it does the CPU's version of the additions.
    HostTimer cpu;
    SumCheck check = check_sums(a, b, c, n);
    report.note("CPU, the same additions (while checking)", "cpu_ms", cpu.stop_ms());

    // Kernel only, each launch timed with events: it reads a and b, writes c.
    report.bandwidth(
        "kernel", "kernel only", 3.0 * n * sizeof(elem_t),
        [&] { launch_add(dev_a, dev_b, dev_c, n, blocks); }, 1);

    HANDLE_ERROR(cudaFree(dev_a));
    HANDLE_ERROR(cudaFree(dev_b));
    HANDLE_ERROR(cudaFree(dev_c));
    std::free(a);
    std::free(b);
    std::free(c);
    return report.verdict(check.pass(), "%s", check.detail().c_str());
}
#endif
