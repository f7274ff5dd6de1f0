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
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"

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
long long count_wrong_bytes(const unsigned char* sent, const unsigned char* received, size_t bytes) {
    if (std::memcmp(sent, received, bytes) == 0) return 0;  // the fast, usual answer
    long long wrong = 0;
    for (size_t i = 0; i < bytes; i++) wrong += (sent[i] != received[i]);
    return wrong;
}

struct RoundTrip {
    TimingStats h2d, d2h;  // one cudaMemcpy of `bytes`, each direction
    long long wrong_bytes; // bytes that did not come back as they were sent
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

    RoundTrip r;
    // cudaMemcpy from pageable memory returns only once the data has been
    // staged and sent, so events around it measure the whole transfer.
    r.h2d = time_gpu([&] { HANDLE_ERROR(cudaMemcpy(dev, src, bytes, cudaMemcpyHostToDevice)); }, repeats);
    r.d2h = time_gpu([&] { HANDLE_ERROR(cudaMemcpy(dst, dev, bytes, cudaMemcpyDeviceToHost)); }, repeats);
    r.wrong_bytes = count_wrong_bytes(src, dst, bytes);
    return r;
}

double gigabytes_per_second(size_t bytes, const TimingStats& t) { return bytes / (t.median_ms * 1e6); }

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

struct Row {
    size_t bytes;
    HostKind kind;
    RoundTrip result;
};

std::string size_text(size_t bytes) {
    char text[32];
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) std::snprintf(text, sizeof text, "%zu GiB", bytes >> 30);
    else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) std::snprintf(text, sizeof text, "%zu MiB", bytes >> 20);
    else if (bytes % 1024 == 0) std::snprintf(text, sizeof text, "%zu KiB", bytes >> 10);
    else std::snprintf(text, sizeof text, "%zu B", bytes);
    return text;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "pinned_vs_pageable", USAGE);
    bool sweep = args.flag("--sweep");
    // Whether an option was given at all, not whether its value is empty:
    // "--mb ''" is given (and refused as empty), never "no --mb".
    if (sweep && args.given("--mb"))
        args.fail("--mb and --sweep: give one size or ask for the sweep, not both");
    if (!sweep && args.given("--max-mb"))
        args.fail("--max-mb sets the end of the sweep; it needs --sweep");
    long long mb = sweep ? args.integer("--max-mb", 1024, 1, LLONG_MAX)
                         : args.integer("--mb", 64, 1, LLONG_MAX);
    int repeats = (int)args.integer("--repeats", 10, 1, 100000);
    bool json = args.flag("--json");
    args.done();
    size_t largest = checked_bytes(args, mb, 1 << 20, 1);

    // The sizes: one, or 4 KiB, 16 KiB, ... up to the largest (always included).
    std::vector<size_t> sizes;
    if (sweep) {
        for (size_t s = 4096; s < largest; s *= 4) sizes.push_back(s);
    }
    sizes.push_back(largest);

    // Two host buffers of one kind at a time (sent and received), one device buffer.
    check_fits_on_host(args, checked_bytes(args, mb, 1 << 20, 2));
    DeviceInfo dev = require_device("pinned_vs_pageable");
    check_fits_on_device(args, largest);
    print_device(dev);
    std::printf("Copy engines (cudaDevAttrAsyncEngineCount): %d%s\n", dev.copy_engines,
                dev.copy_engines >= 2 ? " -- one can send while another receives" : "");
    std::printf("pinned_vs_pageable: cudaMemcpy, median of %d copies after 2 warm-ups; GB/s = 1e9 bytes/s\n\n",
                repeats);
    // A long run says so first. Each size and kind of memory: 2 x (repeats + 2)
    // copies at 5 GB/s (conservative: the H200 machine's pageable copies run at 9
    // to 16 GB/s), and the host pins, fills, clears and compares at 2 GB/s.
    double seconds = 0;
    for (size_t bytes : sizes)
        seconds += HOST_KINDS * (2 * (repeats + 2) * (bytes / 5e9) + 4 * (bytes / 2e9));
    announce_long_run(seconds, "estimated for copies at 5 GB/s and the host at 2 GB/s");

    unsigned char* dev_buffer;
    HANDLE_ERROR(cudaMalloc((void**)&dev_buffer, largest));

    std::vector<Row> rows;
    std::printf("  %-10s  %-11s %10s %10s %12s %12s  %s\n", "size", "memory", "H2D GB/s", "D2H GB/s",
                "H2D ms", "D2H ms", "x pageable (H2D, D2H)");
    for (size_t bytes : sizes) {
        for (int k = 0; k < HOST_KINDS; k++) {
            HostKind kind = (HostKind)k;
            unsigned char* src = alloc_host(kind, bytes);
            unsigned char* dst = src ? alloc_host(kind, bytes) : nullptr;
            if (!dst) {
                char message[160];
                std::snprintf(message, sizeof message, "cannot allocate 2 x %s of %s host memory",
                              size_text(bytes).c_str(), HOST_KIND_NAMES[k]);
                args.fail(message);
            }
            RoundTrip r = time_round_trip(src, dst, dev_buffer, bytes, repeats);
            free_host(kind, src);
            free_host(kind, dst);
            rows.push_back({bytes, kind, r});

            const RoundTrip& pageable = rows[rows.size() - 1 - k].result;  // this size's first row
            double h2d = gigabytes_per_second(bytes, r.h2d), d2h = gigabytes_per_second(bytes, r.d2h);
            std::printf("  %-10s  %-11s %10.2f %10.2f %12.4f %12.4f", size_text(bytes).c_str(), HOST_KIND_NAMES[k],
                        h2d, d2h, r.h2d.median_ms, r.d2h.median_ms);
            if (kind != PAGEABLE)
                std::printf("  %.2fx, %.2fx", pageable.h2d.median_ms / r.h2d.median_ms,
                            pageable.d2h.median_ms / r.d2h.median_ms);
            std::printf("%s\n", r.wrong_bytes ? "  DATA WRONG" : "");
        }
    }
    HANDLE_ERROR(cudaFree(dev_buffer));

    // One JSON record per size, kind and direction.
    long long wrong_rows = 0;
    for (size_t i = 0; i < rows.size(); i++) {
        const Row& row = rows[i];
        const RoundTrip& pageable = rows[i - row.kind].result;
        wrong_rows += (row.result.wrong_bytes != 0);
        const char* result = row.result.wrong_bytes ? "FAIL" : "PASS";
        for (int direction = 0; direction < 2; direction++) {
            const TimingStats& t = direction == 0 ? row.result.h2d : row.result.d2h;
            const TimingStats& base = direction == 0 ? pageable.h2d : pageable.d2h;
            std::string variant = std::string(HOST_KIND_NAMES[row.kind]) + (direction == 0 ? "-h2d" : "-d2h");
            JsonRecord size, launch;
            size.add("bytes", (long long)row.bytes);
            launch.add("api", "cudaMemcpy");
            print_json(json, measurement_against("pinned_vs_pageable", variant.c_str(), dev, t,
                                                 gigabytes_per_second(row.bytes, t), NAN, NAN, nullptr, result)
                                 .add("size", size).add("launch", launch)
                                 .add("memory", HOST_KIND_NAMES[row.kind])
                                 .add("direction", direction == 0 ? "h2d" : "d2h")
                                 .add("speedup_vs_pageable", base.median_ms / t.median_ms)
                                 .add("wrong_bytes", row.result.wrong_bytes));
        }
    }

    char detail[160];
    if (wrong_rows)
        std::snprintf(detail, sizeof detail, "%lld of %zu round trips brought back wrong bytes", wrong_rows, rows.size());
    else
        std::snprintf(detail, sizeof detail, "every byte of %zu round trips came back as it was sent", rows.size());
    return verdict(wrong_rows == 0, detail);
}
#endif
