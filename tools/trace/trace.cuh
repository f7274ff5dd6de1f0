// trace.cuh -- records every memory access a traced kernel makes, on the GPU.
//
// Never included by a program a student reads: a trace patch (tools/trace/patches/, the
// planted-bug format of tests/mutants/README.md) adds this header and one recording call
// before each access to a copy of the program, and scripts/trace_kernel.py builds and runs that
// copy.
//
//   TRACE_READ("a", &a[i], i, pass);     the thread is about to read a[i] in loop pass `pass`
//   TRACE_WRITE("c", &c[i], i, pass);    ... about to write c[i]
//   trace_begin();  launch(...);  trace_end();     on the host, around the one launch traced
//
// A record: the block and thread, the array's name, the element's index, the byte address
// (global and constant memory: from the 256-byte boundary at or below the array's first
// element; shared memory: the offset in the block's shared memory, which gives the bank), read or
// write, the step the patch passes, and the source line of the call (one line, one instruction of
// the kernel: a warp's lanes at the same line and step make one request). The device keeps them in
// one array, filled through one atomic counter; trace_end() writes them to the CSV file named by
// $TRACE_CSV (default trace.csv), sorted by block, thread and the thread's own order, so the file
// does not depend on how the GPU interleaved the threads.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../common/handle_error.h"

struct TraceRecord {
    unsigned long long address;  // generic address (global) or shared-memory offset
    long long index;             // the element's index, as the code wrote it
    unsigned long long ticket;   // the atomic counter's value: the order within a thread
    int block_x, block_y, thread_x, thread_y, warp, lane;
    int step, line, size;  // the patch's step, the call's source line, the element's bytes
    int phase;             // the patch's phase (TRACE_READ_AT): 0 unless it names one
    char array[14];
    char rw;     // 'R' or 'W'
    char space;  // 's' shared, 'c' constant, 'g' global
};

__device__ TraceRecord* trace_records = nullptr;  // null: not recording
__device__ unsigned long long trace_count = 0;
__device__ unsigned long long trace_capacity = 0;
__device__ int trace_steps = 0x7fffffff;  // $TRACE_STEPS: record steps 0 .. TRACE_STEPS-1 only
__device__ char trace_only = 0;           // $TRACE_ONLY=W: record the writes only
__device__ long long trace_sample = 1;    // $TRACE_SAMPLE=S: only elements whose index % S == 0

__device__ void trace_access(const char* array, const void* p, long long index, int size, char rw,
                             int step, int line, int phase = 0) {
    if (trace_records == nullptr || step >= trace_steps || (trace_only && rw != trace_only) ||
        index % trace_sample != 0)
        return;
    unsigned long long k = atomicAdd(&trace_count, 1ULL);
    if (k >= trace_capacity) return;  // counted: trace_end() reports the overflow
    TraceRecord& r = trace_records[k];
    r.space = p == nullptr ? 'r' : __isShared(p) ? 's' : __isConstant(p) ? 'c' : 'g';
    r.address = r.space == 's' ? (unsigned long long)__cvta_generic_to_shared(p)
                               : (unsigned long long)(size_t)p;
    if (r.space == 'r') r.address = (unsigned long long)index * size;  // a lane's register
    r.index = index;
    r.ticket = k;
    r.block_x = blockIdx.x;
    r.block_y = blockIdx.y;
    r.thread_x = threadIdx.x;
    r.thread_y = threadIdx.y;
    int linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    r.warp = linear / warpSize;  // a warp: 32 consecutive threads in x, then y, then z
    r.lane = linear % warpSize;
    r.step = step;
    r.line = line;
    r.size = size;
    r.phase = phase;
    r.rw = rw;
    int c = 0;
    for (; c < (int)sizeof(r.array) - 1 && array[c]; c++) r.array[c] = array[c];
    r.array[c] = 0;
}

#define TRACE_READ(name, pointer, index, step) \
    trace_access(name, pointer, (long long)(index), (int)sizeof(*(pointer)), 'R', step, __LINE__)
#define TRACE_WRITE(name, pointer, index, step) \
    trace_access(name, pointer, (long long)(index), (int)sizeof(*(pointer)), 'W', step, __LINE__)

// The same, in a phase of the algorithm (chapter 7's ring: 0 reduce-scatter, 1 all-gather).
#define TRACE_READ_AT(name, pointer, index, phase, step)                                          \
    trace_access(name, pointer, (long long)(index), (int)sizeof(*(pointer)), 'R', step, __LINE__, \
                 phase)
#define TRACE_WRITE_AT(name, pointer, index, phase, step)                                         \
    trace_access(name, pointer, (long long)(index), (int)sizeof(*(pointer)), 'W', step, __LINE__, \
                 phase)

// A register read from another lane through a shuffle: `lane` is the lane whose value
// arrived, as the same shuffle of the lane numbers returns it (recorded as array NAME,
// index `lane`, space "register").
#define TRACE_LANE(name, lane, step) \
    trace_access(name, nullptr, (long long)(lane), 4, 'R', step, __LINE__)

// A read inside an expression: TRACED("N", N, k)[k * Width + x] reads N[k * Width + x] and
// records it, so a patch need not repeat an index that a planted bug may change.
template <typename T>
struct TracedRead {
    const T* p;
    const char* name;
    int step, line;
    __device__ T operator[](long long i) const {
        trace_access(name, &p[i], i, (int)sizeof(T), 'R', step, line);
        return p[i];
    }
};
template <typename T>
__device__ TracedRead<T> traced_read(const char* name, const T* p, int step, int line) {
    return TracedRead<T>{p, name, step, line};
}
#define TRACED(name, pointer, step) traced_read(name, pointer, step, __LINE__)

static TraceRecord* trace_buffer = nullptr;
static unsigned long long trace_buffer_capacity = 0;

// Starts recording: kernels launched from now on record their accesses.
inline void trace_begin() {
    const char* cap = std::getenv("TRACE_CAPACITY");
    trace_buffer_capacity = cap ? std::strtoull(cap, nullptr, 10) : (1ULL << 21);
    HANDLE_ERROR(cudaDeviceSynchronize());
    HANDLE_ERROR(cudaMalloc(&trace_buffer, trace_buffer_capacity * sizeof(TraceRecord)));
    unsigned long long zero = 0;
    HANDLE_ERROR(cudaMemcpyToSymbol(trace_count, &zero, sizeof(zero)));
    HANDLE_ERROR(cudaMemcpyToSymbol(trace_capacity, &trace_buffer_capacity, sizeof(zero)));
    const char* steps_text = std::getenv("TRACE_STEPS");
    int steps = steps_text ? std::atoi(steps_text) : 0x7fffffff;
    HANDLE_ERROR(cudaMemcpyToSymbol(trace_steps, &steps, sizeof(steps)));
    char only = std::getenv("TRACE_ONLY") ? std::getenv("TRACE_ONLY")[0] : 0;
    HANDLE_ERROR(cudaMemcpyToSymbol(trace_only, &only, sizeof(only)));
    long long sample = std::getenv("TRACE_SAMPLE") ? std::atoll(std::getenv("TRACE_SAMPLE")) : 1;
    HANDLE_ERROR(cudaMemcpyToSymbol(trace_sample, &sample, sizeof(sample)));
    HANDLE_ERROR(cudaMemcpyToSymbol(trace_records, &trace_buffer, sizeof(trace_buffer)));
}

// Stops recording and writes the CSV file; exits 1 when the records did not fit.
inline void trace_end() {
    if (trace_buffer == nullptr) return;  // not recording: a later call of a traced launch
    HANDLE_ERROR(cudaDeviceSynchronize());
    TraceRecord* none = nullptr;
    HANDLE_ERROR(cudaMemcpyToSymbol(trace_records, &none, sizeof(none)));
    unsigned long long count = 0;
    HANDLE_ERROR(cudaMemcpyFromSymbol(&count, trace_count, sizeof(count)));
    if (count > trace_buffer_capacity) {
        std::fprintf(stderr, "trace: %llu accesses, room for %llu: set TRACE_CAPACITY higher\n",
                     count, trace_buffer_capacity);
        std::exit(1);
    }
    std::vector<TraceRecord> r(count);
    HANDLE_ERROR(
        cudaMemcpy(r.data(), trace_buffer, count * sizeof(TraceRecord), cudaMemcpyDeviceToHost));
    HANDLE_ERROR(cudaFree(trace_buffer));
    trace_buffer = nullptr;
    std::sort(r.begin(), r.end(), [](const TraceRecord& a, const TraceRecord& b) {
        if (a.block_y != b.block_y) return a.block_y < b.block_y;
        if (a.block_x != b.block_x) return a.block_x < b.block_x;
        if (a.thread_y != b.thread_y) return a.thread_y < b.thread_y;
        if (a.thread_x != b.thread_x) return a.thread_x < b.thread_x;
        return a.ticket < b.ticket;  // one thread's accesses, in the order it made them
    });
    const char* path = std::getenv("TRACE_CSV") ? std::getenv("TRACE_CSV") : "trace.csv";
    FILE* f = std::fopen(path, "w");
    if (!f) {
        std::fprintf(stderr, "trace: cannot write %s\n", path);
        std::exit(1);
    }
    std::fprintf(
        f,
        "block_x,block_y,thread_x,thread_y,warp,lane,line,step,array,space,rw,index,byte,size\n");
    for (const TraceRecord& a : r) {
        // Global memory: the byte's offset from the 256-byte boundary at or below the array's
        // element 0 (cudaMalloc aligns to 256), so sectors and lines keep their real borders
        // and the file does not depend on where the array was allocated.
        unsigned long long byte = a.address;
        if (a.space != 's') {
            unsigned long long first = a.address - (unsigned long long)a.index * a.size;
            byte = a.address - (first & ~255ULL);
        }
        std::fprintf(f, "%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%c,%lld,%llu,%d\n", a.block_x, a.block_y,
                     a.thread_x, a.thread_y, a.warp, a.lane, a.line, a.step, a.array,
                     a.space == 's'   ? "shared"
                     : a.space == 'c' ? "constant"
                     : a.space == 'r' ? "register"
                                      : "global",
                     a.rw, a.index, byte, a.size);
    }
    std::fclose(f);
    std::printf("trace: %llu accesses written to %s\n", count, path);
}

// ---- several GPUs (chapter 7's ring) --------------------------------------------------------
// trace_begin_devices(K) / trace_end_devices(K) record on GPUs 0 .. K-1, one buffer and one
// counter per GPU (a __device__ variable is one per GPU). The CSV gets three more columns:
// `device` (the GPU whose thread, or whose stream's copy, made the access), `owner` (the GPU
// whose memory holds the element: another one for a peer read or write) and `phase`.
// trace_array(NAME, GPU, p, bytes) names an allocation: an access inside it is recorded as
// NAME, its index counted from the allocation's start (the program's pointer may start at a
// chunk), its owner GPU; `byte` from the allocation's start. trace_copy(...) records a copy
// that no thread makes (cudaMemcpyPeerAsync: the copy engine): one read and one write per
// element, block and thread -1, at the host line that queued it.

struct TraceArray {
    const char* name;
    int device;
    unsigned long long begin, bytes;
};
static std::vector<TraceArray> trace_arrays;
static std::vector<TraceRecord*> trace_device_buffers;
static std::vector<std::vector<TraceRecord>> trace_copies;  // per GPU, the copies queued

inline void trace_array(const char* name, int device, const void* p, unsigned long long bytes) {
    trace_arrays.push_back({name, device, (unsigned long long)(size_t)p, bytes});
}

inline void trace_begin_devices(int k) {
    int current = 0;
    HANDLE_ERROR(cudaGetDevice(&current));
    trace_device_buffers.assign(k, nullptr);
    trace_copies.assign(k, {});
    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        trace_begin();  // this GPU's own counter, settings and buffer
        trace_device_buffers[g] = trace_buffer;
        trace_buffer = nullptr;
    }
    HANDLE_ERROR(cudaSetDevice(current));
}

inline void trace_copy(int device, void* dst, const void* src, long long count, int size, int phase,
                       int step, int line) {
    if (device >= (int)trace_copies.size() || trace_device_buffers[device] == nullptr) return;
    for (long long i = 0; i < count; ++i)
        for (char rw : {'R', 'W'}) {
            TraceRecord r{};
            const char* p = (const char*)(rw == 'R' ? src : dst) + i * size;
            r.address = (unsigned long long)(size_t)p;
            r.index = i;
            r.ticket = trace_copies[device].size();
            r.block_x = r.block_y = r.thread_x = r.thread_y = r.warp = r.lane = -1;
            r.step = step;
            r.line = line;
            r.size = size;
            r.phase = phase;
            r.rw = rw;
            r.space = 'g';
            std::snprintf(r.array, sizeof(r.array), "%s", rw == 'R' ? "copy source" : "copy");
            trace_copies[device].push_back(r);
        }
}
#define TRACE_COPY(device, dst, src, count, phase, step) \
    trace_copy(device, dst, src, count, (int)sizeof(*(src)), phase, step, __LINE__)

inline void trace_end_devices(int k) {
    if (trace_device_buffers.empty()) return;  // not recording: a later call
    int current = 0;
    HANDLE_ERROR(cudaGetDevice(&current));
    std::vector<std::pair<int, TraceRecord>> all;
    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        HANDLE_ERROR(cudaDeviceSynchronize());
        TraceRecord* none = nullptr;
        HANDLE_ERROR(cudaMemcpyToSymbol(trace_records, &none, sizeof(none)));
        unsigned long long count = 0;
        HANDLE_ERROR(cudaMemcpyFromSymbol(&count, trace_count, sizeof(count)));
        if (count > trace_buffer_capacity) {
            std::fprintf(stderr,
                         "trace: GPU %d: %llu accesses, room for %llu: set TRACE_CAPACITY "
                         "higher\n",
                         g, count, trace_buffer_capacity);
            std::exit(1);
        }
        std::vector<TraceRecord> r(count);
        HANDLE_ERROR(cudaMemcpy(r.data(), trace_device_buffers[g], count * sizeof(TraceRecord),
                                cudaMemcpyDeviceToHost));
        HANDLE_ERROR(cudaFree(trace_device_buffers[g]));
        for (const TraceRecord& a : r) all.push_back({g, a});
        for (const TraceRecord& a : trace_copies[g]) all.push_back({g, a});
    }
    trace_device_buffers.clear();
    trace_copies.clear();
    HANDLE_ERROR(cudaSetDevice(current));
    std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) {
        const TraceRecord &a = x.second, &b = y.second;
        if (x.first != y.first) return x.first < y.first;
        if (a.phase != b.phase) return a.phase < b.phase;
        if (a.step != b.step) return a.step < b.step;
        if (a.block_y != b.block_y) return a.block_y < b.block_y;
        if (a.block_x != b.block_x) return a.block_x < b.block_x;
        if (a.thread_y != b.thread_y) return a.thread_y < b.thread_y;
        if (a.thread_x != b.thread_x) return a.thread_x < b.thread_x;
        return a.ticket < b.ticket;
    });
    const char* path = std::getenv("TRACE_CSV") ? std::getenv("TRACE_CSV") : "trace.csv";
    FILE* f = std::fopen(path, "w");
    if (!f) {
        std::fprintf(stderr, "trace: cannot write %s\n", path);
        std::exit(1);
    }
    std::fprintf(f,
                 "block_x,block_y,thread_x,thread_y,warp,lane,line,step,array,space,rw,index,"
                 "byte,size,device,owner,phase\n");
    for (const auto& [g, a] : all) {
        const char* name = a.array;
        long long index = a.index;
        unsigned long long byte = a.address;
        int owner = -1;
        for (const TraceArray& t : trace_arrays)
            if (a.space == 'g' && a.address >= t.begin && a.address < t.begin + t.bytes) {
                name = t.name;
                owner = t.device;
                byte = a.address - t.begin;
                index = (long long)(byte / a.size);
            }
        std::fprintf(f, "%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%c,%lld,%llu,%d,%d,%d,%d\n", a.block_x,
                     a.block_y, a.thread_x, a.thread_y, a.warp, a.lane, a.line, a.step, name,
                     a.space == 's' ? "shared" : "global", a.rw, index, byte, a.size, g, owner,
                     a.phase);
    }
    std::fclose(f);
    std::printf("trace: %zu accesses on %d GPUs written to %s\n", all.size(), k, path);
}
