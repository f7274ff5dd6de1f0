// VA-GPU-11.cu -- vector addition on one block of one thread (chapter 2, step 1 of 3).
// Source: "GPU Programming" (CSInParallel, 2012), chapter 2, program VA-GPU-11.
//
// c[i] = a[i] + b[i], computed by a single GPU thread that walks the whole
// vector. It is correct and it is as slow as a GPU gets: one of the thousands
// of cores works, and every load waits for the one before. The point is the
// shape of every CUDA program: allocate on the device, copy in, launch, copy out.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o VA-GPU-11 VA-GPU-11.cu
// Run:
//   ./VA-GPU-11            (./VA-GPU-11 --help lists the options)

#include "../common/handle_error.h"
#include "../common/report.h"
#include "vectors.h"

__global__ void add(const elem_t* a, const elem_t* b, elem_t* c, long long n) {
    long long i = 0;
    while (i < n) {
        c[i] = a[i] + b[i];
        i += 1;  // one thread in one block: it does every element itself
    }
}

// The launch, shared by main() below and by tests/ch02_vector_add.
void launch_add(const elem_t* dev_a, const elem_t* dev_b, elem_t* dev_c, long long n) {
    add<<<1, 1>>>(dev_a, dev_b, dev_c, n);
    CHECK_LAUNCH();
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: VA-GPU-11 [--n N] [--repeats R] [--json]\n"
    "  --n N          elements per vector (default 2^20; at most 3000000000)\n"
    "  --repeats R    timed kernel launches after a warm-up (default 5)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long n = args.integer("--n", 1LL << 20, 1, MAX_N);
    Report report(args, 5);
    size_t bytes = guarded_bytes(args, n);  // n elements and a guard (vectors.h)
    report.start(3 * bytes, 3 * bytes);
    report.size("n", n).size("bytes_moved", 3 * n * sizeof(elem_t)).launch(1, 1);
    announce_vector_add(n, 1, report.repeats() + 2);

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
    launch_add(dev_a, dev_b, dev_c, n);
    HANDLE_ERROR(cudaMemcpy(c, dev_c, bytes, cudaMemcpyDeviceToHost));
    report.note("end to end (malloc + copies + kernel)", "end_to_end_ms", end_to_end.stop_ms());

    // Check every element on the CPU, timed: it does the CPU's version of the additions.
    HostTimer cpu;
    SumCheck check = check_sums(a, b, c, n);
    report.note("CPU, the same additions (while checking)", "cpu_ms", cpu.stop_ms());

    // Kernel only, each launch timed with events: it reads a and b, writes c.
    report.bandwidth(
        "kernel", "kernel only", 3.0 * n * sizeof(elem_t),
        [&] { launch_add(dev_a, dev_b, dev_c, n); }, 1);

    HANDLE_ERROR(cudaFree(dev_a));
    HANDLE_ERROR(cudaFree(dev_b));
    HANDLE_ERROR(cudaFree(dev_c));
    std::free(a);
    std::free(b);
    std::free(c);
    return report.verdict(check.pass(), "%s", check.detail().c_str());
}
#endif
