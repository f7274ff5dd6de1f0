// pinned_vs_pageable.cu -- how fast do bytes cross between host and GPU? (chapter 6, part 1 of 2)
//
// The same buffer is copied host -> device and device -> host with cudaMemcpy,
// from three kinds of host memory:
//   pageable    malloc(). The operating system may move or swap out its pages
//               at any time, so the GPU cannot read it directly: the driver
//               first copies it, piece by piece, into a pinned staging buffer
//               of its own and lets the GPU's copy engine take it from there.
//   pinned      cudaHostAlloc(). Page-locked: the pages stay where they are,
//               so the copy engine reads them directly (DMA). No staging copy.
//   registered  malloc(), then cudaHostRegister(). Memory someone else already
//               allocated, pinned after the fact: what real code usually needs.
// Each copy is repeated after a warm-up, the median gives GB/s (1 GB = 1e9
// bytes), and every byte that comes back is compared with what was sent.
//
// Source: "GPU Programming" (CSInParallel, 2012), chapter 6, and the Bologna "CUDA
// Programming" slides, pinned memory.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o pinned_vs_pageable pinned_vs_pageable.cu
// Run:
//   ./pinned_vs_pageable                 64 MiB, each kind of memory, each direction
//   ./pinned_vs_pageable --mb 1024       another size (MiB, 1 MiB = 2^20 bytes)
//   ./pinned_vs_pageable --sweep         4 KiB to 1 GiB, as a table (and --json)
//   ./pinned_vs_pageable --help          every option and the exit codes

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "../common/report.h"  // also args.h, device_info.h, timer.h, handle_error.h

// There is no kernel in this program: the copy engines do all the work.

enum HostKind { PAGEABLE = 0, PINNED = 1, REGISTERED = 2 };
const int HOST_KINDS = 3;
const char* HOST_KIND_NAMES[HOST_KINDS] = {"pageable", "pinned", "registered"};

// Host memory of one kind, or nullptr when the host cannot provide it.
// Only "out of memory" is answered with nullptr; any other CUDA error stops
// the program as usual.
unsigned char* alloc_host(HostKind kind, size_t bytes) {
    void* p = nullptr;
    if (kind == PINNED) {
        cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
        if (err == cudaErrorMemoryAllocation) {
            cudaGetLastError();  // clear it: the caller reports the failure
            return nullptr;
        }
        HANDLE_ERROR(err);
        return (unsigned char*)p;
    }
    p = std::malloc(bytes);
    if (!p) return nullptr;
    if (kind == REGISTERED) {
        // Pin pages that malloc() already gave us. The driver locks them and
        // maps them for the GPU; from now on they behave like cudaHostAlloc's.
        cudaError_t err = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
        if (err == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            std::free(p);
            return nullptr;
        }
        HANDLE_ERROR(err);
    }
    return (unsigned char*)p;
}

void free_host(HostKind kind, unsigned char* p) {
    if (kind == PINNED) {
        HANDLE_ERROR(cudaFreeHost(p));
        return;
    }
    if (kind == REGISTERED) HANDLE_ERROR(cudaHostUnregister(p));
    std::free(p);
}

// The bytes 1, 2, ..., 251, 1, 2, ...: never 0 (the value the destination is
// cleared to), and 251 is prime, so the pattern never lines up with a page.
void fill_pattern(unsigned char* p, size_t bytes) {
    unsigned char v = 1;
    for (size_t i = 0; i < bytes; i++) {
        p[i] = v;
        v = (v == 251) ? 1 : v + 1;
    }
}

// How many bytes differ between what was sent and what came back.
long long count_wrong_bytes(const unsigned char* sent, const unsigned char* received,
                            size_t bytes) {
    if (std::memcmp(sent, received, bytes) == 0) return 0;  // the fast, usual answer
    long long wrong = 0;
    for (size_t i = 0; i < bytes; i++) wrong += (sent[i] != received[i]);
    return wrong;
}

// One direction: `repeats` copies of `bytes` (after 2 warm-ups), each between two
// CUDA events in the default stream. cudaMemcpy from pageable memory returns only
// once the data has been staged and sent, so the events measure the whole transfer.
TimingStats time_copies(void* to, const void* from, size_t bytes, cudaMemcpyKind kind,
                        int repeats) {
    for (int i = 0; i < 2; i++) HANDLE_ERROR(cudaMemcpy(to, from, bytes, kind));
    GpuTimer timer;  // two events in the default stream (common/timer.h)
    std::vector<double> samples;
    for (int i = 0; i < repeats; i++) {
        timer.start();
        HANDLE_ERROR(cudaMemcpy(to, from, bytes, kind));
        samples.push_back(timer.stop());  // waits for the GPU to reach the stop event
    }
    return summarize(samples);  // median, min and max (common/timer.h)
}

struct RoundTrip {
    TimingStats h2d, d2h;   // one cudaMemcpy of `bytes`, each direction
    long long wrong_bytes;  // bytes that did not come back as they were sent
};

// The measurement shared by main() and tests/ch06_streams: `src` goes to the
// device `repeats` times (after warm-ups), then comes back into `dst` the same
// way, and dst is compared with src. src and dst are host memory of the kind
// being measured; dev holds `bytes` bytes.
RoundTrip time_round_trip(unsigned char* src, unsigned char* dst, unsigned char* dev, size_t bytes,
                          int repeats) {
    // Writing every byte first also means the operating system has really
    // given us each page: the first touch of a malloc'd page costs a page
    // fault, and we do not want to time that.
    fill_pattern(src, bytes);
    std::memset(dst, 0, bytes);
    HANDLE_ERROR(cudaMemset(dev, 0xFF, bytes));  // poison: never a pattern byte
    HANDLE_ERROR(cudaDeviceSynchronize());

    RoundTrip r;
    r.h2d = time_copies(dev, src, bytes, cudaMemcpyHostToDevice, repeats);
    r.d2h = time_copies(dst, dev, bytes, cudaMemcpyDeviceToHost, repeats);
    r.wrong_bytes = count_wrong_bytes(src, dst, bytes);
    return r;
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: pinned_vs_pageable [--mb M | --sweep [--max-mb M]] [--repeats R] [--json]\n"
    "  --mb M         one buffer size in MiB (2^20 bytes; default 64)\n"
    "  --sweep        sizes from 4 KiB to --max-mb, each 4 times the last\n"
    "  --max-mb M     the largest size of the sweep in MiB (default 1024)\n"
    "  --repeats R    timed copies of each kind and direction after 2 warm-ups (default 10)\n"
    "  --json         also print one JSON record per size, kind of memory and direction\n"
    "exit codes: 0 every byte arrived intact, 1 a byte did not (or a CUDA error),\n"
    "            2 bad usage or a size the host or the GPU cannot hold, 77 no CUDA device\n";

std::string size_text(size_t bytes) {
    char text[32];
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
        std::snprintf(text, sizeof text, "%zu GiB", bytes >> 30);
    else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        std::snprintf(text, sizeof text, "%zu MiB", bytes >> 20);
    else if (bytes % 1024 == 0)
        std::snprintf(text, sizeof text, "%zu KiB", bytes >> 10);
    else
        std::snprintf(text, sizeof text, "%zu B", bytes);
    return text;
}

// The sizes: the largest alone, or 4 KiB, 16 KiB, ... up to it (always included),
// printed with the copy engines and how copies are timed. A long run says so first: each size and
// kind of memory takes 2 x (repeats + 2) copies at 5 GB/s (conservative: the H200 machine's
// pageable copies run at 9 to 16 GB/s), and the host pins, fills, clears and compares at 2 GB/s.
std::vector<size_t> plan_sizes(const DeviceInfo& dev, size_t largest, bool sweep, int repeats) {
    std::printf("Copy engines (cudaDevAttrAsyncEngineCount): %d%s\n", dev.copy_engines,
                dev.copy_engines >= 2 ? " -- one can send while another receives" : "");
    std::printf("cudaMemcpy, median of %d copies after 2 warm-ups; GB/s = 1e9 bytes/s\n\n",
                repeats);
    std::vector<size_t> sizes;
    for (size_t s = 4096; sweep && s < largest; s *= 4) sizes.push_back(s);
    sizes.push_back(largest);
    double seconds = 0;
    for (size_t bytes : sizes)
        seconds += HOST_KINDS * (2 * (repeats + 2) * (bytes / 5e9) + 4 * (bytes / 2e9));
    announce_long_run(seconds, "estimated for copies at 5 GB/s and the host at 2 GB/s");
    return sizes;
}

// Two lines (and records) for one round trip: each direction's rate, and how
// many times faster than from pageable memory of the same size. At the largest
// size, when it is 4 MiB or more, that ratio is the lesson (checked per
// direction): page-locked memory is copied by the copy engine straight from
// the application's pages; pageable memory is first copied by the CPU into a
// pinned staging buffer, chunk by chunk. (Below 4 MiB a copy's fixed cost,
// some 10 us, hides the difference: 4 KiB copies take the same time either way.)
void report_round_trip(Report& report, size_t bytes, HostKind kind, const RoundTrip& r,
                       const RoundTrip& pageable, bool lesson_size) {
    for (int direction = 0; direction < 2; direction++) {
        const TimingStats& t = direction == 0 ? r.h2d : r.d2h;
        const TimingStats& base = direction == 0 ? pageable.h2d : pageable.d2h;
        const char* way = direction == 0 ? "h2d" : "d2h";
        std::string variant = std::string(HOST_KIND_NAMES[kind]) + "-" + way;
        char label[64];
        std::snprintf(label, sizeof label, "%-7s %-10s %s  %5.2fx pageable",
                      size_text(bytes).c_str(), HOST_KIND_NAMES[kind], way,
                      base.median_ms / t.median_ms);
        report.record(variant.c_str(), label, t, bytes / (t.median_ms * 1e6), NAN, NAN, nullptr,
                      "pcie");
        report.size_of_last("bytes", (long long)bytes);  // each record's own: a sweep has many
        report.extra("memory", HOST_KIND_NAMES[kind]);
        report.extra("direction", way);
        report.extra("speedup_vs_pageable", base.median_ms / t.median_ms);
        report.extra("wrong_bytes", r.wrong_bytes);
        // H200, 3 runs at 64 MiB: pinned over pageable 4.4x (H2D) and 4.8x (D2H); at
        // 256 MiB 4.8x and 2.9x (the tour's log). 1.5 leaves room for a busy host
        // and still fails pinned buffers that are pageable after all (1.0).
        if (lesson_size && kind != PAGEABLE)
            report.lesson(variant + " over pageable: speed-up", base.median_ms / t.median_ms, 1.5);
    }
    if (r.wrong_bytes) std::printf("  DATA WRONG: %lld bytes\n", r.wrong_bytes);
}

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    bool sweep = args.flag("--sweep");
    // Whether an option was given at all, not whether its value is empty:
    // "--mb ''" is given (and refused as empty), never "no --mb".
    if (sweep && args.given("--mb"))
        args.fail("--mb and --sweep: give one size or ask for the sweep, not both");
    if (!sweep && args.given("--max-mb"))
        args.fail("--max-mb sets the end of the sweep; it needs --sweep");
    long long mb = sweep ? args.integer("--max-mb", 1024, 1, LLONG_MAX)
                         : args.integer("--mb", 64, 1, LLONG_MAX);
    Report report(args, 10);
    size_t largest = checked_bytes(args, mb, 1 << 20, 1);
    // Two host buffers of one kind at a time (sent and received), one device buffer.
    size_t host_bytes = checked_bytes(args, mb, 1 << 20, 2);
    const DeviceInfo& dev = report.start(largest, host_bytes);
    std::vector<size_t> sizes = plan_sizes(dev, largest, sweep, report.repeats());

    unsigned char* dev_buffer;
    HANDLE_ERROR(cudaMalloc((void**)&dev_buffer, largest));
    int round_trips = 0, wrong_trips = 0;
    for (size_t bytes : sizes) {
        RoundTrip pageable;  // the first kind: every other is compared with it
        for (int k = 0; k < HOST_KINDS; k++) {
            HostKind kind = (HostKind)k;
            unsigned char* src = alloc_host(kind, bytes);
            unsigned char* dst = src ? alloc_host(kind, bytes) : nullptr;
            if (!dst)
                args.fail("cannot allocate 2 x " + size_text(bytes) + " of " + HOST_KIND_NAMES[k] +
                          " host memory");
            RoundTrip r = time_round_trip(src, dst, dev_buffer, bytes, report.repeats());
            free_host(kind, src);
            free_host(kind, dst);
            if (kind == PAGEABLE) pageable = r;
            report_round_trip(report, bytes, kind, r, pageable, bytes == sizes.back());
            round_trips++;
            wrong_trips += (r.wrong_bytes != 0);
        }
    }
    HANDLE_ERROR(cudaFree(dev_buffer));
    if (largest < (4u << 20))
        report.lesson_not_checked(
            "below 4 MiB a copy's fixed cost hides the difference: use "
            "--mb 4 or more");
    return report.verdict(wrong_trips == 0, "%d of %d round trips brought back wrong bytes",
                          wrong_trips, round_trips);
}
#endif
