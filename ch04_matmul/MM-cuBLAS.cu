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
//  * Tensor Cores (--precision tf32 or bf16, the yardstick of MM-GPU-TC): the
//    same product through cublasGemmEx, which takes the types of A, B and C
//    and a "compute type" apart. TF32: float inputs, CUBLAS_COMPUTE_32F_FAST_TF32
//    (inputs rounded to TF32 on the Tensor Cores, FP32 sums). BF16: inputs of
//    type CUDA_R_16BF, CUBLAS_COMPUTE_32F (FP32 sums). Both are given M and N
//    converted once, by the same code as MM-GPU-TC (tensor_inputs.h), so that
//    the two multiply the very same numbers and their errors compare.
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
//   ./MM-cuBLAS --width 4096 --precision bf16 --data uniform   on the Tensor Cores
//   ./MM-cuBLAS --help                   every option

#include <cublas_v2.h>
#include "../common/handle_cublas.h"  // HANDLE_CUBLAS, the cuBLAS twin of HANDLE_ERROR
#include "../common/handle_error.h"
#include "../common/report.h"
#include "matrix.h"
#include "tensor_inputs.h"

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
void launch_matmul_cublas(cublasHandle_t handle, const float* dev_M, const float* dev_N,
                          float* dev_P, int Width) {
    const float alpha = 1.0f, beta = 0.0f;
    HANDLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, Width, Width,
                              Width,  // rows of op(A) and C, columns of C, inner dimension
                              &alpha, dev_N, Width, dev_M, Width, &beta, dev_P, Width));
}

// The same on the Tensor Cores: dev_A and dev_B are M and N converted for the
// precision (tensor_inputs.h: TF32 values in floats, or BF16), the sums FP32.
// Use a handle in the default math mode: the pedantic one above forbids the
// Tensor Core shortcuts that this call asks for.
void launch_matmul_cublas_tc(cublasHandle_t handle, Precision precision, const void* dev_A,
                             const void* dev_B, float* dev_P, int Width) {
    const float alpha = 1.0f, beta = 0.0f;
    cudaDataType input = precision == Precision::bf16 ? CUDA_R_16BF : CUDA_R_32F;
    cublasComputeType_t compute =
        precision == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    HANDLE_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, Width, Width, Width, &alpha, dev_B,
                               input, Width, dev_A, input, Width, &beta, dev_P, CUDA_R_32F, Width,
                               compute, CUBLAS_GEMM_DEFAULT));
}

#ifndef CUDA_EXAMPLES_NO_MAIN
// The handle for the precision, and what will run: the default math mode for
// the Tensor Cores, the strict FP32 one otherwise.
cublasHandle_t make_handle(Precision precision) {
    bool fp32 = precision == Precision::fp32;
    std::printf(fp32 ? "cublasSgemm in strict %s (CUBLAS_PEDANTIC_MATH)\n"
                     : "cublasGemmEx, %s inputs, FP32 sums\n",
                fp32 ? "FP32" : precision_name(precision));
    if (fp32) return make_strict_fp32_handle();
    cublasHandle_t handle;
    HANDLE_CUBLAS(cublasCreate(&handle));
    return handle;
}

// A device copy of `n` floats converted for the Tensor Cores (`bytes` of them).
void* converted_copy(Precision precision, const float* dev_in, size_t n, size_t bytes) {
    void* dev_out;
    HANDLE_ERROR(cudaMalloc(&dev_out, bytes));
    convert_inputs(precision, dev_in, dev_out, n);
    return dev_out;
}

// Kernel only: the same launch repeated, each timed with events. On the
// Tensor Cores the rate is no share of the FP32 peak: its ceiling is the
// Tensor Cores' peak at that precision (common/device_info.h).
template <typename Multiply>
TimingStats time_multiply(Report& report, Precision precision, double flops, Multiply multiply) {
    if (precision == Precision::fp32)
        return report.compute("sgemm-fp32", "kernel only", flops, multiply);
    TimingStats kernel = time_gpu(multiply, report.repeats());
    bool tf32 = precision == Precision::tf32;
    report.record(tf32 ? "gemm-tf32" : "gemm-bf16", "kernel only", kernel, NAN,
                  flops / (kernel.median_ms * 1e6), NAN, nullptr, tf32 ? "tf32" : "bf16");
    return kernel;
}

const char* USAGE =
    "usage: MM-cuBLAS [--precision fp32|tf32|bf16] [--width W] [--data random|uniform|document]\n"
    "                 [--seed S] [--repeats R] [--cpu] [--json]\n"
    "  --precision P        'fp32': strict FP32 (default); 'tf32', 'bf16': inputs in that\n"
    "                       format on the Tensor Cores, FP32 sums (compute capability 8.0+)\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --data KIND          'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "                       (default); 'uniform': uniform in [-1, 1], which shows the\n"
    "                       error of rounded inputs; 'document': M[y*W+x] = x + y*W\n"
    "  --seed S             seed of the random data (default 1)\n"
    "  --repeats R          timed kernel launches after a warm-up (default 10)\n"
    "  --cpu                also time the CPU triple loop (MM-CPU) at this Width: slow\n"
    "  --json               also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    MatrixRun run = read_matrix_run(args, "random", true, true);  // --width, --data, ...
    Precision precision = read_precision(args, "fp32", true);
    bool tensor_cores = precision != Precision::fp32;
    Report report(args, 10);
    int W = run.W;
    size_t n = (size_t)W * W, bytes = run.bytes, guarded = run.guarded_bytes();  // P: + a guard
    size_t converted = tensor_cores ? input_bytes(precision, W) : 0;             // M or N converted
    report.start(2 * bytes + 2 * converted + guarded, 0);
    if (tensor_cores) require_tensor_cores(report.device(), args.program());
    report_matrix_run(report, run);  // cuBLAS picks its own launch: no launch figures
    if (tensor_cores) report.size("precision", precision_name(precision));
    cublasHandle_t handle = make_handle(precision);  // before the clock starts: a one-time cost
    float* M = (float*)host_alloc(args, bytes);
    float* N = (float*)host_alloc(args, bytes);
    float* P = (float*)host_alloc(args, guarded);
    fill_inputs(M, N, run);
    // End to end, as the original timed it: allocate, copy in, multiply, copy out.
    HostTimer end_to_end;
    float *dev_M, *dev_N, *dev_P;
    HANDLE_ERROR(cudaMalloc(&dev_M, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_N, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_P, guarded));
    HANDLE_ERROR(cudaMemset(dev_P, 0xFF, guarded));  // poison: an unwritten element reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_M, M, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_N, N, bytes, cudaMemcpyHostToDevice));
    void *dev_A = nullptr, *dev_B = nullptr;  // M and N converted for the Tensor Cores
    auto multiply = [&] {
        if (tensor_cores)
            launch_matmul_cublas_tc(handle, precision, dev_A, dev_B, dev_P, W);
        else
            launch_matmul_cublas(handle, dev_M, dev_N, dev_P, W);
    };
    if (tensor_cores) dev_A = converted_copy(precision, dev_M, n, converted);
    if (tensor_cores) dev_B = converted_copy(precision, dev_N, n, converted);
    multiply();
    HANDLE_ERROR(cudaMemcpy(P, dev_P, guarded, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();
    report.note("end to end (malloc + copies + kernel)", "end_to_end_ms", end_to_end_ms);
    // Against the double product of the unrounded M and N (matrix.h), with the
    // rounding of the inputs, if any, in the tolerance.
    CheckResult check = check_product(M, N, P, W, 7, unit_roundoff(precision));
    check_guard(P, W, &check);  // P[W * W] must still hold the poison

    TimingStats kernel = time_multiply(report, precision, run.flops(), multiply);
    report_relative_error(report, check);
    report_cpu_baseline(report, args, run, M, N, end_to_end_ms, kernel);

    HANDLE_CUBLAS(cublasDestroy(handle));
    HANDLE_ERROR(cudaFree(dev_M));
    HANDLE_ERROR(cudaFree(dev_N));
    HANDLE_ERROR(cudaFree(dev_P));
    HANDLE_ERROR(cudaFree(dev_A));  // (nullptr in FP32: nothing to free)
    HANDLE_ERROR(cudaFree(dev_B));
    std::free(M);
    std::free(N);
    std::free(P);
    return report.verdict(check.passed(), "%s", describe(check).c_str());
}
#endif
