// multi_gpu.h -- what the programs of chapter 7 share (plain functions, no NCCL).
//
// - how many GPUs to use (--gpus K), and the skip when fewer are visible;
// - the split of N elements into K slices;
// - exactly checkable data: every value an odd multiple of 1/8 (below);
// - chapter 3's dot product kernel (Dot-SM-Warp), copied here so this chapter
//   builds on its own;
// - timing work that spans several GPUs with events, from one host thread.
// Source: CUDA by Example (Sanders and Kandrot, 2010), chapter 11, "CUDA C on Multiple GPUs".
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <set>
#include <utility>
#include <vector>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/timer.h"

// ---------------------------------------------------------------------------
// How many GPUs

inline int visible_gpus() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear it: "no GPU" is answered by Report::start()
        return 0;
    }
    return count;
}

// --gpus K: use the first K visible GPUs; absent: all of them (0 here, resolved by use_gpus).
inline int read_gpus(Args& args) {
    return (int)args.integer("--gpus", 0, 1, 64);
}

// Call after report.start() (which exits 77 without any GPU). A run that asks for more
// GPUs than there are is skipped (exit 77) with the reason, like a run without a GPU:
// on a one-GPU machine "--gpus 2" cannot show anything, but it is not wrong either.
inline int use_gpus(const char* program, int requested) {
    int visible = visible_gpus();
    if (requested > visible) {
        std::fprintf(stderr, "%s: needs %d GPUs, %d visible (skipped)\n", program, requested,
                     visible);
        std::exit(EXIT_CODE_NO_DEVICE);
    }
    int k = requested ? requested : visible;
    std::printf("GPUs: using %d of %d visible\n", k, visible);
    return k;
}

// ---------------------------------------------------------------------------
// Slices: N elements over K parts, the first N % K parts one element longer, so
// that no part is empty while N >= K and the sizes differ by at most one.
struct Slice {
    long long begin = 0, count = 0;
};

inline Slice slice_of(long long n, int parts, int i) {
    long long base = n / parts, extra = n % parts;
    Slice s;
    s.begin = i * base + std::min<long long>(i, extra);
    s.count = base + (i < extra ? 1 : 0);
    return s;
}

// ---------------------------------------------------------------------------
// The data: value(i, seed) is one of +-1/8, +-3/8, +-5/8, +-7/8, from the top
// three bits of a multiplicative hash of i (cheap enough to regenerate on the CPU
// for every check, and never periodic in i, so a chunk sent to the wrong place
// shows). Why eighths: chapter 3's dot_reference.h -- every product is an odd
// multiple of 1/64 and every sum a multiple of 1/64, which a float holds exactly
// below 2^18; so a float dot product of random eighths is EXACT in any order of
// additions, and so is the sum of up to 2^16 such values (an all-reduce).
__host__ __device__ inline float eighth(long long i, unsigned seed) {
    uint64_t h = ((uint64_t)i + 0x9E3779B97F4A7C15ULL * (seed + 1)) * 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    int top = (int)(h >> 61);               // 0..7
    float magnitude = (2 * (top & 3) + 1);  // 1, 3, 5, 7
    return (top & 4 ? -magnitude : magnitude) / 8.0f;
}

// Fills x[0 .. count) with eighth(first + k, seed), on the device: the inputs are
// made where they are used, so a 1 GiB buffer per GPU costs no copy.
__global__ void fill_eighths(float* x, long long first, long long count, unsigned seed) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < count; k += stride)
        x[k] = eighth(first + k, seed);
}

inline void launch_fill_eighths(float* x, long long first, long long count, unsigned seed,
                                cudaStream_t stream = 0) {
    if (count == 0) return;
    int blocks = (int)std::min<long long>(ceil_div(count, 256), 4096);
    fill_eighths<<<blocks, 256, 0, stream>>>(x, first, count, seed);
    CHECK_LAUNCH();
}

// body(begin, end) over [0, n), cut into one slice per host core: regenerating 2^30
// values takes one core seconds, all of them a fraction of that.
template <typename Body>
void parallel_for(long long n, Body body) {
    int workers = (int)std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
        Slice s = slice_of(n, workers, w);
        threads.emplace_back([=] { body(s.begin, s.begin + s.count); });
    }
    for (std::thread& t : threads) t.join();
}

// The same values on the host: x[k] = eighth(k, seed).
inline void fill_eighths_host(float* x, long long n, unsigned seed) {
    parallel_for(n, [=](long long begin, long long end) {
        for (long long k = begin; k < end; ++k) x[k] = eighth(k, seed);
    });
}

// ---------------------------------------------------------------------------
// Chapter 3's dot product (Dot-SM-Warp, without float4 loads): each block adds its
// threads' products through warp shuffles; a second, one-block launch adds the
// per-block sums, so the answer is one float on the device.
const int DOT_THREADS = 256;
const int DOT_SECOND_PASS_THREADS = 1024;

__device__ inline float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__device__ inline float block_sum(float v) {
    __shared__ float warp_sums[32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();  // every warp's sum is written before warp 0 reads them
    if (warp == 0) v = warp_sum(lane < (int)blockDim.x / 32 ? warp_sums[lane] : 0.0f);
    return v;
}

__global__ void dot(const float* a, const float* b, float* partial, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    float sum = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        sum += a[i] * b[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

__global__ void sum_partials(const float* partial, int count, float* result) {
    float sum = 0;
    for (long long k = threadIdx.x; k < count; k += blockDim.x) sum += partial[k];
    sum = block_sum(sum);
    if (threadIdx.x == 0) *result = sum;
}

// The grid of the current device: the blocks its SMs keep resident at once.
inline int dot_blocks(long long n) {
    return (int)std::max<long long>(
        1, std::min<long long>(ceil_div(n, DOT_THREADS), blocks_to_fill_gpu(dot, DOT_THREADS)));
}

// Both passes on `stream` of the current device; the answer in dev_result[0].
// dev_partial holds `blocks` floats.
inline void launch_dot(const float* a, const float* b, float* dev_partial, float* dev_result,
                       long long n, int blocks, cudaStream_t stream = 0) {
    dot<<<blocks, DOT_THREADS, 0, stream>>>(a, b, dev_partial, n);
    CHECK_LAUNCH();
    sum_partials<<<1, DOT_SECOND_PASS_THREADS, 0, stream>>>(dev_partial, blocks, dev_result);
    CHECK_LAUNCH();
}

// The reference: the dot product of eighth(i, 1) and eighth(i, 2) in double
// (exact: multiples of 1/64 far below 2^53 / 64).
inline double dot_reference(const float* a, const float* b, long long n) {
    double sum = 0;
    for (long long i = 0; i < n; ++i) sum += (double)a[i] * (double)b[i];
    return sum;
}

// ---------------------------------------------------------------------------
// Timing work that spans K GPUs, from one host thread: an event on GPU 0 starts
// the clock, every other GPU's stream waits for it (cudaStreamWaitEvent works across
// devices), the work is queued on every stream, each stream records its end, GPU 0's
// stream waits for all of the ends and records the stop. The time between start and
// stop is the time until the LAST GPU finished. Warm-ups first, then `repeats` runs.
// streams[g] belongs to GPU g, or to devices[g] when a list of devices is given.
template <typename Work>
TimingStats time_on_gpus(const std::vector<cudaStream_t>& streams, Work work, int repeats,
                         int warmups = 2, std::vector<int> devices = {}) {
    int k = (int)streams.size();
    if (devices.empty())
        for (int g = 0; g < k; ++g) devices.push_back(g);
    std::vector<cudaEvent_t> ends(k);
    cudaEvent_t start, stop;
    HANDLE_ERROR(cudaSetDevice(devices[0]));
    HANDLE_ERROR(cudaEventCreate(&start));
    HANDLE_ERROR(cudaEventCreate(&stop));
    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(devices[g]));
        HANDLE_ERROR(cudaEventCreateWithFlags(&ends[g], cudaEventDisableTiming));
    }
    std::vector<double> samples;
    for (int r = 0; r < warmups + repeats; ++r) {
        HANDLE_ERROR(cudaSetDevice(devices[0]));
        if (clock_marks_on() && r >= warmups) clock_mark(0x5A, streams[0]);  // timer.h
        HANDLE_ERROR(cudaEventRecord(start, streams[0]));
        for (int g = 1; g < k; ++g) HANDLE_ERROR(cudaStreamWaitEvent(streams[g], start, 0));
        work();
        for (int g = 0; g < k; ++g) {
            HANDLE_ERROR(cudaSetDevice(devices[g]));
            HANDLE_ERROR(cudaEventRecord(ends[g], streams[g]));
        }
        HANDLE_ERROR(cudaSetDevice(devices[0]));
        for (int g = 1; g < k; ++g) HANDLE_ERROR(cudaStreamWaitEvent(streams[0], ends[g], 0));
        HANDLE_ERROR(cudaEventRecord(stop, streams[0]));
        if (clock_marks_on() && r >= warmups) clock_mark(0xA5, streams[0]);
        HANDLE_ERROR(cudaEventSynchronize(stop));
        float ms = 0;
        HANDLE_ERROR(cudaEventElapsedTime(&ms, start, stop));
        if (r >= warmups) samples.push_back(ms);
    }
    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(devices[g]));
        HANDLE_ERROR(cudaEventDestroy(ends[g]));
    }
    HANDLE_ERROR(cudaSetDevice(devices[0]));
    HANDLE_ERROR(cudaEventDestroy(start));
    HANDLE_ERROR(cudaEventDestroy(stop));
    return summarize(samples);
}

// One stream per GPU, created on its device.
inline std::vector<cudaStream_t> make_streams(int k) {
    std::vector<cudaStream_t> streams(k);
    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        HANDLE_ERROR(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
    }
    HANDLE_ERROR(cudaSetDevice(0));
    return streams;
}

inline void destroy_streams(std::vector<cudaStream_t>& streams) {
    for (size_t g = 0; g < streams.size(); ++g) {
        HANDLE_ERROR(cudaSetDevice((int)g));
        HANDLE_ERROR(cudaStreamDestroy(streams[g]));
    }
    HANDLE_ERROR(cudaSetDevice(0));
}

// Peer access between every pair of the first k GPUs that supports it (NVLink or
// PCIe): afterwards a kernel on GPU i may dereference GPU j's pointers, and
// cudaMemcpyPeer goes straight from one GPU to the other instead of through the host.
// Returns true when every pair has it.
inline bool enable_peer_access(int k) {
    // Peer access stays on for the life of the process, and enabling it twice is an error
    // (cudaErrorPeerAccessAlreadyEnabled, which compute-sanitizer reports): remember the
    // pairs already enabled instead of asking twice.
    static std::set<std::pair<int, int>> enabled;
    bool all = true;
    for (int i = 0; i < k; ++i) {
        HANDLE_ERROR(cudaSetDevice(i));
        for (int j = 0; j < k; ++j) {
            if (i == j) continue;
            int can = 0;
            HANDLE_ERROR(cudaDeviceCanAccessPeer(&can, i, j));
            if (!can) {
                all = false;
                continue;
            }
            if (enabled.insert({i, j}).second) HANDLE_ERROR(cudaDeviceEnablePeerAccess(j, 0));
        }
    }
    HANDLE_ERROR(cudaSetDevice(0));
    return all;
}

// NCCL's NVLink SHARP ("NVLS": reductions done by the NVSwitch itself, with
// multicast memory) needs the fabric manager's multicast support, which the
// GPU machines here do not give to a container: NCCL would fail at its first
// collective. Switching it off costs the switch offload, not correctness; NCCL
// then uses its ring and tree algorithms over the same NVLinks. The last
// argument 0 keeps a value the user set (NCCL_NVLS_ENABLE=1 on a machine that has it).
inline void nvls_off_unless_set() {
    setenv("NCCL_NVLS_ENABLE", "0", 0);
}

// ---------------------------------------------------------------------------
// All-reduce: GPU g starts with x_g[i] = eighth(i, g); afterwards every GPU must
// hold sum over g of x_g[i] -- exact in float for any order of additions (up to 2^16
// GPUs, multi_gpu.h's data). The bus bandwidth of an all-reduce of `bytes` over k GPUs
// as nccl-tests defines it: algorithm bandwidth (bytes / time) x 2(k-1)/k, the share of
// the data each GPU must send and receive in any all-reduce; it can be set beside the
// link's bandwidth. 0 for one GPU, which sends nothing.
inline double allreduce_expected(long long i, int k) {
    double sum = 0;
    for (int g = 0; g < k; ++g) sum += eighth(i, g);
    return sum;
}

inline double bus_bandwidth_gbs(double bytes, int k, double ms) {
    return bytes / (ms * 1e6) * 2.0 * (k - 1) / k;
}

// What every GPU must hold after the all-reduce, on the host.
inline std::vector<float> allreduce_expected_host(long long n, int k) {
    std::vector<float> expected(std::max<long long>(n, 1));
    float* out = expected.data();
    parallel_for(n, [=](long long begin, long long end) {
        for (long long i = begin; i < end; ++i) out[i] = (float)allreduce_expected(i, k);
    });
    return expected;
}

// How many of n values differ from the expected ones (a NaN from the poison counts).
inline long long count_wrong(const float* got, const std::vector<float>& expected, long long n) {
    long long wrong = 0;
    for (long long i = 0; i < n; ++i) wrong += !(got[i] == expected[i]);
    return wrong;
}

// Copies each of the first k GPUs' n floats back and compares them with the expected
// sums, exactly. Returns how many values are wrong, over all k GPUs.
inline long long count_allreduce_errors(const std::vector<float*>& dev, long long n, int k) {
    std::vector<float> expected = allreduce_expected_host(n, k);
    std::vector<float> host(std::max<long long>(n, 1));
    long long wrong = 0;
    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        HANDLE_ERROR(cudaMemcpy(host.data(), dev[g], n * sizeof(float), cudaMemcpyDeviceToHost));
        wrong += count_wrong(host.data(), expected, n);
    }
    HANDLE_ERROR(cudaSetDevice(0));
    return wrong;
}
