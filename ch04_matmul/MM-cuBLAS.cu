// MM-cuBLAS.cu -- the same product from NVIDIA's library: the chapter's yardstick.
//
// cuBLAS is the GPU version of BLAS, the decades-old standard interface for
// linear algebra. cublasSgemm computes C = alpha * op(A) x op(B) + beta * C
// in single precision; here alpha = 1, beta = 0, no transposes: P = M x N.
// Its kernels are written and tuned per GPU by NVIDIA, so its speed is the
// bar the hand-written kernels of this chapter are measured against.
//
// Two details matter:
//  * Strict FP32. On GPUs with tensor cores cuBLAS may be allowed to round the
//    inputs to TF32 (10-bit mantissa) for speed. CUBLAS_PEDANTIC_MATH forbids
//    that and any other shortcut, so it computes exactly what our kernels do.
//  * Row-major vs column-major. BLAS comes from Fortran and stores a matrix
//    column by column; our matrices are stored row by row. A row-major W x W
//    matrix read as column-major is its transpose. So we ask cuBLAS for
//    P^T = N^T x M^T in column-major terms -- passing N first, then M -- and
//    the bytes it writes are exactly row-major P = M x N. No copy, no transpose.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o MM-cuBLAS MM-cuBLAS.cu -lcublas
// Run:
//   ./MM-cuBLAS                          Width 1024
//   ./MM-cuBLAS --width 4096             the chapter's speed benchmark
//   ./MM-cuBLAS --help                   every option

#include <cstdio>
#include <string>
#include <cublas_v2.h>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "../common/handle_cublas.h"  // HANDLE_CUBLAS, the cuBLAS twin of HANDLE_ERROR
#include "cublas_yardstick.h"
#include "matrix.h"

// A handle holds cuBLAS's state for one device (streams, workspace, modes).
// Creating one is slow (it loads kernels), so do it once, not per product.
cublasHandle_t make_strict_fp32_handle() {
    cublasHandle_t handle;
    HANDLE_CUBLAS(cublasCreate(&handle));
    HANDLE_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
    return handle;
}

// P = M x N, all row-major Width x Width, on the device: the launch shared by
// main() below and by tests/ch04_matmul. In column-major terms this is
// P^T = N^T x M^T, hence N before M; every leading dimension is Width.
void matmul_cublas(cublasHandle_t handle, const float* dev_M, const float* dev_N, float* dev_P, int Width) {
    const float alpha = 1.0f, beta = 0.0f;
    HANDLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N,
                              Width, Width, Width,  // rows of op(A) and C, columns of C, inner dimension
                              &alpha, dev_N, Width, dev_M, Width,
                              &beta, dev_P, Width));
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-cuBLAS [--width W] [--init document|random] [--seed S] [--repeats R] [--cpu] [--json]\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --init KIND          'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "                       (default); 'document': M[y*W+x] = x + y*W, as the course text\n"
    "  --seed S             seed of the random data (default 1)\n"
    "  --repeats R          timed kernel launches after a warm-up (default 10)\n"
    "  --cpu                also time the CPU triple loop (MM-CPU) at this Width: slow\n"
    "  --json               also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, "MM-cuBLAS", USAGE);
    int W = (int)args.integer("--width", 1024, 1, MAX_WIDTH);
    // Random data by default: on it the check is exact, so any wrong index shows.
    // The document's data is checked only to within float rounding of its
    // large positive sums, which hides a wrong column a few places off.
    std::string init = args.text("--init", "random");
    unsigned seed = (unsigned)args.integer("--seed", 1, 0, 4294967295LL);
    int repeats = (int)args.integer("--repeats", 10, 1, 100000);
    bool run_cpu = args.flag("--cpu");
    bool json = args.flag("--json");
    args.done();
    if (init != "document" && init != "random") args.fail("--init must be 'document' or 'random'");
    size_t bytes = checked_bytes(args, (long long)W * W, sizeof(float), 1);

    check_matrices_fit_on_host(args, run_cpu ? 4 : 3, W);  // before the GPU: no device needed

    DeviceInfo dev = require_device("MM-cuBLAS");
    check_fits_on_device(args, 3 * bytes);
    print_device(dev);
    std::printf("MM-cuBLAS: Width %d, %s data, cublasSgemm in strict FP32 (CUBLAS_PEDANTIC_MATH)\n", W,
                init.c_str());
    cublasHandle_t handle = make_strict_fp32_handle();  // before the clock starts: a one-time cost

    float* M = (float*)host_alloc(args, bytes);
    float* N = (float*)host_alloc(args, bytes);
    float* P = (float*)host_alloc(args, bytes);
    if (init == "document") {
        fill_document(M, W);
        fill_document(N, W);
    } else {
        fill_random(M, W, seed);
        fill_random(N, W, seed + 1);
    }

    // End to end, as the document timed it: allocate, copy in, multiply, copy out.
    HostTimer end_to_end;
    float *dev_M, *dev_N, *dev_P;
    HANDLE_ERROR(cudaMalloc((void**)&dev_M, bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dev_N, bytes));
    HANDLE_ERROR(cudaMalloc((void**)&dev_P, bytes));
    HANDLE_ERROR(cudaMemset(dev_P, 0xFF, bytes));  // poison: an element never written reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_M, M, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_N, N, bytes, cudaMemcpyHostToDevice));
    matmul_cublas(handle, dev_M, dev_N, dev_P, W);
    HANDLE_ERROR(cudaMemcpy(P, dev_P, bytes, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();

    CheckResult check = check_product(M, N, P, W);

    // Kernel only: the same launch repeated, each timed with events.
    TimingStats kernel = time_gpu([&] { matmul_cublas(handle, dev_M, dev_N, dev_P, W); },
                                  repeats);
    double gflops = matmul_gflops(W, kernel.median_ms);
    std::printf("  %-28s %10.3f ms  (malloc + copies + kernel, one run)\n", "end to end", end_to_end_ms);
    print_matmul_timing("kernel only", kernel, W, dev.peak_fp32_gflops());

    double cpu_ms = NAN;  // the document's CPU baseline, on request
    if (run_cpu) cpu_ms = time_cpu_baseline(args, M, N, W, end_to_end_ms, kernel.median_ms);
    const char* result = check.passed() ? "PASS" : "FAIL";
    JsonRecord size, launch;
    size.add("width", W).add("flops", 2.0 * W * (double)W * W);
    launch.add("library", "cublasSgemm").add("math_mode", "CUBLAS_PEDANTIC_MATH");
    print_json(json, measurement("MM-cuBLAS", "sgemm-fp32", dev, kernel, NAN, gflops, result)
                         .add("size", size).add("launch", launch).add("init", init)
                         .add("end_to_end_ms", end_to_end_ms).add("cpu_ms", cpu_ms)
                         .add("cublas_gflops", gflops).add("ratio_to_cublas", 1.0));

    HANDLE_CUBLAS(cublasDestroy(handle));
    HANDLE_ERROR(cudaFree(dev_M));
    HANDLE_ERROR(cudaFree(dev_N));
    HANDLE_ERROR(cudaFree(dev_P));
    std::free(M);
    std::free(N);
    std::free(P);
    return verdict(check.passed(), describe(check));
}
#endif
