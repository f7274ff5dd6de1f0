// clock_inject.cpp -- the independent clock: the GPU's own timeline, from CUPTI.
//
// Loaded into a program by the CUDA driver (CUDA_INJECTION64_PATH=libclock_inject.so:
// the driver calls InitializeInjection() when the program first uses CUDA), it asks
// CUPTI for an activity record of every kernel, copy and memset the GPU ran, with
// the GPU's start and end timestamps, and writes one line per activity to the file
// named by CLOCK_OUT (stderr when unset) when the program exits:
//   kind <tab> name <tab> stream <tab> device <tab> start_ns <tab> end_ns <tab> bytes <tab> value
// kind: kernel, memcpy (name: HtoD, DtoH, DtoD, ...), memset (value: the byte set),
// peer (a copy between GPUs). tests/clock/clock.py reads it. Nothing of the program
// is changed: CUPTI collects in its own buffers, flushed here.
//
// Build: g++ -shared -fPIC -O2 -I<cuda>/include clock_inject.cpp -o libclock_inject.so
//        -L<cuda>/lib64 -lcupti
#include <cupti.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

FILE* out = nullptr;
std::mutex out_lock;
const size_t BUFFER_BYTES = 8 << 20;

void check(CUptiResult result, const char* what) {
    if (result == CUPTI_SUCCESS) return;
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    std::fprintf(stderr, "clock_inject: %s failed: %s\n", what, text ? text : "?");
}

const char* copy_kind(uint8_t kind) {
    switch (kind) {
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
            return "HtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
            return "DtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
            return "DtoD";
        case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
            return "HtoH";
        case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
            return "PtoP";
        default:
            return "other";
    }
}

void write_line(const char* kind, const char* name, unsigned stream, unsigned device,
                unsigned long long start, unsigned long long end, unsigned long long bytes,
                unsigned value) {
    std::fprintf(out, "%s\t%s\t%u\t%u\t%llu\t%llu\t%llu\t%u\n", kind, name, stream, device, start,
                 end, bytes, value);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = (uint8_t*)aligned_alloc(8, BUFFER_BYTES);
    *size = BUFFER_BYTES;
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    std::lock_guard<std::mutex> hold(out_lock);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        switch (record->kind) {
            case CUPTI_ACTIVITY_KIND_KERNEL:
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
                auto* k = (CUpti_ActivityKernel10*)record;
                write_line("kernel", k->name ? k->name : "?", k->streamId, k->deviceId, k->start,
                           k->end, 0, 0);
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                auto* c = (CUpti_ActivityMemcpy6*)record;
                write_line("memcpy", copy_kind(c->copyKind), c->streamId, c->deviceId, c->start,
                           c->end, c->bytes, 0);
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY2: {
                auto* c = (CUpti_ActivityMemcpyPtoP4*)record;
                write_line("peer", copy_kind(c->copyKind), c->streamId, c->deviceId, c->start,
                           c->end, c->bytes, c->srcDeviceId);
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                auto* m = (CUpti_ActivityMemset4*)record;
                write_line("memset", "memset", m->streamId, m->deviceId, m->start, m->end, m->bytes,
                           m->value);
                break;
            }
            default:
                break;
        }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped)
        std::fprintf(out, "dropped\t-\t0\t0\t0\t0\t%zu\t0\n", dropped);
    std::fflush(out);
    std::free(buffer);
}

void flush_at_exit() {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> hold(out_lock);
    std::fprintf(out, "end\t-\t0\t0\t0\t0\t0\t0\n");
    std::fflush(out);
}

}  // namespace

extern "C" int InitializeInjection(void) {
    static bool done = false;
    if (done) return 1;
    done = true;
    const char* path = std::getenv("CLOCK_OUT");
    out = path && *path ? std::fopen(path, "w") : stderr;
    if (!out) {
        std::fprintf(stderr, "clock_inject: cannot write %s\n", path);
        return 0;
    }
    std::fprintf(out, "start\t-\t0\t0\t0\t0\t0\t0\n");
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "register");
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernels");
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "copies");
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2), "peer copies");
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "memsets");
    std::atexit(flush_at_exit);
    return 1;
}

// Where the driver does not load an injection library, LD_PRELOAD=libclock_inject.so with
// CLOCK_PRELOAD=1 starts the same collection when the program is loaded.
__attribute__((constructor)) static void start_when_preloaded() {
    const char* preload = std::getenv("CLOCK_PRELOAD");
    if (preload && *preload == '1') InitializeInjection();
}
