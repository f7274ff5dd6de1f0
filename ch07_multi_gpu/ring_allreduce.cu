// ring_allreduce.cu -- an all-reduce written by hand, around a ring of GPUs (chapter 7).
//
// Every GPU g holds a vector x_g of N floats; afterwards every GPU must hold the sum
// x_0 + x_1 + ... + x_{K-1}. (Data-parallel training does this to its gradients after
// every step.) The ring algorithm, the one NCCL uses for large messages:
//  1. Reduce-scatter, K-1 steps. The vector is cut into K chunks. In each step every
//     GPU adds one chunk of its LEFT neighbour into its own copy of that chunk, and the
//     chunk it adds is the one the neighbour completed in the step before. After K-1
//     steps GPU g holds chunk g+1 summed over all K GPUs.
//  2. All-gather, K-1 steps. Each GPU copies the finished chunk of its left neighbour
//     over its own, passing every finished chunk once around the ring.
// Every GPU sends and receives 2(K-1)/K of the vector, whatever K: the least any
// all-reduce can move, and all links busy at once.
// The pieces: one stream per GPU; the reduction is a small kernel that reads the left
// neighbour's memory directly over NVLink (peer access), or, without peer access, a
// cudaMemcpyPeerAsync into local scratch first; the all-gather is cudaMemcpyPeerAsync;
// and events between devices say when a neighbour's chunk is ready.
// Then NCCL's ncclAllReduce on the same buffers, in the same run, for the yardstick.
//
// Source: Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations" (2009); CUDA by Example (2010), chapter 11, for the multi-GPU basics.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o ring_allreduce ring_allreduce.cu -lnccl
// Run:
//   ./ring_allreduce                 N = 2^26 floats (256 MiB) on every visible GPU
//   ./ring_allreduce --gpus 2 --n 1000003   two GPUs, a size that no chunking divides

#include <vector>
#include "../common/report.h"  // also args.h, device_info.h, timer.h, handle_error.h
#include "multi_gpu.h"
#include "nccl_check.h"

const int THREADS_PER_BLOCK = 256;
const long long CHUNK_ALIGN = 64;  // chunks start at multiples of 64 floats (256 bytes)

// mine[k] += theirs[k] for k < count. `theirs` may be another GPU's memory: each load
// then crosses NVLink. Four floats at a time (both pointers are 16-byte aligned: the
// chunks start at multiples of 256 bytes), then the last count % 4 one at a time.
__global__ void add_into(float* mine, const float* theirs, long long count) {
    long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float4* mine4 = reinterpret_cast<float4*>(mine);
    const float4* theirs4 = reinterpret_cast<const float4*>(theirs);
    for (long long k = i; k < count / 4; k += stride) {
        float4 m = mine4[k], t = theirs4[k];
        mine4[k] = make_float4(m.x + t.x, m.y + t.y, m.z + t.z, m.w + t.w);
    }
    long long tail = count / 4 * 4 + i;
    if (tail < count) mine[tail] += theirs[tail];
}

void launch_add_into(float* mine, const float* theirs, long long count, cudaStream_t stream) {
    if (count == 0) return;
    int blocks = (int)std::min<long long>(ceil_div(ceil_div(count, 4), THREADS_PER_BLOCK), 2048);
    add_into<<<blocks, THREADS_PER_BLOCK, 0, stream>>>(mine, theirs, count);
    CHECK_LAUNCH();
}

// Chunk c of N floats cut into K: CHUNK_ALIGN-aligned starts, the last ones shorter
// (or empty, when N is small).
Slice ring_chunk(long long n, int k, int c) {
    long long size = ceil_div(ceil_div(n, k), CHUNK_ALIGN) * CHUNK_ALIGN;
    Slice s;
    s.begin = std::min(n, c * size);
    s.count = std::min(size, n - s.begin);
    return s;
}

// Everything the ring needs: each GPU's data (N floats, summed in place), its scratch
// (one chunk, used without peer access), its stream and its "step done" event.
struct Ring {
    int k = 1;
    long long n = 0;
    bool peer = false;  // every GPU may read its left neighbour's memory
    std::vector<float*> data, scratch;
    std::vector<cudaStream_t> streams;
    std::vector<cudaEvent_t> step_done;
};

Ring make_ring(int k, long long n) {
    Ring r;
    r.k = k;
    r.n = n;
    r.peer = enable_peer_access(k);
    r.streams = make_streams(k);
    r.data.resize(k);
    r.scratch.resize(k);
    r.step_done.resize(k);
    size_t chunk_bytes = (ring_chunk(n, k, 0).count + 1) * sizeof(float);
    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        HANDLE_ERROR(cudaMalloc(&r.data[g], std::max<long long>(n, 1) * sizeof(float)));
        HANDLE_ERROR(cudaMalloc(&r.scratch[g], chunk_bytes));
        HANDLE_ERROR(cudaEventCreateWithFlags(&r.step_done[g], cudaEventDisableTiming));
    }
    HANDLE_ERROR(cudaSetDevice(0));
    return r;
}

void free_ring(Ring& r) {
    for (int g = 0; g < r.k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        HANDLE_ERROR(cudaFree(r.data[g]));
        HANDLE_ERROR(cudaFree(r.scratch[g]));
        HANDLE_ERROR(cudaEventDestroy(r.step_done[g]));
    }
    destroy_streams(r.streams);
}

// GPU g's inputs, x_g[i] = eighth(i, g), made on the GPU; returns when all are ready.
void fill_ring_inputs(Ring& r) {
    for (int g = 0; g < r.k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        launch_fill_eighths(r.data[g], 0, r.n, g, r.streams[g]);
    }
    for (int g = 0; g < r.k; ++g) HANDLE_ERROR(cudaStreamSynchronize(r.streams[g]));
    HANDLE_ERROR(cudaSetDevice(0));
}

// Before step work on GPU g: wait until the left neighbour has finished the previous
// step (the chunk we read from it is complete) and the right neighbour too (it has
// finished reading the chunk of ours that we are about to change). Waiting on an event
// of another device is allowed; it costs no host time.
void wait_for_neighbours(const Ring& r, int g) {
    int left = (g - 1 + r.k) % r.k, right = (g + 1) % r.k;
    HANDLE_ERROR(cudaStreamWaitEvent(r.streams[g], r.step_done[left], 0));
    HANDLE_ERROR(cudaStreamWaitEvent(r.streams[g], r.step_done[right], 0));
}

void mark_step_done(Ring& r) {
    for (int g = 0; g < r.k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        HANDLE_ERROR(cudaEventRecord(r.step_done[g], r.streams[g]));
    }
}

// The all-reduce, queued on the K streams (the host does not wait for it).
void ring_allreduce(Ring& r) {
    int k = r.k;
    if (k == 1) return;  // the sum over one GPU is its own vector: nothing to do
    // 1. Reduce-scatter: in step s, GPU g adds its left neighbour's chunk (g-1-s) into its own.
    for (int s = 0; s < k - 1; ++s) {
        for (int g = 0; g < k; ++g) {
            int left = (g - 1 + k) % k;
            Slice c = ring_chunk(r.n, k, ((g - 1 - s) % k + k) % k);
            HANDLE_ERROR(cudaSetDevice(g));
            wait_for_neighbours(r, g);
            const float* theirs = r.data[left] + c.begin;
            if (!r.peer && c.count > 0) {  // no direct loads: bring the chunk over first
                HANDLE_ERROR(cudaMemcpyPeerAsync(r.scratch[g], g, theirs, left,
                                                 c.count * sizeof(float), r.streams[g]));
                theirs = r.scratch[g];
            }
            launch_add_into(r.data[g] + c.begin, theirs, c.count, r.streams[g]);
        }
        mark_step_done(r);
    }
    // 2. All-gather: in step s, GPU g copies its left neighbour's finished chunk (g-s).
    for (int s = 0; s < k - 1; ++s) {
        for (int g = 0; g < k; ++g) {
            int left = (g - 1 + k) % k;
            Slice c = ring_chunk(r.n, k, ((g - s) % k + k) % k);
            HANDLE_ERROR(cudaSetDevice(g));
            wait_for_neighbours(r, g);
            if (c.count > 0)
                HANDLE_ERROR(cudaMemcpyPeerAsync(r.data[g] + c.begin, g, r.data[left] + c.begin,
                                                 left, c.count * sizeof(float), r.streams[g]));
        }
        mark_step_done(r);
    }
    HANDLE_ERROR(cudaSetDevice(0));
}

// The same sum through NCCL, in place, on the same streams (comms from ncclCommInitAll).
void nccl_allreduce(Ring& r, const std::vector<ncclComm_t>& comms) {
    HANDLE_NCCL(ncclGroupStart());  // one call per GPU from one thread: a group
    for (int g = 0; g < r.k; ++g)
        HANDLE_NCCL(
            ncclAllReduce(r.data[g], r.data[g], r.n, ncclFloat, ncclSum, comms[g], r.streams[g]));
    HANDLE_NCCL(ncclGroupEnd());
}

// Runs `allreduce` once on fresh inputs and counts the wrong values on all GPUs.
template <typename AllReduce>
long long check_once(Ring& r, AllReduce allreduce) {
    fill_ring_inputs(r);
    allreduce();
    for (int g = 0; g < r.k; ++g) HANDLE_ERROR(cudaStreamSynchronize(r.streams[g]));
    return count_allreduce_errors(r.data, r.n, r.k);
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: ring_allreduce [--n N] [--gpus K] [--repeats R] [--json]\n"
    "  --n N          floats per GPU (default 2^26 = 256 MiB; at most 2^30)\n"
    "  --gpus K       use the first K GPUs (default: all visible; more than visible: skipped)\n"
    "  --repeats R    timed all-reduces after a warm-up (default 20)\n"
    "  --json         also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long n = args.integer("--n", 1LL << 26, 1, 1LL << 30);
    int requested = read_gpus(args);
    Report report(args, 20);
    size_t bytes = checked_bytes(args, n, sizeof(float), 1);
    report.start(2 * bytes, 2 * bytes);  // data + scratch per GPU; the check's copy on the host
    int k = use_gpus(args.program(), requested);
    report.size("n", n).size("bytes", (long long)bytes).size("gpus", (long long)k);

    Ring r = make_ring(k, n);
    std::printf("  peer access between neighbours: %s\n", k == 1   ? "not needed (one GPU)"
                                                          : r.peer ? "yes"
                                                                   : "no, staged copies");
    long long ring_wrong = check_once(r, [&] { ring_allreduce(r); });

    // NCCL, one process driving all K GPUs: one communicator per GPU.
    nvls_off_unless_set();
    std::vector<ncclComm_t> comms(k);
    HANDLE_NCCL(ncclCommInitAll(comms.data(), k, nullptr));  // GPUs 0 .. k-1
    long long nccl_wrong = check_once(r, [&] { nccl_allreduce(r, comms); });

    TimingStats nccl = time_on_gpus(
        r.streams, [&] { nccl_allreduce(r, comms); }, report.repeats());
    double nccl_bus = bus_bandwidth_gbs(bytes, k, nccl.median_ms);
    // Bus bandwidth's ceiling: each byte a GPU sends or receives is read or
    // written in its DRAM, so one GPU's DRAM peak bounds it (loosely).
    report.record("nccl", "NCCL ncclAllReduce (bus bandwidth)", nccl, nccl_bus, NAN, NAN, nullptr,
                  "dram");
    report.extra("algbw_gbs", bytes / (nccl.median_ms * 1e6));
    TimingStats ring = time_on_gpus(
        r.streams, [&] { ring_allreduce(r); }, report.repeats());
    double ring_bus = bus_bandwidth_gbs(bytes, k, ring.median_ms);
    double pct = k > 1 ? 100 * ring_bus / nccl_bus : NAN;  // no bus traffic with one GPU
    report.record("ring", "ring by hand (bus bandwidth)", ring, ring_bus, NAN, pct, "nccl", "dram");
    report.extra("algbw_gbs", bytes / (ring.median_ms * 1e6));
    report.extra("peer_access", r.peer);
    if (k > 1)
        std::printf("  the ring reaches %.1f%% of NCCL's bus bandwidth (goal: at least 70%%)\n",
                    pct);

    // The lesson: a ring by hand moves the data nearly as fast as NCCL. H200:
    // 116% of NCCL's bus bandwidth on 2 GPUs, 97.5% on 4 (256 MiB, docs/runs/h200x2,
    // h200x4). At least 60%: room for a shared machine, while a ring that sends
    // whole buffers instead of chunks (K times the traffic) falls far below.
    if (k < 2)
        report.lesson_not_shown("one GPU visible: a ring needs two or more");
    else if (bytes < (64u << 20))
        report.lesson_not_checked("below 64 MiB NCCL's latency-tuned algorithms win: use --n 2^24");
    else
        report.lesson("the ring's bus bandwidth over NCCL's", ring_bus / nccl_bus, 0.6);
    for (int g = 0; g < k; ++g) HANDLE_NCCL(ncclCommDestroy(comms[g]));
    free_ring(r);
    bool pass = ring_wrong == 0 && nccl_wrong == 0;
    return report.verdict(pass, "ring: %lld of %lld values wrong, NCCL: %lld wrong, on %d GPU%s",
                          ring_wrong, n * k, nccl_wrong, k, k > 1 ? "s" : "");
}
#endif
