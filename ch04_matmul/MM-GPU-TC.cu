// MM-GPU-TC.cu -- Tensor Cores: a warp, not a thread, owns a tile of P (chapter 4, last step).
// Source: none; the step after "GPU Programming" (CSInParallel, 2012), chapter 4.
//
// MM-GPU-RT keeps the FP32 lanes busy, but since Volta most of a GPU's
// arithmetic is elsewhere: in its Tensor Cores, units that multiply whole
// small matrices. One instruction, issued by a whole warp together, computes
//   D (16 x 16) = A (16 x K) x B (K x 16) + C (16 x 16)
// with the sums C and D in FP32 and the inputs A and B in a shorter format:
// TF32 (K = 8) or BF16 (K = 16) here (tensor_inputs.h says what they keep).
// CUDA exposes this as the warp-level matrix API, nvcuda::wmma: a "fragment"
// is a tile held in the registers of a warp's 32 threads together, spread
// over them in a layout the hardware chooses and the program never sees. A
// warp loads fragments (load_matrix_sync), multiplies them (mma_sync) and
// stores the sums (store_matrix_sync): all three are called by all 32 threads.
//
// What changed from MM-GPU-SM: the block still stages a slice of M and a
// slice of N in shared memory and steps through Width; but its 4 warps each
// own a 64 x 64 part of the block's 128 x 128 tile of P -- 4 x 4 fragments
// of 16 x 16 sums -- and each step is a few mma_sync per warp instead of a
// multiply-add per thread. Three more things keep the Tensor Cores fed:
//  * the slices are copied with cp.async (__pipeline_memcpy_async): global to
//    shared memory without passing through registers, in the background, so
//    that the next STAGES - 1 slices arrive while the warps multiply this one;
//  * fragments are loaded from shared memory with loads that say so (the
//    .shared state space; load_from_shared below says why);
//  * M and N are converted to the input format once, before the kernel (and
//    outside its timing), so the loop moves half the bytes in BF16 and never
//    converts. The check compares with the double product of the UNROUNDED
//    M and N: the rounding of the inputs is part of the error it measures.
// Any Width >= 1 works: slices are zero-filled past the edge, and fragments
// that stick out of P are written through shared memory, element by element.
//
// Standalone build, from this folder (TF32 and BF16 Tensor Cores: sm_80 or newer):
//   nvcc -std=c++17 -O2 -arch=sm_80 -o MM-GPU-TC MM-GPU-TC.cu -lcublas
// (-arch=sm_90 on an H100/H200 for the full speed; -DTC_BM=64 ... to try other tiles.)
// Run:
//   ./MM-GPU-TC --width 4096 --precision tf32 --compare-cublas
//   ./MM-GPU-TC --width 4096 --precision bf16 --data uniform   the error of BF16 inputs
//   ./MM-GPU-TC --help                   every option

#include <cuda_pipeline.h>  // __pipeline_memcpy_async: cp.async
#include <mma.h>            // nvcuda::wmma: the warp-level matrix API
#include <type_traits>
#include "../common/handle_error.h"
#include "../common/report.h"
#include "cublas_yardstick.h"
#include "matrix.h"
#include "tensor_inputs.h"

using namespace nvcuda;

// The tiles, compile-time constants (the fragments and shared arrays need
// them), each overridable with -D to try another shape.
#ifndef TC_BM
#define TC_BM 128  // rows of P per block
#endif
#ifndef TC_BN
#define TC_BN 128  // columns of P per block
#endif
#ifndef TC_BK
#define TC_BK 32  // the slice of Width staged in shared memory per step
#endif
#ifndef TC_WARPS_M
#define TC_WARPS_M 2  // warps down the block's tile...
#endif
#ifndef TC_WARPS_N
#define TC_WARPS_N 2  // ...and across it: 4 warps, each owning a 64 x 64 part
#endif
#ifndef TC_STAGES
#define TC_STAGES 3  // slices in flight: one multiplied, the next ones arriving
#endif
#ifndef TC_MIN_BLOCKS
#define TC_MIN_BLOCKS 2  // blocks per multiprocessor to fit registers for (__launch_bounds__)
#endif
const int BM = TC_BM, BN = TC_BN, BK = TC_BK, STAGES = TC_STAGES;
const int WARPS_M = TC_WARPS_M, WARPS_N = TC_WARPS_N;
const int WM = BM / WARPS_M, WN = BN / WARPS_N;  // one warp's part of the tile
const int FRAGS_M = WM / 16, FRAGS_N = WN / 16;  // its 16 x 16 fragments of sums
const int THREADS_PER_BLOCK = 32 * WARPS_M * WARPS_N;
static_assert(WM % 16 == 0 && WN % 16 == 0 && FRAGS_M >= 1 && FRAGS_N >= 1,
              "a warp's part must be whole 16 x 16 fragments");
static_assert(BK % 16 == 0 && STAGES >= 2, "BK: whole BF16 steps of 16; at least 2 stages");

// The slices in shared memory, row by row, each row padded: A's BM x BK slice
// by 16 bytes, B's BK x BN slice by 8 elements. Unpadded, the rows are a
// multiple of 128 bytes long, so the rows that a fragment load reads at once
// would all start in the same bank and be served one after another. The
// padding also keeps every fragment on 32 bytes, as wmma requires.
template <typename T>
__host__ __device__ constexpr int a_stride() {
    return BK + 16 / (int)sizeof(T);
}
template <typename T>
__host__ __device__ constexpr int b_stride() {
    return BN + 8;
}
template <typename T>
__host__ __device__ constexpr int stage_elements() {  // one slice of A and one of B
    return BM * a_stride<T>() + BK * b_stride<T>();
}

// 16 bytes of a W x W matrix X, from X[row][col] on, into shared memory at
// dst, element by element, with zeros outside the matrix: for the slices that
// stick out past an edge of the matrices, or whose rows do not start on 16
// bytes (W not a multiple of 4 floats or 8 BF16s).
template <typename T>
__device__ void copy_16_bytes_at_edge(T* dst, const T* X, int row, int col, int W) {
    for (int i = 0; i < 16 / (int)sizeof(T); i++)
        dst[i] = (row < W && col + i < W) ? X[row * W + col + i] : T(0.0f);
}

// One step's slices into one stage: A[row0.., k0..] (BM x BK) and
// B[k0.., col0..] (BK x BN), in copies of 16 bytes spread over the block's
// threads. Inside the matrices -- all but the edge blocks and the last partial
// slice -- each copy is one cp.async (__pipeline_memcpy_async): global to
// shared memory without passing through registers, in the background.
template <typename T>
__device__ void load_slices(const T* A, const T* B, T* stage, int row0, int col0, int k0, int W) {
    const int VEC = 16 / sizeof(T);                // elements per copy
    const int A_ROW = BK / VEC, B_ROW = BN / VEC;  // copies per row of a slice
    const int COPIES_A = BM * A_ROW / THREADS_PER_BLOCK, COPIES_B = BK * B_ROW / THREADS_PER_BLOCK;
    static_assert(BM * A_ROW % THREADS_PER_BLOCK == 0 && BK * B_ROW % THREADS_PER_BLOCK == 0,
                  "every thread makes the same number of copies");
    T* As = stage;
    T* Bs = stage + BM * a_stride<T>();
    if (row0 + BM <= W && col0 + BN <= W && k0 + BK <= W && W % VEC == 0) {
#pragma unroll
        for (int i = 0; i < COPIES_A; i++) {
            int c = threadIdx.x + i * THREADS_PER_BLOCK, r = c / A_ROW, k = c % A_ROW * VEC;
            __pipeline_memcpy_async(&As[r * a_stride<T>() + k], &A[(row0 + r) * W + k0 + k], 16);
        }
#pragma unroll
        for (int i = 0; i < COPIES_B; i++) {
            int c = threadIdx.x + i * THREADS_PER_BLOCK, r = c / B_ROW, n = c % B_ROW * VEC;
            __pipeline_memcpy_async(&Bs[r * b_stride<T>() + n], &B[(k0 + r) * W + col0 + n], 16);
        }
    } else {
        for (int c = threadIdx.x; c < COPIES_A * THREADS_PER_BLOCK; c += THREADS_PER_BLOCK) {
            int r = c / A_ROW, k = c % A_ROW * VEC;
            copy_16_bytes_at_edge(&As[r * a_stride<T>() + k], A, row0 + r, k0 + k, W);
        }
        for (int c = threadIdx.x; c < COPIES_B * THREADS_PER_BLOCK; c += THREADS_PER_BLOCK) {
            int r = c / B_ROW, n = c % B_ROW * VEC;
            copy_16_bytes_at_edge(&Bs[r * b_stride<T>() + n], B, k0 + r, col0 + n, W);
        }
    }
}

// wmma::load_matrix_sync, for a tile in shared memory. The API takes a
// generic pointer, one that may point anywhere, and for TF32 and BF16
// fragments nvcc 13 does not find out that it points into shared memory: each
// fragment then becomes 4 generic 32-bit loads (and, for BF16's B, 4 register
// transposes), where the instruction made for it, ldmatrix, loads a whole
// BF16 fragment at once. This is the same wmma load, written in PTX with its
// state space, .shared, spelled out; the fragment, its 4 registers a thread
// and their layout are wmma's (the PTX manual: "wmma.load"). Build with
// -DTC_GENERIC_LOADS=1 to measure the difference.
template <typename Use, int LD, typename T, typename Fragment>
__device__ void load_from_shared(Fragment& f, const T* tile) {
#if TC_GENERIC_LOADS
    wmma::load_matrix_sync(f, tile, LD);
#else
    unsigned address = (unsigned)__cvta_generic_to_shared(tile);
    unsigned* r = reinterpret_cast<unsigned*>(f.x);  // 4 registers: 8 BF16s or 4 TF32s
    // (LD, the row stride, is a constant, "n": the addresses of the rows a thread
    // reads are then offsets the instructions carry, not arithmetic.)
    constexpr bool a = std::is_same_v<Use, wmma::matrix_a>, tf32 = std::is_same_v<T, float>;
    if constexpr (a && tf32)
        asm volatile("wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address), "n"(LD)
                     : "memory");
    else if constexpr (tf32)
        asm volatile("wmma.load.b.sync.aligned.row.m16n16k8.shared.tf32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address), "n"(LD)
                     : "memory");
    else if constexpr (a)
        asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address), "n"(LD)
                     : "memory");
    else
        asm volatile("wmma.load.b.sync.aligned.row.m16n16k16.shared.bf16 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address), "n"(LD)
                     : "memory");
#endif
}

// P = A x B for W x W matrices whose inputs are T: float holding TF32 values
// (already rounded), or __nv_bfloat16. P is FP32.
// __launch_bounds__: at most THREADS_PER_BLOCK threads, and registers for
// TC_MIN_BLOCKS blocks on each multiprocessor. A warp's 16 fragments of sums
// take 128 registers a thread, its fragments of A and B 32 more: about 220
// in all, which 2 blocks of 4 warps still fit (65536 a multiprocessor), so
// that one block's warps multiply while the other's wait at a barrier.
template <typename T>
__global__ void __launch_bounds__(THREADS_PER_BLOCK, TC_MIN_BLOCKS)
    matmul_tc(const T* A, const T* B, float* P, int W) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    // Built for a GPU older than Ampere: it has no TF32 or BF16 Tensor Cores,
    // and main() refuses to launch there (require_tensor_cores).
#else
    // What one mma_sync takes: TF32 16 x 8 x 16, BF16 16 x 16 x 16.
    using Input = std::conditional_t<std::is_same_v<T, float>, wmma::precision::tf32, T>;
    constexpr int MMA_K = std::is_same_v<T, float> ? 8 : 16;
    constexpr int LDA = a_stride<T>(), LDB = b_stride<T>();

    // STAGES x (a slice of A, a slice of B)
    extern __shared__ __align__(128) unsigned char shared[];

    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;                  // the block's tile of P
    int warp_row = warp / WARPS_N * WM, warp_col = warp % WARPS_N * WN;  // my part of it

    // My sums: FRAGS_M x FRAGS_N fragments, in the registers of my warp.
    wmma::fragment<wmma::accumulator, 16, 16, MMA_K, float> sum[FRAGS_M][FRAGS_N];
#pragma unroll
    for (int i = 0; i < FRAGS_M; i++)
#pragma unroll
        for (int j = 0; j < FRAGS_N; j++) wmma::fill_fragment(sum[i][j], 0.0f);

    // Rounded up: a partial last slice is zero-filled past Width.
    int steps = (W + BK - 1) / BK;
    // Start the copies of the first STAGES - 1 slices, one commit group each.
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < steps)
            load_slices(A, B, (T*)shared + s * stage_elements<T>(), row0, col0, s * BK, W);
        __pipeline_commit();
    }
    for (int step = 0; step < steps; step++) {
        // Wait until my copies of this step's slices have landed (all but the
        // newest STAGES - 2 groups are done)...
        __pipeline_wait_prior(STAGES - 2);
        // ...and everyone's. The barrier also says that every warp is done with
        // the previous step's stage, which the next lines refill.
        __syncthreads();
        int next = step + STAGES - 1;
        if (next < steps)
            load_slices(A, B, (T*)shared + next % STAGES * stage_elements<T>(), row0, col0,
                        next * BK, W);
        __pipeline_commit();  // (an empty group at the end keeps the count simple)

        const T* As = (const T*)shared + step % STAGES * stage_elements<T>();
        const T* Bs = As + BM * LDA;
#pragma unroll
        for (int k = 0; k < BK; k += MMA_K) {
            // My warp's rows of A's slice and columns of B's, as fragments...
            wmma::fragment<wmma::matrix_a, 16, 16, MMA_K, Input, wmma::row_major> a[FRAGS_M];
            wmma::fragment<wmma::matrix_b, 16, 16, MMA_K, Input, wmma::row_major> b[FRAGS_N];
#pragma unroll
            for (int i = 0; i < FRAGS_M; i++)
                load_from_shared<wmma::matrix_a, LDA>(a[i], &As[(warp_row + 16 * i) * LDA + k]);
#pragma unroll
            for (int j = 0; j < FRAGS_N; j++)
                load_from_shared<wmma::matrix_b, LDB>(b[j], &Bs[k * LDB + warp_col + 16 * j]);
                // ...and their outer product: FRAGS_M x FRAGS_N Tensor Core operations.
#pragma unroll
            for (int i = 0; i < FRAGS_M; i++)
#pragma unroll
                for (int j = 0; j < FRAGS_N; j++) wmma::mma_sync(sum[i][j], a[i], b[j], sum[i][j]);
        }
    }

    // Write the sums. A fragment inside P goes straight there (store_matrix_sync
    // needs its rows to start on 16 bytes: W a multiple of 4). One that sticks
    // out past the edge goes through 1 KB of shared memory of my warp's own,
    // from where its elements inside P are copied one by one.
    __syncthreads();  // every warp is done with the stages: they become scratch
    float* scratch = reinterpret_cast<float*>(shared) + warp * 16 * 16;
#pragma unroll
    for (int i = 0; i < FRAGS_M; i++) {
#pragma unroll
        for (int j = 0; j < FRAGS_N; j++) {
            int row = row0 + warp_row + 16 * i, col = col0 + warp_col + 16 * j;
            if (row + 16 <= W && col + 16 <= W && W % 4 == 0) {
                wmma::store_matrix_sync(&P[row * W + col], sum[i][j], W, wmma::mem_row_major);
            } else {
                wmma::store_matrix_sync(scratch, sum[i][j], 16, wmma::mem_row_major);
                __syncwarp();  // the fragment is in scratch, whichever lane wrote what
                for (int e = lane; e < 16 * 16; e += 32) {
                    int r = row + e / 16, c = col + e % 16;
                    if (r < W && c < W) P[r * W + c] = scratch[e];
                }
                __syncwarp();  // read before the next fragment overwrites it
            }
        }
    }
#endif
}

// The shared memory of one block, in bytes: STAGES stages of slices (at least
// the 1 KB per warp of the last lines of the kernel).
template <typename T>
size_t shared_bytes_tc() {
    size_t stages = (size_t)STAGES * stage_elements<T>() * sizeof(T);
    size_t scratch = (size_t)THREADS_PER_BLOCK / 32 * 16 * 16 * sizeof(float);
    return stages > scratch ? stages : scratch;
}

// The launch shared by main() below and by tests/ch04_matmul: one block of
// 4 warps per 128 x 128 tile of P, the grid rounded up. dev_A and dev_B are M
// and N already converted (tensor_inputs.h: convert_inputs).
template <typename T>
void launch_matmul_tc(const T* dev_A, const T* dev_B, float* dev_P, int Width) {
    size_t shared = shared_bytes_tc<T>();
    // Beyond 48 KB of shared memory a block must ask for it.
    HANDLE_ERROR(cudaFuncSetAttribute(matmul_tc<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)shared));
    dim3 blocks(ceil_div(Width, BN), ceil_div(Width, BM));
    matmul_tc<T><<<blocks, THREADS_PER_BLOCK, shared>>>(dev_A, dev_B, dev_P, Width);
    CHECK_LAUNCH();
}

// The same, with the precision chosen at run time.
void launch_matmul_tc(Precision precision, const void* dev_A, const void* dev_B, float* dev_P,
                      int Width) {
    if (precision == Precision::tf32)
        launch_matmul_tc((const float*)dev_A, (const float*)dev_B, dev_P, Width);
    else
        launch_matmul_tc((const __nv_bfloat16*)dev_A, (const __nv_bfloat16*)dev_B, dev_P, Width);
}

// A build without code for compute capability 8.0 or newer (an architecture
// list of older GPUs only) would run the empty kernel above through the
// driver's compiler: refuse, with the reason, as on an older GPU (exit 77).
inline void require_tensor_core_build(const char* program) {
    cudaFuncAttributes attributes;
    HANDLE_ERROR(cudaFuncGetAttributes(&attributes, matmul_tc<float>));
    if (attributes.ptxVersion >= 80) return;
    std::printf(
        "%s: built for compute capability %d.%d only; TF32 and BF16 Tensor Cores need "
        "8.0 or newer: rebuild with -arch=sm_80 (or -arch=native)\n",
        program, attributes.ptxVersion / 10, attributes.ptxVersion % 10);
    std::exit(EXIT_CODE_NO_DEVICE);
}

#ifndef CUDA_EXAMPLES_NO_MAIN
// Kernel only: the same launch repeated, each timed with events. Its rate is
// not a share of the FP32 peak (the Tensor Cores are not FP32 lanes): its
// ceiling is the Tensor Cores' peak at that precision (common/device_info.h),
// and the tour compares it with cuBLAS at the same precision (scripts/ceilings.cu).
// Then the conversion, timed apart: once per product, not per launch.
TimingStats time_kernel_and_conversion(Report& report, Precision precision, const float* dev_M,
                                       const float* dev_N, void* dev_A, void* dev_B, float* dev_P,
                                       int W) {
    TimingStats kernel =
        time_gpu([&] { launch_matmul_tc(precision, dev_A, dev_B, dev_P, W); }, report.repeats());
    bool tf32 = precision == Precision::tf32;
    report.record(tf32 ? "tc-tf32" : "tc-bf16", "kernel only", kernel, NAN,
                  2.0 * W * (double)W * W / (kernel.median_ms * 1e6), NAN, nullptr,
                  tf32 ? "tf32" : "bf16");
    size_t n = (size_t)W * W;
    TimingStats conversion = time_gpu(
        [&] {
            convert_inputs(precision, dev_M, dev_A, n);
            convert_inputs(precision, dev_N, dev_B, n);
        },
        report.repeats());
    report.note("conversion of M and N (once)", "convert_ms", conversion.median_ms);
    return kernel;
}

// The lesson: the Tensor Cores multiply faster than any FP32 kernel can, the
// vendor's included -- cuBLAS SGEMM in strict FP32 on the same matrices (the
// FP32 yardstick of MM-GPU-RT, 51 TFLOP/s on an H200), timed in this run.
// Below Width 2048 the product does not fill the GPU's Tensor Cores.
void check_tensor_core_lesson(Report& report, Precision precision, const float* dev_M,
                              const float* dev_N, float* dev_P, int W, const TimingStats& kernel) {
    if (W < 2048) return report.lesson_not_checked("use --width 2048 or more");
    TimingStats sgemm =
        time_cublas_yardstick(Precision::fp32, dev_M, dev_N, dev_P, W, report.repeats());
    // H200 at Width 4096: TF32 2.68 and BF16 6.26 times SGEMM (the tour's log: 137
    // and 321 TFLOP/s against 51.3), 3.06 and 7.14 times MM-GPU-RT (3 runs).
    // At least 1.5 (TF32) and 3 (BF16): room for a busy machine, while a kernel
    // that misses the Tensor Cores' rate by half shows.
    report.lesson(
        std::string(precision_name(precision)) + " Tensor Cores over FP32 cuBLAS: speed-up",
        sgemm.median_ms / kernel.median_ms, precision == Precision::tf32 ? 1.5 : 3.0);
}

const char* USAGE =
    "usage: MM-GPU-TC [--precision tf32|bf16] [--width W] [--data random|uniform|document]\n"
    "                 [--seed S] [--repeats R] [--cpu] [--compare-cublas] [--json]\n"
    "  --precision P        the inputs' format on the Tensor Cores: 'tf32' (default), 'bf16'\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --data KIND          'random': odd multiples of 1/8 in [-1, 1], exact in TF32 and\n"
    "                       BF16 too, checked exactly (default); 'uniform': uniform in\n"
    "                       [-1, 1], which shows the error of rounded inputs;\n"
    "                       'document': M[y*W+x] = x + y*W, as the original\n"
    "  --seed S             seed of the random data (default 1)\n"
    "  --repeats R          timed kernel launches after a warm-up (default 10)\n"
    "  --cpu                also time the CPU triple loop (MM-CPU) at this Width: slow\n"
    "  --compare-cublas     also time cuBLAS on the same inputs and print the ratio\n"
    "  --json               also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    MatrixRun run = read_matrix_run(args, "random", true, true);  // --width, --data, ...
    Precision precision = read_precision(args, "tf32", false);
    bool compare = args.flag("--compare-cublas");
    Report report(args, 10);
    int W = run.W;
    size_t n = (size_t)W * W, bytes = run.bytes, guarded = run.guarded_bytes();
    size_t converted = input_bytes(precision, W);  // one of M and N in the input format
    report.start(2 * bytes + 2 * converted + guarded, 0);
    require_tensor_cores(report.device(), args.program());
    require_tensor_core_build(args.program());
    long long blocks = (long long)ceil_div(W, BN) * ceil_div(W, BM);
    report_matrix_run(report, run)
        .size("precision", precision_name(precision))
        .launch(blocks, THREADS_PER_BLOCK);
    float* M = (float*)host_alloc(args, bytes);
    float* N = (float*)host_alloc(args, bytes);
    float* P = (float*)host_alloc(args, guarded);
    fill_inputs(M, N, run);
    // End to end, as the original timed it: allocate, copy in, convert, multiply, copy out.
    HostTimer end_to_end;
    float *dev_M, *dev_N, *dev_P;
    void *dev_A, *dev_B;  // M and N in the input format
    HANDLE_ERROR(cudaMalloc(&dev_M, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_N, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_A, converted));
    HANDLE_ERROR(cudaMalloc(&dev_B, converted));
    HANDLE_ERROR(cudaMalloc(&dev_P, guarded));
    HANDLE_ERROR(cudaMemset(dev_P, 0xFF, guarded));  // poison: an unwritten element reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_M, M, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_N, N, bytes, cudaMemcpyHostToDevice));
    convert_inputs(precision, dev_M, dev_A, n);
    convert_inputs(precision, dev_N, dev_B, n);
    launch_matmul_tc(precision, dev_A, dev_B, dev_P, W);
    HANDLE_ERROR(cudaMemcpy(P, dev_P, guarded, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();
    report.note("end to end (with the conversion)", "end_to_end_ms", end_to_end_ms);
    // Against the double product of the unrounded M and N, with the rounding of
    // the inputs in the tolerance (matrix.h: check_tolerance, frobenius_tolerance).
    CheckResult check = check_product(M, N, P, W, 7, unit_roundoff(precision));
    check_guard(P, W, &check);  // P[W * W] must still hold the poison

    TimingStats kernel =
        time_kernel_and_conversion(report, precision, dev_M, dev_N, dev_A, dev_B, dev_P, W);
    report_relative_error(report, check);
    report_cpu_baseline(report, args, run, M, N, end_to_end_ms, kernel);
    report_cublas_yardstick(report, compare, dev_A, dev_B, dev_P, W, kernel, precision);
    check_tensor_core_lesson(report, precision, dev_M, dev_N, dev_P, W, kernel);  // overwrites P

    HANDLE_ERROR(cudaFree(dev_M));
    HANDLE_ERROR(cudaFree(dev_N));
    HANDLE_ERROR(cudaFree(dev_A));
    HANDLE_ERROR(cudaFree(dev_B));
    HANDLE_ERROR(cudaFree(dev_P));
    std::free(M);
    std::free(N);
    std::free(P);
    return report.verdict(check.passed(), "%s", describe(check).c_str());
}
#endif
