// timeline.h -- how streams.cu's runs are measured and shown (chapter 6, part 2).
//
// streams.cu records a CUDA event before and after every operation it queues.
// This header turns those events into a timeline: one segment per operation
// (which stream, which chunk, when its stream reached it, when it ran, when it
// ended), drawn in the terminal and written as JSON for scripts/tour.py. It
// also computes the ideal pipelined time that every mode is measured against,
// and reports the stages and the modes. Read streams.cu first: nothing here is
// needed to understand streams.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include "../common/handle_error.h"
#include "../common/report.h"

// The three operations of a chunk, in the order a stream runs them.
enum Op { H2D = 0, KERNEL = 1, D2H = 2 };
const char* OP_NAMES[3] = {"h2d", "kernel", "d2h"};

// Below 32 MiB each way a stage's time alone is mostly its fixed costs (a launch, a copy's
// set-up, some microseconds each), which the modes overlap with one another: on an H200 at
// --n 5, one stream took 0.050 ms against 0.066 ms for its stages alone. There the stages'
// times bound nothing: the ideal-overlap floor is not checked (nor the lesson: streams.cu).
const double STAGES_BOUND_BYTES = 32.0 * 1048576;

// The ideal pipelined time, from the time each stage takes for all chunks
// when it runs alone. With equal chunks, the busiest resource ("bottleneck")
// works without a pause once the first chunk reaches it; before that we wait
// for one chunk's share of the stages ahead of it, after it for one chunk's
// share of the stages behind it: ideal = bottleneck + (sum - bottleneck) / C.
// (Three equal stages of p per chunk: C*p + 2*p, against 3*C*p in order.)
// The resources depend on the copy engines:
//   2 or more   H2D, kernel and D2H can all run at once: three resources
//   1           the two copy directions take turns on the one engine
//   0           no copy overlaps a kernel: the stages simply add up
double ideal_pipelined_ms(double h2d_ms, double kernel_ms, double d2h_ms, int chunks,
                          int copy_engines) {
    double sum = h2d_ms + kernel_ms + d2h_ms;
    if (copy_engines <= 0) return sum;
    double bottleneck = copy_engines == 1 ? std::max(h2d_ms + d2h_ms, kernel_ms)
                                          : std::max(h2d_ms, std::max(kernel_ms, d2h_ms));
    return bottleneck + (sum - bottleneck) / chunks;
}

// The least time every chunk's copies take, whatever the schedule: each direction's copies
// share that direction's link (with one copy engine, both directions share it).
double copies_floor_ms(double h2d_ms, double d2h_ms, int copy_engines) {
    return copy_engines >= 2 ? std::max(h2d_ms, d2h_ms) : h2d_ms + d2h_ms;
}

// A recorded operation, in milliseconds from the first one's start.
// start_ms is when its stream reached it (the event before it fired), which
// is not always when it began to run: a copy queued in stream 3 waits while
// the copy engine serves stream 2. run_ms is our estimate of when it did run
// (see infer_run_starts below); start_ms and end_ms are what was measured.
struct Segment {
    int stream, chunk;
    Op op;
    double start_ms, end_ms, run_ms;
};

// Operations of one kind share one resource (the link in one direction, or
// the SMs, which one of these kernels fills), so they run one after another.
// Taken in the order they finished, each one can have started running only
// when it was reached AND the one before it had finished.
void infer_run_starts(std::vector<Segment>* segments) {
    for (int op = H2D; op <= D2H; op++) {
        std::vector<Segment*> same;
        for (Segment& seg : *segments)
            if (seg.op == op) same.push_back(&seg);
        std::sort(same.begin(), same.end(),
                  [](const Segment* x, const Segment* y) { return x->end_ms < y->end_ms; });
        double previous_end = 0;
        for (Segment* seg : same) {
            seg->run_ms = std::min(seg->end_ms, std::max(seg->start_ms, previous_end));
            previous_end = seg->end_ms;
        }
    }
}

// The events of one run of `chunks` chunks, created with the object and
// destroyed with it: `origin`, recorded first, then begin[3 * c + op] and
// end[3 * c + op] around operation `op` of chunk c.
struct Timeline {
    int chunks;
    cudaEvent_t origin;
    std::vector<cudaEvent_t> begin, end;

    explicit Timeline(int chunks_) : chunks(chunks_), begin(3 * chunks_), end(3 * chunks_) {
        HANDLE_ERROR(cudaEventCreate(&origin));
        for (int i = 0; i < 3 * chunks; i++) {
            HANDLE_ERROR(cudaEventCreate(&begin[i]));
            HANDLE_ERROR(cudaEventCreate(&end[i]));
        }
    }
    ~Timeline() {
        for (int i = 0; i < 3 * chunks; i++) {
            HANDLE_ERROR(cudaEventDestroy(begin[i]));
            HANDLE_ERROR(cudaEventDestroy(end[i]));
        }
        HANDLE_ERROR(cudaEventDestroy(origin));
    }
    Timeline(const Timeline&) = delete;  // it owns its events: never copied
    Timeline& operator=(const Timeline&) = delete;

    // The segments, once the run has ended; chunk c ran in stream c % streams.
    std::vector<Segment> read(int streams) const;
};

std::vector<Segment> Timeline::read(int streams) const {
    std::vector<Segment> segments;
    double first = 1e300;
    for (int c = 0; c < chunks; c++) {
        for (int op = H2D; op <= D2H; op++) {
            float begin_ms = 0, end_ms = 0;
            HANDLE_ERROR(cudaEventElapsedTime(&begin_ms, origin, begin[3 * c + op]));
            HANDLE_ERROR(cudaEventElapsedTime(&end_ms, origin, end[3 * c + op]));
            segments.push_back({c % streams, c, (Op)op, begin_ms, end_ms, begin_ms});
            first = std::min(first, (double)begin_ms);
        }
    }
    for (Segment& seg : segments) {
        seg.start_ms -= first;
        seg.end_ms -= first;
        seg.run_ms -= first;
    }
    infer_run_starts(&segments);
    return segments;
}

double timeline_span_ms(const std::vector<Segment>& segments) {
    double span = 0;
    for (const Segment& seg : segments) span = std::max(span, seg.end_ms);
    return span;
}

// The timeline in the terminal: one row per stream, time running left to
// right. H = copy in, K = kernel, D = copy out; the letter's case alternates
// from chunk to chunk so that neighbours can be told apart, and '-' is an
// operation its stream has reached but that waits for its engine. Below, one
// row per kind of operation: '#' wherever one is running. Where those rows
// have '#' in the same column, operations overlapped.
void print_timeline(const std::vector<Segment>& segments, int streams, int width) {
    double span = timeline_span_ms(segments);
    if (span <= 0) span = 1e-3;
    std::vector<std::string> rows(streams, std::string(width, '.'));
    std::vector<std::string> busy(3, std::string(width, ' '));
    const char LETTERS[3] = {'H', 'K', 'D'};
    for (const Segment& seg : segments) {
        int from = std::min(width - 1, (int)(seg.start_ms / span * width));
        int run = std::min(width - 1, (int)(seg.run_ms / span * width));
        int to = std::max(run + 1, std::min(width, (int)(seg.end_ms / span * width + 0.5)));
        char letter = LETTERS[seg.op];
        if (seg.chunk % 2 == 1) letter = (char)(letter - 'A' + 'a');
        for (int x = from; x < run; x++) rows[seg.stream][x] = '-';
        for (int x = run; x < to; x++) {
            rows[seg.stream][x] = letter;
            busy[seg.op][x] = '#';
        }
    }
    for (int s = 0; s < streams; s++) std::printf("    stream %-3d |%s|\n", s, rows[s].c_str());
    const char* BUSY_NAMES[3] = {"copy in", "kernels", "copy out"};
    for (int op = 0; op < 3; op++)
        std::printf("    %-10s |%s|\n", BUSY_NAMES[op], busy[op].c_str());
    std::printf("    %-10s  0 ms%*s%.3f ms\n", "", width - 8, "", span);
}

void print_timeline_legend() {
    std::printf(
        "    H/h copy in, K/k kernel, D/d copy out (case alternates by chunk); "
        "'-' reached but\n    waiting for its engine (inferred: operations of one kind "
        "run one at a time); '.' idle\n");
}

// The segments as a JSON array, for the timeline record of --json:
// [{"stream":0,"chunk":0,"op":"h2d","start_ms":..,"end_ms":..,"run_start_ms":..},...]
std::string segments_json(const std::vector<Segment>& segments) {
    std::string out = "[";
    for (size_t i = 0; i < segments.size(); i++) {
        const Segment& seg = segments[i];
        char text[200];
        std::snprintf(text, sizeof text,
                      "%s{\"stream\":%d,\"chunk\":%d,\"op\":\"%s\",\"start_ms\":%.6g,"
                      "\"end_ms\":%.6g,\"run_start_ms\":%.6g}",
                      i ? "," : "", seg.stream, seg.chunk, OP_NAMES[seg.op], seg.start_ms,
                      seg.end_ms, seg.run_ms);
        out += text;
    }
    return out + "]";
}

// "--work auto": the kernel's time grows in proportion to its steps, so scale a
// first guess by copy time / kernel time, and correct once more. kernel_ms(k)
// times the kernel alone with k steps per word.
template <typename KernelTime>
int calibrate_steps(double h2d_ms, KernelTime kernel_ms) {
    int steps = 256;
    for (int round = 0; round < 2; round++) {
        double scaled = steps * h2d_ms / kernel_ms(steps);
        steps = (int)std::max(1.0, std::min(scaled + 0.5, 1e6));
    }
    return steps;
}

// What the run will do, before it starts. A long run says so first. Each stage
// alone runs repeats + 1 times and each of the 4 modes repeats + 2 times;
// conservative rates: copies at 5 GB/s (the H200's link: 55 GB/s), the kernel at
// 1e12 generator steps a second (an H200: 6.6e12). With --work auto (steps = 0)
// a chunk's kernel takes as long as its copy in.
void print_plan(const DeviceInfo& dev, long long n, int chunks, long long largest_chunk,
                int streams, int streams_asked, int steps, int repeats) {
    std::printf("Copy engines (cudaDevAttrAsyncEngineCount): %d -- %s\n", dev.copy_engines,
                dev.copy_engines >= 2 ? "a copy in, a kernel and a copy out can all run at once"
                : dev.copy_engines == 1
                    ? "a copy can overlap a kernel, but the two directions take turns"
                    : "copies cannot overlap kernels on this GPU");
    double bytes = 4.0 * n;
    std::printf(
        "streams: N = %lld words (%.1f MiB each way), %d chunks of %lld%s words, "
        "%d streams%s\n",
        n, bytes / 1048576.0, chunks, largest_chunk, n % chunks ? " or one fewer" : "", streams,
        streams < streams_asked ? " (no more than there are chunks)" : "");
    double copy_s = bytes / 5e9, kernel_s = steps ? n * (double)steps / 1e12 : copy_s;
    int passes = 3 * (repeats + 1) + 4 * (repeats + 2);
    announce_long_run(passes * (2 * copy_s + kernel_s),
                      "estimated for copies at 5 GB/s and 1e12 generator steps a second");
}

// Each stage alone, all chunks in one stream: a line and a record each.
// Returns the time of the three in order, nothing overlapped.
double report_stages(Report& report, const TimingStats& h2d, const TimingStats& kernel,
                     const TimingStats& d2h, double bytes, int steps, bool auto_work,
                     double ideal) {
    std::printf("Kernel work: %d generator steps per word%s\n\n", steps,
                auto_work ? " (auto)" : "");
    std::printf("Each stage alone, every chunk in one stream:\n");
    report.record("stage-h2d", "copy in  (H2D)", h2d, bytes / (h2d.median_ms * 1e6), NAN, NAN,
                  nullptr, "pcie");
    report.record("stage-kernel", "kernel", kernel, NAN, NAN, NAN, nullptr);
    report.record("stage-d2h", "copy out (D2H)", d2h, bytes / (d2h.median_ms * 1e6), NAN, NAN,
                  nullptr, "pcie");
    double in_order = h2d.median_ms + kernel.median_ms + d2h.median_ms;
    std::printf("  in order, nothing overlapped: %.3f ms; ideal pipelined: %.3f ms\n\n", in_order,
                ideal);
    return in_order;
}

// A mode's result: its time, its check (wrong result words, guard words
// written), and its timeline (the events of the checked run).
struct ModeRun {
    const char* name;
    TimingStats time;
    long long wrong_words, guard_words_written;
    std::vector<Segment> timeline;
    int streams;  // the timeline's rows: 1 for the modes that use one stream
};

// Each mode against the ideal (a line and a record each), then its timeline.
// `runs[0]` is the synchronous mode, the one every speed-up is relative to.
// Returns the wrong result words and written guard words of all modes together.
long long report_modes(Report& report, const std::vector<ModeRun>& runs, double bytes, double ideal,
                       double in_order, double copies_floor, int copy_engines) {
    long long wrong = 0;
    std::printf("Each mode, both directions' bytes per second, against the ideal:\n");
    for (const ModeRun& r : runs) {
        double ms = r.time.median_ms;
        // Each mode against its own ideal: one stream overlaps nothing (the stages add up),
        // several overlap at best as ideal_pipelined_ms says. The floor, below which a time is
        // impossible: one stream's stages added up; for several, the copies alone
        // (copies_floor_ms), since kernels of different streams also overlap one another
        // (--work 1437 on an H200: 16 kernels alone 14.3 ms one after another, the
        // depth-first mode 12.6 ms in all, 118% of the ideal that runs them one at a time).
        double own_ideal = r.streams > 1 ? ideal : in_order;
        report.record(r.name, r.name, r.time, 2 * bytes / (ms * 1e6), NAN, 100 * own_ideal / ms,
                      "ideal-overlap", "pcie-duplex");  // both directions at once
        if (bytes >= STAGES_BOUND_BYTES)
            report.time_floor(r.name, ms, r.streams > 1 ? copies_floor : in_order);
        report.extra("ideal_ms", own_ideal);
        report.extra("in_order_ms", in_order);
        report.extra("speedup_vs_sync", runs[0].time.median_ms / ms);
        report.extra("wrong_words", r.wrong_words);
        report.extra("guard_words_written", r.guard_words_written);
        report.extra("copy_engines", copy_engines);
        wrong += r.wrong_words + r.guard_words_written;
    }
    std::printf("\nTimelines (one checked run of each mode, events around every operation):\n");
    for (const ModeRun& r : runs) {
        std::printf("  %s: %.2fx the speed of %s, check %s\n", r.name,
                    runs[0].time.median_ms / r.time.median_ms, runs[0].name,
                    r.wrong_words || r.guard_words_written ? "FAIL" : "PASS");
        print_timeline(r.timeline, r.streams, 96);
    }
    print_timeline_legend();
    return wrong;
}

// The timeline record of --json: the fastest mode of several streams (one run,
// as drawn above) against the ideal overlap, its segments, and every mode's
// segments in all_modes (scripts/plot_results.py draws them).
void report_timeline(Report& report, const std::vector<ModeRun>& runs, long long n, double ideal,
                     double copies_floor) {
    const ModeRun* best = nullptr;
    for (const ModeRun& r : runs)
        if (r.streams > 1 && (!best || r.time.median_ms < best->time.median_ms)) best = &r;
    if (!best) return;
    TimingStats one_run;
    one_run.median_ms = one_run.min_ms = one_run.max_ms = timeline_span_ms(best->timeline);
    one_run.repeats = 1;
    double span = one_run.median_ms;
    report.record("timeline", "the timeline drawn above (one run)", one_run,
                  2 * 4.0 * n / (span * 1e6), NAN, 100 * ideal / span, "ideal-overlap",
                  "pcie-duplex");
    if (4.0 * n >= STAGES_BOUND_BYTES) report.time_floor("timeline", span, copies_floor);
    report.extra("mode", best->name);
    report.extra("ideal_ms", ideal);
    report.extra_json("segments", segments_json(best->timeline));
    std::string all_modes = "[";
    for (const ModeRun& r : runs)
        all_modes += std::string(all_modes.size() > 1 ? "," : "") +
                     "{\"mode\":" + JsonRecord::quote(r.name) +
                     ",\"segments\":" + segments_json(r.timeline) + "}";
    report.extra_json("all_modes", all_modes + "]");
}
