// streams.cu -- hiding copies behind kernels with CUDA streams (chapter 6, part 2 of 2).
//
// N words go to the GPU, a kernel transforms each one, and the results come
// back, in chunks of three operations: copy in (H2D) -> kernel -> copy out (D2H).
// The same chunks run four ways:
//   default-sync    cudaMemcpy and launches on the default stream: nothing overlaps
//   one-stream      cudaMemcpyAsync into one stream: the CPU no longer waits, but
//                   one stream runs its operations strictly in order
//   depth-first     chunk c in stream c % S, its three operations at once (the
//                   book's first double-stream version)
//   breadth-first   S chunks at a time: their copies in, kernels, copies out (the
//                   book's corrected version)
// Copies in, kernels and copies out of different streams can run at once (a copy
// engine per direction, the SMs). Each mode is checked against the CPU (check.h),
// timed against the ideal and drawn from events around each operation (timeline.h).
//
// Source: "GPU Programming" (CSInParallel, 2012), chapter 6, and the Bologna "CUDA
// Programming" slides, streams; the book is CUDA by Example, chapter 10.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o streams streams.cu
// Run:
//   ./streams                          2^26 words (256 MiB each way), 16 chunks, 4 streams
//   ./streams --streams 2              the book's two streams: see why 2 is not enough

#include <algorithm>
#include <cstring>
#include "../common/report.h"  // also args.h, device_info.h, timer.h, handle_error.h
#include "check.h"
#include "schedule.h"  // run_op refuses an operation that does not exist or breaks the order
#include "timeline.h"

const int THREADS_PER_BLOCK = 256;

// The kernel's work: a linear congruential random number generator, x -> a*x + c
// (mod 2^32), applied `steps` times to each word. It stands in for any computation
// whose cost grows with `steps` (as long as a copy, if we like), and the CPU checks
// it cheaply: `steps` steps are one affine map (check.h).
__global__ void lcg_steps(const word_t* in, word_t* out, long long n, int steps, word_t a,
                          word_t c) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        word_t x = in[i];
        // a and c arrive as arguments, and the loop is not unrolled, so the
        // compiler cannot merge several steps into one: the work stays `steps`.
#pragma unroll 1
        for (int s = 0; s < steps; s++) x = a * x + c;
        out[i] = x;
    }
}

// One launch for `n` words in `stream`: at most `max_blocks` blocks, the grid-stride loop.
void launch_lcg_steps(const word_t* dev_in, word_t* dev_out, long long n, int steps, int max_blocks,
                      cudaStream_t stream) {
    int blocks = (int)std::min<long long>(ceil_div(n, THREADS_PER_BLOCK), max_blocks);
    lcg_steps<<<blocks, THREADS_PER_BLOCK, 0, stream>>>(dev_in, dev_out, n, steps, LCG_A, LCG_C);
    CHECK_LAUNCH();
}

// Chunks: N words into C chunks whose sizes differ by at most one word. The
// first N % C chunks take one word more, so no chunk is ever empty (C <= N).
long long chunk_begin(long long n, int chunks, int c) {
    return c * (n / chunks) + std::min<long long>(c, n % chunks);
}
long long chunk_size(long long n, int chunks, int c) {
    return n / chunks + (c < n % chunks ? 1 : 0);
}

// Everything the modes share, owned: created with the object, freed with it. Pinned
// host memory, or cudaMemcpyAsync stages through the driver and nothing overlaps
// (part 1). Chunk c uses stream c % S and that stream's pair of device buffers;
// chunk c + S reuses them only after chunk c has finished: one stream runs in order.
struct Pipeline {
    long long n;
    int chunks, streams, max_blocks;
    int steps = 1;  // the kernel's work per word
    word_t *host_in, *host_out;
    std::vector<cudaStream_t> stream;
    std::vector<word_t*> dev_in, dev_out;  // one pair per stream
    long long guard;  // each buffer's last word, past the largest chunk (check.h)
    bool record = false;
    Timeline events;         // timeline.h: before and after every operation, when `record` is set
    ScheduleCheck schedule;  // schedule.h: what run_op is asked to do, checked first

    Pipeline(long long n_, int chunks_, int streams_, int max_blocks_)
        : n(n_),
          chunks(chunks_),
          streams(streams_),
          max_blocks(max_blocks_),
          events(chunks_),
          schedule(chunks_, streams_) {
        HANDLE_ERROR(cudaHostAlloc((void**)&host_in, n * sizeof(word_t), cudaHostAllocDefault));
        HANDLE_ERROR(cudaHostAlloc((void**)&host_out, n * sizeof(word_t), cudaHostAllocDefault));
        fill_input(host_in, n);
        guard = chunk_size(n, chunks, 0);
        stream.resize(streams);
        dev_in.resize(streams);
        dev_out.resize(streams);
        for (int s = 0; s < streams; s++) {
            // cudaStreamCreate makes a "blocking" stream: it waits for work on the
            // default stream, and the default stream waits for it. So events on the
            // default stream (time_gpu's) bracket a mode's work in every stream.
            HANDLE_ERROR(cudaStreamCreate(&stream[s]));
            HANDLE_ERROR(cudaMalloc((void**)&dev_in[s], (guard + 1) * sizeof(word_t)));
            HANDLE_ERROR(cudaMalloc((void**)&dev_out[s], (guard + 1) * sizeof(word_t)));
        }
    }
    ~Pipeline() {
        HANDLE_ERROR(cudaDeviceSynchronize());
        for (int s = 0; s < streams; s++) {
            HANDLE_ERROR(cudaStreamDestroy(stream[s]));
            HANDLE_ERROR(cudaFree(dev_in[s]));
            HANDLE_ERROR(cudaFree(dev_out[s]));
        }
        HANDLE_ERROR(cudaFreeHost(host_in));
        HANDLE_ERROR(cudaFreeHost(host_out));
    }
    Pipeline(const Pipeline&) = delete;  // it owns what it holds: never copied
    Pipeline& operator=(const Pipeline&) = delete;
};

// One operation of one chunk. `synchronous`: the blocking call on the default stream
// (cudaMemcpy, a launch on stream 0); otherwise the asynchronous call in stream s.
void run_op(Pipeline& p, Op op, int c, int s, bool synchronous) {
    p.schedule.operation(op, c, s, synchronous);  // exits with a message if it cannot be done
    cudaStream_t stream = synchronous ? 0 : p.stream[s];
    int buffer = c % p.streams;
    word_t *in = p.host_in + chunk_begin(p.n, p.chunks, c), *dev_in = p.dev_in[buffer];
    word_t *out = p.host_out + chunk_begin(p.n, p.chunks, c), *dev_out = p.dev_out[buffer];
    long long count = chunk_size(p.n, p.chunks, c);
    size_t bytes = count * sizeof(word_t);
    if (p.record) HANDLE_ERROR(cudaEventRecord(p.events.begin[3 * c + op], stream));
    if (op == H2D && synchronous) {
        HANDLE_ERROR(cudaMemcpy(dev_in, in, bytes, cudaMemcpyHostToDevice));
    } else if (op == H2D) {
        HANDLE_ERROR(cudaMemcpyAsync(dev_in, in, bytes, cudaMemcpyHostToDevice, stream));
    } else if (op == KERNEL) {
        launch_lcg_steps(dev_in, dev_out, count, p.steps, p.max_blocks, stream);
    } else if (synchronous) {
        HANDLE_ERROR(cudaMemcpy(out, dev_out, bytes, cudaMemcpyDeviceToHost));
    } else {
        HANDLE_ERROR(cudaMemcpyAsync(out, dev_out, bytes, cudaMemcpyDeviceToHost, stream));
    }
    if (p.record) HANDLE_ERROR(cudaEventRecord(p.events.end[3 * c + op], stream));
}

enum Mode { DEFAULT_SYNC = 0, ONE_STREAM = 1, DEPTH_FIRST = 2, BREADTH_FIRST = 3 };
const int MODES = 4;
const char* MODE_NAMES[MODES] = {"default-sync", "one-stream", "depth-first", "breadth-first"};

// Queues every chunk of one mode. Returns at once for the asynchronous modes:
// the caller synchronizes (or records an event on the default stream).
void run_mode(Pipeline& p, Mode mode) {
    if (p.record) HANDLE_ERROR(cudaEventRecord(p.events.origin, 0));
    p.schedule.start_mode();
    if (mode == DEFAULT_SYNC || mode == ONE_STREAM || mode == DEPTH_FIRST) {
        // LAB ch06.depth-first {
        for (int c = 0; c < p.chunks; c++) {
            bool synchronous = (mode == DEFAULT_SYNC);
            int s = (mode == DEPTH_FIRST) ? c % p.streams : 0;
            run_op(p, H2D, c, s, synchronous);
            run_op(p, KERNEL, c, s, synchronous);
            run_op(p, D2H, c, s, synchronous);
        }
        // LAB }
    } else {  // BREADTH_FIRST: a round of S chunks, one stage at a time
        // LAB ch06.breadth-first {
        for (int first = 0; first < p.chunks; first += p.streams) {
            int last = std::min(first + p.streams, p.chunks);
            for (int op = H2D; op <= D2H; op++)
                for (int c = first; c < last; c++) run_op(p, (Op)op, c, c % p.streams, false);
        }
        // LAB }
    }
    p.schedule.finish_mode();  // every chunk's three operations queued
}

// One stage of every chunk, alone: in one stream, nothing to overlap with.
void run_stage_alone(Pipeline& p, Op op) {
    for (int c = 0; c < p.chunks; c++) run_op(p, op, c, 0, false);
}

// One mode: one checked run with the timeline recorded, then timed runs.
ModeRun run_checked_and_timed(Pipeline& p, Mode mode, int repeats) {
    ModeRun r;
    r.name = MODE_NAMES[mode];
    r.streams = mode >= DEPTH_FIRST ? p.streams : 1;  // the synchronous modes use one
    poison(p.dev_in, p.guard + 1);                    // guard words included
    poison(p.dev_out, p.guard + 1);
    std::memset(p.host_out, 0xFF, p.n * sizeof(word_t));
    HANDLE_ERROR(cudaDeviceSynchronize());
    p.record = true;
    run_mode(p, mode);
    HANDLE_ERROR(cudaDeviceSynchronize());
    p.record = false;
    r.wrong_words = count_wrong(p.host_in, p.host_out, p.n, p.steps);
    r.guard_words_written = guards_written(p.dev_in, p.guard) + guards_written(p.dev_out, p.guard);
    r.timeline = p.events.read(r.streams);
    // The events of time_gpu() go on the default stream; the streams are
    // blocking streams, so the stop event waits for the work in all of them.
    r.time = time_gpu([&] { run_mode(p, mode); }, repeats, 1);
    return r;
}

#ifndef CUDA_EXAMPLES_NO_MAIN
// The lesson: with streams, copies in, kernels and copies out of different
// chunks overlap, so the best mode of several streams beats one stream, and
// beats the default stream's synchronous copies, by a good part of what the
// ideal overlap allows (in_order / ideal: 2.75 on an H200 with --work auto).
void check_overlap_lesson(Report& report, const std::vector<ModeRun>& runs, double bytes,
                          double ideal, double in_order, int copy_engines) {
    if (copy_engines < 2)
        return report.lesson_not_shown(std::to_string(copy_engines) +
                                       " copy engine(s): the two directions take turns");
    if (bytes < 32.0 * 1048576 || in_order / ideal < 1.5)
        return report.lesson_not_checked(
            "the chunks are too small or the stages too unequal for "
            "overlap to show: use --n 2^23 or more, --work auto");
    double best = std::min(runs[DEPTH_FIRST].time.median_ms, runs[BREADTH_FIRST].time.median_ms);
    // H200, 3 runs (2^26 words, 16 chunks, 4 streams): one stream 2.47x (2.465..2.469)
    // the best mode's time, the default stream 2.50x (2.49..2.51), ideal 2.75x. At
    // least 45% of the ideal gain (1.79x here): room for a busy machine, while
    // kernels on the legacy default stream (which waits for every stream) make 1.0.
    double at_least = 1 + 0.45 * (in_order / ideal - 1);
    report.lesson("one stream's time over the best mode's", runs[ONE_STREAM].time.median_ms / best,
                  at_least);
    report.lesson("the default stream's time over the best mode's",
                  runs[DEFAULT_SYNC].time.median_ms / best, at_least);
}

const char* USAGE =
    "usage: streams [--n N] [--chunks C] [--streams S] [--work K|auto] [--repeats R] [--json]\n"
    "  --n N          32-bit words to send, transform and fetch back (default 2^26 = 256 MiB)\n"
    "  --chunks C     pieces of the work, 1..N and at most 4096 (default 16), sizes within 1\n"
    "  --streams S    streams for the depth-first and breadth-first modes, 2..64 (default 4)\n"
    "  --work K       generator steps per word in the kernel, or 'auto' (the default):\n"
    "                 as many as make one chunk's kernel as long as one chunk's copy in\n"
    "  --repeats R    timed runs of each stage and mode after a warm-up (default 5)\n"
    "  --json         also print one JSON record per stage and mode, and the timeline\n"
    "exit codes: 0 every mode's result matches the CPU, 1 one does not (or a CUDA error),\n"
    "            2 bad usage or a size the host or the GPU cannot hold, 77 no CUDA device\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    long long n = args.integer("--n", 1LL << 26, 1, LLONG_MAX);
    int chunks = (int)args.integer("--chunks", 16, 1, 4096);
    int streams_asked = (int)args.integer("--streams", 4, 2, 64);
    std::string work = args.text("--work", "auto");
    int steps = work == "auto" ? 0 : (int)args.to_integer("--work", work, 1, 1000000);
    Report report(args, 5);
    if (chunks > n)
        args.fail("--chunks " + std::to_string(chunks) + " is more than the " + std::to_string(n) +
                  " words of --n: every chunk needs at least one word");
    size_t bytes = checked_bytes(args, n, sizeof(word_t), 1);
    size_t host_bytes = checked_bytes(args, n, sizeof(word_t), 2);  // pinned input and output
    int streams = std::min(streams_asked, chunks);  // more streams than chunks would sit idle
    long long largest = chunk_size(n, chunks, 0);   // each buffer: the largest chunk, a guard
    const DeviceInfo& dev =
        report.start(checked_bytes(args, largest + 1, sizeof(word_t), 2 * streams), host_bytes);
    print_plan(dev, n, chunks, largest, streams, streams_asked, steps, report.repeats());

    // The pinned host buffers, the streams, their device buffers and the events.
    Pipeline p(n, chunks, streams, 8 * dev.sm_count);

    // Each stage alone, for all chunks, in one stream: nothing overlaps.
    int repeats = report.repeats();
    TimingStats h2d = time_gpu([&] { run_stage_alone(p, H2D); }, repeats, 1);
    p.steps = steps ? steps : calibrate_steps(h2d.median_ms, [&](int k) {
        p.steps = k;  // the kernel's time alone, with k steps per word
        return time_gpu([&] { run_stage_alone(p, KERNEL); }, 3, 1).median_ms;
    });
    TimingStats kernel = time_gpu([&] { run_stage_alone(p, KERNEL); }, repeats, 1);
    TimingStats d2h = time_gpu([&] { run_stage_alone(p, D2H); }, repeats, 1);
    double ideal = ideal_pipelined_ms(h2d.median_ms, kernel.median_ms, d2h.median_ms, chunks,
                                      dev.copy_engines);
    report.size("n", n).size("bytes_each_way", bytes).size("chunks", chunks);
    report.size("streams", streams).size("steps", p.steps).launch(p.max_blocks, THREADS_PER_BLOCK);
    double in_order = report_stages(report, h2d, kernel, d2h, bytes, p.steps, steps == 0, ideal);

    // The same chunks in each mode, each checked against the CPU and timed.
    std::vector<ModeRun> runs;
    for (int m = 0; m < MODES; m++) runs.push_back(run_checked_and_timed(p, (Mode)m, repeats));
    double copies_floor = copies_floor_ms(h2d.median_ms, d2h.median_ms, dev.copy_engines);
    long long wrong =
        report_modes(report, runs, bytes, ideal, in_order, copies_floor, dev.copy_engines);
    check_overlap_lesson(report, runs, bytes, ideal, in_order, dev.copy_engines);
    report_timeline(report, runs, n, ideal, copies_floor);
    return report.verdict(wrong == 0, "%lld wrong or guard words written, %d modes", wrong, MODES);
}
#endif
