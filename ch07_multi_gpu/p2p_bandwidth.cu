// p2p_bandwidth.cu -- how fast one GPU's memory reaches another's (chapter 7).
//
// cudaMemcpyPeerAsync copies between the memories of two GPUs. How it travels depends
// on peer access:
//   staged     peer access NOT enabled: the runtime may route the copy through host
//              memory (down one PCIe link, up another), as the book's generation had to
//   peer       enabled (cudaDeviceEnablePeerAccess): the copy engines move it directly,
//              over NVLink where the GPUs have it (an H200 HGX board: every GPU on the
//              NVSwitches), else over PCIe
//   peer-both  enabled, both directions at once: NVLink is full duplex, so the two
//              directions should not slow each other down
// For every ordered pair (source, destination) a matrix of GB/s per mode, each copy
// checked. Then NCCL's all-reduce of the same size on all the GPUs, in the same run:
// its bus bandwidth (ring_allreduce.cu says what that is) beside the copy's, with the
// ratio. With one GPU there are no pairs: the program measures a copy within GPU 0.
//
// Source: CUDA by Example (2010), chapter 11; NVIDIA cuda-samples, p2pBandwidthLatencyTest.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o p2p_bandwidth p2p_bandwidth.cu -lnccl
// Run:
//   ./p2p_bandwidth               256 MiB copies between every pair of visible GPUs
//   ./p2p_bandwidth --mb 16       smaller copies

#include <string>
#include <vector>
#include "../common/report.h"  // also args.h, device_info.h, timer.h, handle_error.h
#include "multi_gpu.h"
#include "nccl_check.h"

const int MODES = 3;
const char* MODE_NAMES[MODES] = {"staged", "peer", "peer-both"};

// Each GPU's buffers: its source (eighth(i, g)) and a destination written by others.
struct Buffers {
    int k = 1;
    long long n = 0;  // floats per buffer
    std::vector<float*> src, dst;
    std::vector<cudaStream_t> streams;
};

// One copy of GPU s's source into GPU d's destination, on d's stream (the receiver
// pulls), and for peer-both the opposite copy on s's stream at the same time.
void queue_copies(Buffers& b, int s, int d, bool both) {
    size_t bytes = b.n * sizeof(float);
    HANDLE_ERROR(cudaMemcpyPeerAsync(b.dst[d], d, b.src[s], s, bytes, b.streams[d]));
    if (both) HANDLE_ERROR(cudaMemcpyPeerAsync(b.dst[s], s, b.src[d], d, bytes, b.streams[s]));
}

// Was GPU d's destination (and for `both`, GPU s's) written with the sender's values?
long long check_copies(Buffers& b, int s, int d, bool both) {
    std::vector<float> host(b.n), expected(b.n);
    long long wrong = 0;
    for (int pass = 0; pass < (both ? 2 : 1); ++pass) {
        int from = pass == 0 ? s : d, to = pass == 0 ? d : s;
        fill_eighths_host(expected.data(), b.n, from);
        HANDLE_ERROR(cudaSetDevice(to));
        HANDLE_ERROR(
            cudaMemcpy(host.data(), b.dst[to], b.n * sizeof(float), cudaMemcpyDeviceToHost));
        wrong += count_wrong(host.data(), expected, b.n);
    }
    return wrong;
}

// Every ordered pair in one mode: poisoned destinations, one checked copy, then the
// timed ones. gbs[s][d] is the GB/s of s -> d (both directions added for peer-both).
long long measure_pairs(Buffers& b, int mode, int repeats, std::vector<std::vector<double>>& gbs,
                        TimingStats& slowest) {
    bool both = mode == 2;
    long long wrong = 0;
    gbs.assign(b.k, std::vector<double>(b.k, NAN));
    slowest = TimingStats();
    for (int s = 0; s < b.k; ++s)
        for (int d = 0; d < b.k; ++d) {
            if (s == d) continue;
            for (int g : {s, d}) {
                HANDLE_ERROR(cudaSetDevice(g));
                HANDLE_ERROR(cudaMemset(b.dst[g], 0xFF, b.n * sizeof(float)));  // poison
                // The streams are non-blocking: they do not wait for the default stream's memset.
                HANDLE_ERROR(cudaDeviceSynchronize());
            }
            queue_copies(b, s, d, both);
            HANDLE_ERROR(cudaStreamSynchronize(b.streams[d]));
            HANDLE_ERROR(cudaStreamSynchronize(b.streams[s]));
            wrong += check_copies(b, s, d, both);
            TimingStats t = time_on_gpus({b.streams[d], b.streams[s]},
                                         [&] { queue_copies(b, s, d, both); }, repeats, 2, {d, s});
            gbs[s][d] = (both ? 2.0 : 1.0) * b.n * sizeof(float) / (t.median_ms * 1e6);
            if (t.median_ms > slowest.median_ms) slowest = t;
        }
    return wrong;
}

// The matrix as rows of sources and columns of destinations; returns the mean of the
// pairs and writes the matrix as JSON (null on the diagonal).
double print_matrix(const char* mode, const std::vector<std::vector<double>>& gbs,
                    std::string* json) {
    int k = (int)gbs.size();
    double total = 0;
    std::printf("  %-10s GB/s   to:", mode);
    for (int d = 0; d < k; ++d) std::printf(" %8d", d);
    std::printf("\n");
    *json = "[";
    for (int s = 0; s < k; ++s) {
        std::printf("               from %d:", s);
        *json += (s ? ",[" : "[");
        for (int d = 0; d < k; ++d) {
            if (s == d)
                std::printf(" %8s", "-");
            else
                std::printf(" %8.1f", gbs[s][d]);
            *json += (d ? "," : "") + (s == d ? std::string("null") : std::to_string(gbs[s][d]));
            if (s != d) total += gbs[s][d];
        }
        *json += "]";
        std::printf("\n");
    }
    *json += "]";
    return total / (k * (k - 1));
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: p2p_bandwidth [--mb M] [--gpus K] [--repeats R] [--json]\n"
    "  --mb M         MiB per copy (default 256)\n"
    "  --gpus K       use the first K GPUs (default: all visible; more than visible: skipped)\n"
    "  --repeats R    timed copies per pair and mode after a warm-up (default 10)\n"
    "  --json         also print one JSON record per measurement\n";

// The buffers: on each of the k GPUs a source filled with its own eighths and a
// destination of `bytes`, and a stream each.
Buffers make_buffers(int k, size_t bytes) {
    Buffers b;
    b.k = k;
    b.n = bytes / sizeof(float);
    b.streams = make_streams(k);
    b.src.resize(k);
    b.dst.resize(k);
    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        HANDLE_ERROR(cudaMalloc(&b.src[g], bytes));
        HANDLE_ERROR(cudaMalloc(&b.dst[g], bytes));
        launch_fill_eighths(b.src[g], 0, b.n, g);
        HANDLE_ERROR(cudaDeviceSynchronize());
    }
    HANDLE_ERROR(cudaSetDevice(0));
    return b;
}

// NCCL's all-reduce of the sources into the destinations on all k GPUs, timed.
TimingStats time_nccl_allreduce(Buffers& b, int repeats) {
    nvls_off_unless_set();
    std::vector<ncclComm_t> comms(b.k);
    HANDLE_NCCL(ncclCommInitAll(comms.data(), b.k, nullptr));
    TimingStats nccl = time_on_gpus(
        b.streams,
        [&] {
            HANDLE_NCCL(ncclGroupStart());
            for (int g = 0; g < b.k; ++g)
                HANDLE_NCCL(ncclAllReduce(b.src[g], b.dst[g], b.n, ncclFloat, ncclSum, comms[g],
                                          b.streams[g]));
            HANDLE_NCCL(ncclGroupEnd());
        },
        repeats);
    for (int g = 0; g < b.k; ++g) HANDLE_NCCL(ncclCommDestroy(comms[g]));
    return nccl;
}

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long mb = args.integer("--mb", 256, 1, 16384);
    int requested = read_gpus(args);
    Report report(args, 10);
    size_t bytes = checked_bytes(args, mb, 1 << 20, 1);
    report.start(2 * bytes, 2 * bytes);
    int k = use_gpus(args.program(), requested);
    report.size("bytes", (long long)bytes).size("gpus", (long long)k);

    Buffers b = make_buffers(k, bytes);

    long long wrong = 0;
    double peer_mean = NAN;
    if (k == 1) {
        // No pairs: GPU 0's own copy (read + write), so there is still a figure to compare.
        HANDLE_ERROR(cudaMemset(b.dst[0], 0xFF, bytes));
        HANDLE_ERROR(cudaMemcpy(b.dst[0], b.src[0], bytes, cudaMemcpyDeviceToDevice));
        wrong += check_copies(b, 0, 0, false);
        report.bandwidth("d2d", "one GPU: copy within GPU 0", 2.0 * bytes, [&] {
            HANDLE_ERROR(cudaMemcpyAsync(b.dst[0], b.src[0], bytes, cudaMemcpyDeviceToDevice));
        });
    } else {
        // Staged first: peer access, once enabled, stays on for the process.
        for (int mode = 0; mode < MODES; ++mode) {
            if (mode == 1 && !enable_peer_access(k))
                std::printf("  some pairs have no peer access: their 'peer' copies are staged\n");
            std::vector<std::vector<double>> gbs;
            TimingStats slowest;
            wrong += measure_pairs(b, mode, report.repeats(), gbs, slowest);
            std::string matrix;
            double mean = print_matrix(MODE_NAMES[mode], gbs, &matrix);
            if (mode == 1) peer_mean = mean;
            // The record: the slowest pair's time; its rate is the mean over all pairs.
            report.record(MODE_NAMES[mode],
                          (std::string(MODE_NAMES[mode]) + ", mean of pairs").c_str(), slowest,
                          mean, NAN, NAN, nullptr, "dram");  // each byte read and written once
            report.extra_json("matrix_gbs", matrix);
        }
    }

    // NCCL's all-reduce of the same size on all k GPUs: bus bandwidth beside the copies.
    TimingStats nccl = time_nccl_allreduce(b, report.repeats());
    double bus = bus_bandwidth_gbs(bytes, k, nccl.median_ms);
    double ratio = k > 1 ? peer_mean / bus : NAN;
    report.record("nccl-allreduce", "NCCL all-reduce, bus bandwidth", nccl, bus, NAN, NAN, nullptr,
                  "dram");  // every byte a GPU sends or receives is read or written in its DRAM
    report.extra("p2p_over_nccl_bus", ratio);
    if (k > 1) std::printf("  one-way peer copy / NCCL bus bandwidth = %.2f\n", ratio);

    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        HANDLE_ERROR(cudaFree(b.src[g]));
        HANDLE_ERROR(cudaFree(b.dst[g]));
    }
    destroy_streams(b.streams);
    return report.verdict(wrong == 0, "%lld values wrong over every copy checked", wrong);
}
#endif
