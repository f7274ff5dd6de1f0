// common/timer.h -- timing GPU work honestly.
//
// A kernel launch returns before the kernel has run, so a CPU clock around a
// launch measures almost nothing. CUDA events are timestamps the GPU itself
// writes when it reaches them in its queue; the time between two of them is
// the time the GPU spent on the work in between.
//
// One measurement is noisy, and the first run of anything pays for one-time
// costs (loading the module, warming caches and clocks). So time_gpu() runs
// the work a few times untimed, then times it `repeats` times and reports the
// median (the typical run) together with the min and the max (the spread).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "handle_error.h"

// The independent clock (tests/clock/README.md): with CUDA_EXAMPLES_CLOCK set,
// each start/stop pair is bracketed, outside the events, by a 1-byte memset the
// GPU's own trace (CUPTI) sees: 0x5A before the start event, 0xA5 after the
// stop event. The trace then tells which kernels and copies ran between them,
// and tests/clock/clock.py compares their span with the events' time. Pairs are
// numbered on each GPU in the order they start (TimingStats::first_pair; each
// host thread of chapter 7 times its own GPU). Off by default: nothing is added
// to a run.
inline bool clock_marks_on() {
    static const bool on = std::getenv("CUDA_EXAMPLES_CLOCK") != nullptr;
    return on;
}
inline std::atomic<int>& clock_pairs_started(int device) {
    static std::atomic<int> count[64];
    return count[device & 63];
}
inline int& clock_last_device() {  // the GPU of this thread's last start mark
    thread_local int device = -1;
    return device;
}
// A start mark (0x5A) also counts a pair on its GPU; a stop mark (0xA5) only marks.
inline void clock_mark(int value, cudaStream_t stream) {
    static unsigned char* marks[64] = {};
    int device = 0;
    HANDLE_ERROR(cudaGetDevice(&device));
    if (device >= 64) return;
    if (!marks[device]) HANDLE_ERROR(cudaMalloc((void**)&marks[device], 2));
    HANDLE_ERROR(cudaMemsetAsync(marks[device] + (value == 0x5A ? 0 : 1), value, 1, stream));
    if (value == 0x5A) {
        ++clock_pairs_started(device);
        clock_last_device() = device;
    }
}

// A start/stop pair of events, created and destroyed with the object.
struct GpuTimer {
    cudaEvent_t start_event, stop_event;
    GpuTimer() {
        HANDLE_ERROR(cudaEventCreate(&start_event));
        HANDLE_ERROR(cudaEventCreate(&stop_event));
    }
    ~GpuTimer() {
        cudaEventDestroy(start_event);
        cudaEventDestroy(stop_event);
    }
    GpuTimer(const GpuTimer&) = delete;
    GpuTimer& operator=(const GpuTimer&) = delete;

    void start(cudaStream_t stream = 0) {
        if (clock_marks_on()) clock_mark(0x5A, stream);
        HANDLE_ERROR(cudaEventRecord(start_event, stream));
    }
    // Records the stop event, waits for the GPU to reach it, returns milliseconds.
    float stop(cudaStream_t stream = 0) {
        HANDLE_ERROR(cudaEventRecord(stop_event, stream));
        if (clock_marks_on()) clock_mark(0xA5, stream);
        HANDLE_ERROR(cudaEventSynchronize(stop_event));
        float ms = 0;
        HANDLE_ERROR(cudaEventElapsedTime(&ms, start_event, stop_event));
        return ms;
    }
};

// A wall clock for CPU work (and for anything that mixes CPU and GPU work).
struct HostTimer {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    double stop_ms() const {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
            .count();
    }
};

struct TimingStats {
    double median_ms = 0, min_ms = 0, max_ms = 0;
    int repeats = 0;
    int first_pair = -1;    // the clock's number of the first timed start/stop pair...
    int clock_device = -1;  // ...on this GPU
};

inline TimingStats summarize(std::vector<double> samples_ms) {
    TimingStats s;
    if (samples_ms.empty()) return s;
    std::sort(samples_ms.begin(), samples_ms.end());
    size_t n = samples_ms.size();
    s.median_ms = (n % 2) ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
    s.min_ms = samples_ms.front();
    s.max_ms = samples_ms.back();
    s.repeats = (int)n;
    // The samples were just timed, one start/stop pair each: the last n pairs.
    if (clock_marks_on() && clock_last_device() >= 0) {
        s.clock_device = clock_last_device();
        s.first_pair = clock_pairs_started(s.clock_device) - (int)n;
    }
    return s;
}

// Times `work` (anything callable that queues GPU work on `stream`):
// `warmups` untimed runs, then `repeats` runs timed one by one with events.
template <typename Work>
TimingStats time_gpu(Work work, int repeats, int warmups = 2, cudaStream_t stream = 0) {
    for (int i = 0; i < warmups; ++i) work();
    HANDLE_ERROR(cudaStreamSynchronize(stream));
    GpuTimer timer;
    std::vector<double> samples;
    for (int i = 0; i < repeats; ++i) {
        timer.start(stream);
        work();
        samples.push_back(timer.stop(stream));
    }
    return summarize(samples);
}
