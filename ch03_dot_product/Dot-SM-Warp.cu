// Dot-SM-Warp.cu -- the dot product at the speed of memory (chapter 3, step 3 of 3).
//
// The next step after Dot-SM, beyond the original. Three changes:
//  1. No 32-block cap: the grid is sized from the device (as many blocks as
//     its multiprocessors keep resident), so every SM has work and enough
//     loads are in flight to keep the memory busy.
//  2. Warp shuffles: the 32 threads of a warp add their sums through
//     __shfl_down_sync, register to register, with no shared memory and no
//     __syncthreads(); shared memory is only used to pass one value per warp.
//     A block size that is any multiple of 32 works, not only powers of two.
//  3. The final sum stays on the GPU: a second, one-block launch adds the
//     per-block partial sums, so the answer is ready on the device.
// Each thread also reads 16 bytes at a time (float4): fewer, wider loads.
//
// Then it asks a vendor library for the same dot product -- CUB, which ships
// with the CUDA toolkit -- and prints both speeds and their ratio.
//
// Source: "GPU Programming" (CSInParallel, 2012), chapter 3, beyond Dot-SM.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o Dot-SM-Warp Dot-SM-Warp.cu
// Run:
//   ./Dot-SM-Warp                 N = 2^28, the original's data, grid sized from the GPU
//   ./Dot-SM-Warp --data random   +-1/8 ... +-7/8 at random, both signs, checked exactly
//   ./Dot-SM-Warp --help          every option

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <string>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "dot.h"

const int WARP_SIZE = 32;
[[maybe_unused]] const unsigned FULL_WARP = 0xffffffffu;  // all 32 lanes take part in a shuffle
// ([[maybe_unused]]: the lab's skeleton, scripts/lab.py make ch03, leaves warp_sum to write)
const int SECOND_PASS_THREADS = 1024;

// The sum of `v` over the 32 lanes of a warp, in 5 steps: each lane adds the
// value of the lane `offset` places above it (16, 8, 4, 2, 1). Lane 0 ends
// with the total. No barrier: the lanes of a warp step through a shuffle together.
__device__ float warp_sum(float v) {
    // LAB ch03.warp-sum {
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_WARP, v, offset);
    // LAB }
    return v;
}

// The sum of `v` over the block; thread 0 ends with the total. blockDim.x must
// be a multiple of 32 (whole warps): a full-warp shuffle needs all 32 lanes.
__device__ float block_sum(float v) {
    // LAB ch03.block-sum {
    __shared__ float warp_sums[WARP_SIZE];  // at most 1024 / 32 = 32 warps
    int lane = threadIdx.x % WARP_SIZE;
    int warp = threadIdx.x / WARP_SIZE;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();  // every warp's sum is written before warp 0 reads them
    if (warp == 0) {
        int warps = blockDim.x / WARP_SIZE;
        v = warp_sum(lane < warps ? warp_sums[lane] : 0.0f);
    }
    return v;
    // LAB }
}

// Pass 1: each block writes the sum of its threads' products to partial[blockIdx.x].
// a and b must be 16-byte aligned (cudaMalloc gives 256) to be read as float4.
__global__ void dot_warp(const float* a, const float* b, float* partial, long long n) {
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    long long n4 = n / 4;  // whole groups of four
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    float sum = 0;
    for (long long k = i; k < n4; k += stride) {
        float4 x = a4[k], y = b4[k];
        sum += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
    }
    // The last n % 4 elements (at most 3), one each for the first threads.
    if (i < n - 4 * n4) sum += a[4 * n4 + i] * b[4 * n4 + i];

    sum = block_sum(sum);
    if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// Pass 2: one block adds the `count` partial sums and writes the answer.
// k is 64-bit: --blocks may be up to 2^31 - 1, and in an int the last
// k + blockDim.x would pass 2^31 - 1 and overflow (undefined behaviour).
__global__ void sum_partials(const float* partial, int count, float* result) {
    float sum = 0;
    for (long long k = threadIdx.x; k < count; k += blockDim.x) sum += partial[k];
    sum = block_sum(sum);
    if (threadIdx.x == 0) *result = sum;
}

// The launch shared by main() below and by tests/ch03_dot_product: both
// passes, the answer in dev_result[0]. dev_partial must hold `blocks` floats.
//
// Why a second pass and not atomicAdd(result, block_sum) from every block?
// Atomics finish in whatever order the blocks do, and float addition is not
// associative, so the answer would change in its last bits from run to run;
// they also need result zeroed before every launch. The second launch costs a
// few microseconds, and the answer is the same every time on the same GPU.
void launch_dot_warp(const float* dev_a, const float* dev_b, float* dev_partial, float* dev_result,
                     long long n, int blocks, int threads) {
    dot_warp<<<blocks, threads>>>(dev_a, dev_b, dev_partial, n);
    CHECK_LAUNCH();
    sum_partials<<<1, SECOND_PASS_THREADS>>>(dev_partial, blocks, dev_result);
    CHECK_LAUNCH();
}

// The grid sized from the device: the blocks its SMs keep resident at once,
// but no more than there are groups of four elements to go around.
int dot_warp_blocks(long long n, int threads) {
    return (int)std::min<long long>(ceil_div(ceil_div(n, 4), threads),
                                    blocks_to_fill_gpu(dot_warp, threads));
}

// The longest chain of float roundings a product goes through: the product,
// three additions inside its float4, one per later turn of the thread's loop,
// the tail, the warp (5 levels) and block (5) trees, then pass 2's loop and trees.
long long dot_warp_rounding_depth(long long n, long long blocks, int threads) {
    long long loop_turns = ceil_div(n / 4, blocks * threads);
    return 1 + 3 + loop_turns + 1 + 10 + ceil_div(blocks, SECOND_PASS_THREADS) + 10;
}

// The vendor's dot product: CUB's DeviceReduce::TransformReduce adds up
// product(i) = a[i] * b[i] for i = 0 .. n-1 in one fused pass. It needs
// scratch memory; the first call (temp == nullptr) only says how much.
struct Product {
    const float* a;
    const float* b;
    __device__ float operator()(long long i) const { return a[i] * b[i]; }
};

size_t cub_dot_temp_bytes(long long n) {
    size_t bytes = 0;
    HANDLE_ERROR(cub::DeviceReduce::TransformReduce(
        nullptr, bytes, thrust::counting_iterator<long long>(0), (float*)nullptr, n,
        cuda::std::plus<float>(), Product{nullptr, nullptr}, 0.0f));
    return bytes;
}

void cub_dot(const float* dev_a, const float* dev_b, float* dev_result, long long n, void* dev_temp,
             size_t temp_bytes) {
    HANDLE_ERROR(cub::DeviceReduce::TransformReduce(
        dev_temp, temp_bytes, thrust::counting_iterator<long long>(0), dev_result, n,
        cuda::std::plus<float>(), Product{dev_a, dev_b}, 0.0f));
    CHECK_LAUNCH();
}

// How close ours comes to the vendor's: CUB's dot product from the same
// inputs (checked against the same reference, recorded, not part of the
// verdict), and a device-to-device copy of the same bytes as a yardstick of
// what this memory can do. Ours took `ours`; prints the ratio.
void compare_with_cub(Report& report, const DotData& data, const float* dev_a, float* dev_b,
                      long long depth, const TimingStats& ours) {
    size_t bytes = data.n * sizeof(float), temp_bytes = cub_dot_temp_bytes(data.n);
    float *dev_result, cub_sum = 0;
    void* dev_temp;
    HANDLE_ERROR(cudaMalloc(&dev_result, sizeof(float)));
    HANDLE_ERROR(cudaMalloc(&dev_temp, temp_bytes ? temp_bytes : 1));
    HANDLE_ERROR(cudaMemset(dev_result, 0xFF, sizeof(float)));  // poison: NaN until written
    cub_dot(dev_a, dev_b, dev_result, data.n, dev_temp, temp_bytes);
    HANDLE_ERROR(cudaMemcpy(&cub_sum, dev_result, sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("  CUB TransformReduce %.9e  (|CUB - reference| = %.3e)\n", (double)cub_sum,
                std::fabs(cub_sum - data.ref.sum));

    TimingStats vendor =
        report.bandwidth("cub", "CUB DeviceReduce::TransformReduce", 2.0 * bytes,
                         [&] { cub_dot(dev_a, dev_b, dev_result, data.n, dev_temp, temp_bytes); });
    double ratio = vendor.median_ms / ours.median_ms;  // = our GB/s over CUB's
    report.extra("abs_error", std::fabs(cub_sum - data.ref.sum));
    report.extra("within_bound", within_bound(cub_sum, data.ref, depth));
    report.extra("vendor_gbs", 2.0 * bytes / (vendor.median_ms * 1e6));
    report.extra("ratio_to_vendor", ratio);
    report.extra("cpu_ms", data.cpu_ms);  // the CPU's dot product, the tour's baseline
    // Reads a and writes b: the last use of b.
    TimingStats copy = report.bandwidth(
        "d2d-copy", "device-to-device cudaMemcpy", 2.0 * bytes,
        [&] { HANDLE_ERROR(cudaMemcpyAsync(dev_b, dev_a, bytes, cudaMemcpyDeviceToDevice)); });
    // The ratio printed here is the one the Lesson line checks below (its rate over CUB's).
    std::printf("  ours reaches %.1f%% of CUB's bandwidth\n", 100 * ratio);
    HANDLE_ERROR(cudaFree(dev_result));
    HANDLE_ERROR(cudaFree(dev_temp));
    // The lesson: a dot product reads its 2n floats as fast as a copy moves
    // them, once the sum is done in registers (shuffles) and on the GPU.
    if (2.0 * bytes < 4.0 * report.device().l2_bytes)
        return report.lesson_not_checked(
            "a and b fit within 4 x the L2 cache: use --n 2^26 or "
            "more to compare with a copy from DRAM");
    // H200, 3 runs at n = 2^28: 1.08 (1.08..1.09) of the copy's rate. 0.7 leaves
    // room for a busy machine (only for that) and fails loads that no longer
    // coalesce (a strided index) or a grid that no longer fills the GPU. Both move
    // the same 2n floats, so this is a ratio of times: no byte count enters it.
    report.lesson("its rate over a device-to-device copy's", copy.median_ms / ours.median_ms, 0.7);
    // H200: 1.01 of CUB's rate (the tour's log). 0.8 leaves room for a GPU shared
    // with other jobs.
    report.lesson("its rate over CUB's", ratio, 0.8);
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: Dot-SM-Warp [--n N] [--data document|random] [--threads T] [--blocks B|auto]\n"
    "                   [--repeats R] [--json]\n"
    "  --n N          elements per vector (default 2^28; at most 2^31)\n"
    "  --data D       'document': a[i] = i, b[i] = 2i (default); 'random': +-1/8 .. +-7/8\n"
    "  --threads T    threads per block, a multiple of 32 up to 1024 (default 256)\n"
    "  --blocks B     blocks in the grid, or 'auto' to size it from the GPU (default auto)\n"
    "  --repeats R    timed launches after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long n = args.integer("--n", 1LL << 28, 1, 1LL << 31);
    bool random = read_random_data(args);
    std::string grid = args.text("--blocks", "auto");
    long long blocks = grid == "auto" ? 0 : args.to_integer("--blocks", grid, 1, INT_MAX);
    int threads = (int)args.integer("--threads", 256, 1, 1024);
    if (threads % WARP_SIZE != 0)
        args.fail("--threads " + std::to_string(threads) +
                  " is not a multiple of 32: the warp shuffle needs every warp complete");
    Report report(args, 20);
    size_t bytes = checked_bytes(args, n, sizeof(float), 1);
    size_t all_bytes = checked_bytes(args, 2 * n + blocks, sizeof(float), 1);  // a, b, partials
    report.start(all_bytes, all_bytes);
    if (grid == "auto") blocks = dot_warp_blocks(n, threads);
    report.size("n", n).size("bytes_moved", 2 * bytes).launch(blocks, threads);
    DotData data = make_dot_data(args, report, n, random);

    // End to end: allocate, copy in, both passes, copy one float back.
    HostTimer end_to_end;
    float *dev_a, *dev_b, *dev_partial, *dev_result, gpu_sum = 0;
    HANDLE_ERROR(cudaMalloc(&dev_a, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_b, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_partial, blocks * sizeof(float)));
    HANDLE_ERROR(cudaMalloc(&dev_result, sizeof(float)));
    HANDLE_ERROR(cudaMemset(dev_partial, 0xFF, blocks * sizeof(float)));  // poison: NaN
    HANDLE_ERROR(cudaMemset(dev_result, 0xFF, sizeof(float)));
    HANDLE_ERROR(cudaMemcpy(dev_a, data.a, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_b, data.b, bytes, cudaMemcpyHostToDevice));
    launch_dot_warp(dev_a, dev_b, dev_partial, dev_result, n, (int)blocks, threads);
    HANDLE_ERROR(cudaMemcpy(&gpu_sum, dev_result, sizeof(float), cudaMemcpyDeviceToHost));
    report.note("end to end (malloc + copies + both passes + copy back)", "end_to_end_ms",
                end_to_end.stop_ms());

    // No last step on the CPU: the answer came back as one float.
    long long depth = dot_warp_rounding_depth(n, blocks, threads);
    DotCheck check = check_dot(report, data, gpu_sum, depth);

    TimingStats ours = report.bandwidth("two-pass", "Dot-SM-Warp (2 passes)", 2.0 * bytes, [&] {
        launch_dot_warp(dev_a, dev_b, dev_partial, dev_result, n, (int)blocks, threads);
    });
    compare_with_cub(report, data, dev_a, dev_b, depth, ours);

    HANDLE_ERROR(cudaFree(dev_a));
    HANDLE_ERROR(cudaFree(dev_b));
    HANDLE_ERROR(cudaFree(dev_partial));
    HANDLE_ERROR(cudaFree(dev_result));
    free_dot_data(data);
    return report.verdict(check.pass, "%s", check.detail);
}
#endif
