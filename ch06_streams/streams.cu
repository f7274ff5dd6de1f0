// streams.cu -- hiding copies behind kernels with CUDA streams (chapter 6, part 2 of 2).
//
// The work: N words go to the GPU, a kernel transforms each one, and the
// results come back. Split into chunks, each chunk is three operations:
//   copy in (H2D)  ->  kernel  ->  copy out (D2H)
// and the same chunks are run four ways:
//   default-sync    cudaMemcpy and launches on the default stream: each call
//                   waits for the one before, nothing overlaps
//   one-stream      cudaMemcpyAsync into one stream: the CPU no longer waits,
//                   but one stream runs its operations strictly in order
//   depth-first     chunk c goes into stream c % S, all three of its
//                   operations at once (the book's first double-stream version)
//   breadth-first   S chunks at a time: their copies in, then their kernels,
//                   then their copies out (the book's corrected version)
// A copy in one stream can run while a kernel of another stream runs and while
// a copy in the other direction runs: each direction has its own copy engine
// (see "copy engines" in the output), and the kernel runs on the SMs.
//
// Every mode's result is checked against the CPU. Each stage is also timed on
// its own, which gives the ideal pipelined time; every mode is reported
// against it, and drawn as a per-stream timeline from events recorded around
// each operation.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o streams streams.cu
// Run:
//   ./streams                          2^26 words (256 MiB each way), 16 chunks, 4 streams
//   ./streams --streams 2              the book's two streams: see why 2 is not enough
//   ./streams --chunks 7 --n 1000003   chunks of unequal size are fine
//   ./streams --help                   every option and the exit codes

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"

typedef uint32_t word_t;

// The kernel's work is a linear congruential random number generator,
// x -> a*x + c (mod 2^32), applied `steps` times to each word. It stands in for
// any real computation: its cost grows with `steps`, so the kernel can be made
// as long as a copy, and the CPU can still check the answer cheaply (below).
const word_t LCG_A = 1664525u;     // the multiplier and increment of
const word_t LCG_C = 1013904223u;  // Numerical Recipes' generator

__global__ void lcg_steps(const word_t* in, word_t* out, long long n, int steps, word_t a, word_t c) {
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

// One launch for `n` words, shared with tests/ch06_streams. At most
// `max_blocks` blocks; the grid-stride loop covers the rest.
void launch_lcg(const word_t* dev_in, word_t* dev_out, long long n, int steps, int max_blocks,
                cudaStream_t stream) {
    const int threads = 256;
    long long blocks = std::min<long long>((n + threads - 1) / threads, max_blocks);
    lcg_steps<<<(int)blocks, threads, 0, stream>>>(dev_in, dev_out, n, steps, LCG_A, LCG_C);
    CHECK_LAUNCH();
}

// The CPU's check. Applying x -> a*x + c twice gives x -> (a*a)*x + (a*c + c):
// again a*x + c, with new constants. So `steps` applications are one affine
// map whose constants the CPU works out once, and then every word costs one
// multiply-add however long the kernel ran. Unsigned arithmetic wraps mod 2^32
// on the CPU exactly as on the GPU.
struct AffineMap {
    word_t a, c;
};

AffineMap lcg_power(int steps) {
    AffineMap m = {1, 0};  // the identity: zero steps
    for (int s = 0; s < steps; s++) m = {LCG_A * m.a, LCG_A * m.c + LCG_C};
    return m;
}

// The input words: any values will do, as long as they are not all alike.
void fill_input(word_t* in, long long n) {
    for (long long i = 0; i < n; i++) in[i] = (word_t)(i * 2654435761ull + 12345u);
}

long long count_wrong(const word_t* in, const word_t* out, long long n, int steps) {
    AffineMap m = lcg_power(steps);
    long long wrong = 0;
    for (long long i = 0; i < n; i++) wrong += (out[i] != (word_t)(m.a * in[i] + m.c));
    return wrong;
}

// Chunks: N words into C chunks whose sizes differ by at most one word. The
// first N % C chunks take one word more, so no chunk is ever empty (C <= N).
long long chunk_begin(long long n, int chunks, int c) {
    long long base = n / chunks, extra = n % chunks;
    return c * base + std::min<long long>(c, extra);
}
long long chunk_size(long long n, int chunks, int c) {
    return n / chunks + (c < n % chunks ? 1 : 0);
}

// Everything a mode needs. Each stream owns one pair of chunk-sized device
// buffers, and chunk c always uses stream c % S and its buffers. A buffer is
// reused by chunk c + S only after chunk c has finished with it, and nothing
// has to be done to make it so: operations in one stream run in order.
// Each buffer has one word more than the largest chunk: a guard, poisoned with
// the rest, that no correct copy or kernel touches (see pipeline_guards_written).
enum Op { H2D = 0, KERNEL = 1, D2H = 2 };
const char* OP_NAMES[3] = {"h2d", "kernel", "d2h"};

enum Mode { DEFAULT_SYNC = 0, ONE_STREAM = 1, DEPTH_FIRST = 2, BREADTH_FIRST = 3 };
const int MODES = 4;
const char* MODE_NAMES[MODES] = {"default-sync", "one-stream", "depth-first", "breadth-first"};

struct Pipeline {
    const word_t* host_in;  // pinned host memory: cudaMemcpyAsync needs it to be truly asynchronous
    word_t* host_out;
    long long n;
    int chunks, streams, steps, max_blocks;
    std::vector<cudaStream_t> stream;
    std::vector<word_t*> dev_in, dev_out;  // one pair per stream
    // The timeline: when `record` is set, an event before and after every
    // operation (index 3 * chunk + op), all measured from `origin`.
    bool record;
    cudaEvent_t origin;
    std::vector<cudaEvent_t> op_begin, op_end;
};

void pipeline_create(Pipeline* p, const word_t* host_in, word_t* host_out, long long n, int chunks,
                     int streams, int steps, int max_blocks) {
    p->host_in = host_in;
    p->host_out = host_out;
    p->n = n;
    p->chunks = chunks;
    p->streams = std::min(streams, chunks);  // more streams than chunks would sit idle
    p->steps = steps;
    p->max_blocks = max_blocks;
    p->record = false;
    // Chunk 0 is never smaller than another; one more word for the guard.
    size_t buffer_bytes = (chunk_size(n, chunks, 0) + 1) * sizeof(word_t);
    p->stream.resize(p->streams);
    p->dev_in.resize(p->streams);
    p->dev_out.resize(p->streams);
    for (int s = 0; s < p->streams; s++) {
        // cudaStreamCreate makes a "blocking" stream: it still waits for work
        // queued on the default stream, and the default stream waits for it.
        // That is what lets events recorded on the default stream time a mode.
        HANDLE_ERROR(cudaStreamCreate(&p->stream[s]));
        HANDLE_ERROR(cudaMalloc((void**)&p->dev_in[s], buffer_bytes));
        HANDLE_ERROR(cudaMalloc((void**)&p->dev_out[s], buffer_bytes));
    }
    HANDLE_ERROR(cudaEventCreate(&p->origin));
    p->op_begin.resize(3 * chunks);
    p->op_end.resize(3 * chunks);
    for (int i = 0; i < 3 * chunks; i++) {
        HANDLE_ERROR(cudaEventCreate(&p->op_begin[i]));
        HANDLE_ERROR(cudaEventCreate(&p->op_end[i]));
    }
}

void pipeline_destroy(Pipeline* p) {
    HANDLE_ERROR(cudaDeviceSynchronize());
    for (int s = 0; s < p->streams; s++) {
        HANDLE_ERROR(cudaStreamDestroy(p->stream[s]));
        HANDLE_ERROR(cudaFree(p->dev_in[s]));
        HANDLE_ERROR(cudaFree(p->dev_out[s]));
    }
    HANDLE_ERROR(cudaEventDestroy(p->origin));
    for (int i = 0; i < 3 * p->chunks; i++) {
        HANDLE_ERROR(cudaEventDestroy(p->op_begin[i]));
        HANDLE_ERROR(cudaEventDestroy(p->op_end[i]));
    }
}

// The poison: what cudaMemset(..., 0xFF, ...) leaves in a word.
const word_t POISON = 0xFFFFFFFFu;

// Poison the host result and every device buffer, guards included, so that a
// chunk a mode forgets shows up as wrong words.
void pipeline_poison(Pipeline* p) {
    size_t buffer_bytes = (chunk_size(p->n, p->chunks, 0) + 1) * sizeof(word_t);
    for (int s = 0; s < p->streams; s++) {
        HANDLE_ERROR(cudaMemset(p->dev_in[s], 0xFF, buffer_bytes));
        HANDLE_ERROR(cudaMemset(p->dev_out[s], 0xFF, buffer_bytes));
    }
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::memset(p->host_out, 0xFF, p->n * sizeof(word_t));
}

// After a poisoned run: how many guard words (one past the largest chunk, in
// each buffer) no longer hold the poison. A kernel whose bound is i <= n, or a
// copy one word too long, writes there while every result word can be right.
long long pipeline_guards_written(const Pipeline* p) {
    long long guard = chunk_size(p->n, p->chunks, 0), written = 0;
    for (int s = 0; s < p->streams; s++) {
        word_t in_guard = 0, out_guard = 0;
        const size_t word = sizeof(word_t);
        HANDLE_ERROR(cudaMemcpy(&in_guard, p->dev_in[s] + guard, word, cudaMemcpyDeviceToHost));
        HANDLE_ERROR(cudaMemcpy(&out_guard, p->dev_out[s] + guard, word, cudaMemcpyDeviceToHost));
        written += (in_guard != POISON) + (out_guard != POISON);
    }
    return written;
}

// One operation of one chunk. `synchronous`: the blocking call on the default
// stream (cudaMemcpy, a launch on stream 0); otherwise the asynchronous call
// on stream `s` of the pipeline.
void run_op(Pipeline* p, Op op, int c, int s, bool synchronous) {
    cudaStream_t stream = synchronous ? 0 : p->stream[s];
    int buffer = c % p->streams;
    long long first = chunk_begin(p->n, p->chunks, c), count = chunk_size(p->n, p->chunks, c);
    size_t bytes = count * sizeof(word_t);
    if (p->record) HANDLE_ERROR(cudaEventRecord(p->op_begin[3 * c + op], stream));
    if (op == H2D && synchronous) {
        HANDLE_ERROR(cudaMemcpy(p->dev_in[buffer], p->host_in + first, bytes, cudaMemcpyHostToDevice));
    } else if (op == H2D) {
        HANDLE_ERROR(cudaMemcpyAsync(p->dev_in[buffer], p->host_in + first, bytes, cudaMemcpyHostToDevice, stream));
    } else if (op == KERNEL) {
        launch_lcg(p->dev_in[buffer], p->dev_out[buffer], count, p->steps, p->max_blocks, stream);
    } else if (synchronous) {
        HANDLE_ERROR(cudaMemcpy(p->host_out + first, p->dev_out[buffer], bytes, cudaMemcpyDeviceToHost));
    } else {
        HANDLE_ERROR(cudaMemcpyAsync(p->host_out + first, p->dev_out[buffer], bytes, cudaMemcpyDeviceToHost, stream));
    }
    if (p->record) HANDLE_ERROR(cudaEventRecord(p->op_end[3 * c + op], stream));
}

// Queues every chunk of one mode. Returns at once for the asynchronous modes:
// the caller synchronizes (or records an event on the default stream).
void run_mode(Pipeline* p, Mode mode) {
    if (p->record) HANDLE_ERROR(cudaEventRecord(p->origin, 0));
    if (mode == DEFAULT_SYNC || mode == ONE_STREAM || mode == DEPTH_FIRST) {
        for (int c = 0; c < p->chunks; c++) {
            bool synchronous = (mode == DEFAULT_SYNC);
            int s = (mode == DEPTH_FIRST) ? c % p->streams : 0;
            run_op(p, H2D, c, s, synchronous);
            run_op(p, KERNEL, c, s, synchronous);
            run_op(p, D2H, c, s, synchronous);
        }
    } else {  // BREADTH_FIRST: a round of S chunks, one stage at a time
        for (int first = 0; first < p->chunks; first += p->streams) {
            int last = std::min(first + p->streams, p->chunks);
            for (int op = H2D; op <= D2H; op++)
                for (int c = first; c < last; c++) run_op(p, (Op)op, c, c % p->streams, false);
        }
    }
}

// One stage of every chunk, alone: in one stream, nothing to overlap with.
void run_stage_alone(Pipeline* p, Op op) {
    for (int c = 0; c < p->chunks; c++) run_op(p, op, c, 0, false);
}

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
double ideal_pipelined_ms(double h2d_ms, double kernel_ms, double d2h_ms, int chunks, int copy_engines) {
    double sum = h2d_ms + kernel_ms + d2h_ms;
    if (copy_engines <= 0) return sum;
    double bottleneck = copy_engines == 1 ? std::max(h2d_ms + d2h_ms, kernel_ms)
                                          : std::max(h2d_ms, std::max(kernel_ms, d2h_ms));
    return bottleneck + (sum - bottleneck) / chunks;
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
        std::sort(same.begin(), same.end(), [](const Segment* x, const Segment* y) { return x->end_ms < y->end_ms; });
        double previous_end = 0;
        for (Segment* seg : same) {
            seg->run_ms = std::min(seg->end_ms, std::max(seg->start_ms, previous_end));
            previous_end = seg->end_ms;
        }
    }
}

// Reads the events of the last run_mode() with p->record set (after it ended).
// The synchronous mode ran on the default stream: its segments say stream 0.
std::vector<Segment> read_timeline(const Pipeline* p, Mode mode) {
    std::vector<Segment> segments;
    double first = 1e300;
    for (int c = 0; c < p->chunks; c++) {
        for (int op = H2D; op <= D2H; op++) {
            float begin_ms = 0, end_ms = 0;
            HANDLE_ERROR(cudaEventElapsedTime(&begin_ms, p->origin, p->op_begin[3 * c + op]));
            HANDLE_ERROR(cudaEventElapsedTime(&end_ms, p->origin, p->op_end[3 * c + op]));
            int s = (mode == DEPTH_FIRST || mode == BREADTH_FIRST) ? c % p->streams : 0;
            segments.push_back({s, c, (Op)op, begin_ms, end_ms, begin_ms});
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

// The timeline in the terminal: one row per stream, time running left to
// right. H = copy in, K = kernel, D = copy out; the letter's case alternates
// from chunk to chunk so that neighbours can be told apart, and '-' is an
// operation its stream has reached but that waits for its engine. Below, one
// row per kind of operation: '#' wherever one is running. Where those rows
// have '#' in the same column, operations overlapped.
void print_timeline(const std::vector<Segment>& segments, int streams, int width) {
    double span = 0;
    for (const Segment& seg : segments) span = std::max(span, seg.end_ms);
    if (span <= 0) span = 1e-3;
    std::vector<std::string> rows(streams, std::string(width, '.'));
    std::vector<std::string> busy(3, std::string(width, ' '));
    const char LETTERS[3] = {'H', 'K', 'D'};
    for (const Segment& seg : segments) {
        int from = std::min(width - 1, (int)(seg.start_ms / span * width));
        int run = std::min(width - 1, (int)(seg.run_ms / span * width));
        int to = std::max(run + 1, std::min(width, (int)(seg.end_ms / span * width + 0.5)));
        char letter = (seg.chunk % 2 == 0) ? LETTERS[seg.op] : (char)(LETTERS[seg.op] - 'A' + 'a');
        for (int x = from; x < run; x++) rows[seg.stream][x] = '-';
        for (int x = run; x < to; x++) {
            rows[seg.stream][x] = letter;
            busy[seg.op][x] = '#';
        }
    }
    for (int s = 0; s < streams; s++) std::printf("    stream %-3d |%s|\n", s, rows[s].c_str());
    const char* BUSY_NAMES[3] = {"copy in", "kernels", "copy out"};
    for (int op = 0; op < 3; op++) std::printf("    %-10s |%s|\n", BUSY_NAMES[op], busy[op].c_str());
    std::printf("    %-10s  0 ms%*s%.3f ms\n", "", width - 8, "", span);
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: streams [--n N] [--chunks C] [--streams S] [--work K|auto] [--repeats R] [--json]\n"
    "  --n N          32-bit words to send, transform and fetch back (default 2^26 = 256 MiB)\n"
    "  --chunks C     pieces the work is split into, 1..N and at most 4096 (default 16);\n"
    "                 when C does not divide N, the first N % C chunks get one word more\n"
    "  --streams S    streams for the depth-first and breadth-first modes, 2..64 (default 4)\n"
    "  --work K       generator steps per word in the kernel, or 'auto' (the default):\n"
    "                 as many as make one chunk's kernel as long as one chunk's copy in\n"
    "  --repeats R    timed runs of each stage and mode after a warm-up (default 5)\n"
    "  --json         also print one JSON record per stage and mode, and the timeline\n"
    "exit codes: 0 every mode's result matches the CPU, 1 one does not (or a CUDA error),\n"
    "            2 bad usage or a size the host or the GPU cannot hold, 77 no CUDA device\n";

const int TIMELINE_WIDTH = 96;

// "--work auto": the kernel's time grows in proportion to its steps, so scale
// a first guess by copy time / kernel time, and correct once more.
int calibrate_steps(Pipeline* p, double h2d_ms) {
    p->steps = 256;
    for (int round = 0; round < 2; round++) {
        TimingStats kernel = time_gpu([&] { run_stage_alone(p, KERNEL); }, 3, 1);
        double scaled = p->steps * h2d_ms / kernel.median_ms;
        p->steps = (int)std::max(1.0, std::min(scaled + 0.5, 1e6));
    }
    return p->steps;
}

// One line per stage; a copy also gets its rate (bytes = 0: no rate).
void print_stage(const char* label, const TimingStats& t, size_t bytes) {
    std::printf("  %-16s median %9.3f ms  (min %.3f, max %.3f)", label, t.median_ms, t.min_ms, t.max_ms);
    if (bytes) std::printf("  %7.2f GB/s", bytes / (t.median_ms * 1e6));
    std::printf("\n");
}

std::string segments_json(const std::vector<Segment>& segments) {
    std::string out = "[";
    for (size_t i = 0; i < segments.size(); i++) {
        JsonRecord seg;
        seg.add("stream", segments[i].stream).add("chunk", segments[i].chunk).add("op", OP_NAMES[segments[i].op])
            .add("start_ms", segments[i].start_ms).add("end_ms", segments[i].end_ms)
            .add("run_start_ms", segments[i].run_ms);
        out += (i ? "," : "") + seg.str();
    }
    return out + "]";
}

int main(int argc, char** argv) {
    Args args(argc, argv, "streams", USAGE);
    long long n = args.integer("--n", 1LL << 26, 1, LLONG_MAX);
    int chunks = (int)args.integer("--chunks", 16, 1, 4096);
    int streams = (int)args.integer("--streams", 4, 2, 64);
    std::string work_text = args.text("--work", "auto");
    bool auto_work = (work_text == "auto");
    int steps = auto_work ? 0 : (int)args.to_integer("--work", work_text, 1, 1000000);
    int repeats = (int)args.integer("--repeats", 5, 1, 10000);
    bool json = args.flag("--json");
    args.done();
    if (chunks > n)
        args.fail("--chunks " + std::to_string(chunks) + " is more than the " + std::to_string(n) +
                  " words of --n: every chunk needs at least one word");
    size_t bytes = checked_bytes(args, n, sizeof(word_t), 1);
    check_fits_on_host(args, checked_bytes(args, n, sizeof(word_t), 2));  // pinned input and output

    DeviceInfo dev = require_device("streams");
    int used_streams = std::min(streams, chunks);
    long long largest_chunk = chunk_size(n, chunks, 0);
    // Each stream's two buffers: the largest chunk and a guard word.
    check_fits_on_device(args, checked_bytes(args, largest_chunk + 1, sizeof(word_t),
                                             2 * used_streams));
    print_device(dev);
    std::printf("Copy engines (cudaDevAttrAsyncEngineCount): %d -- %s\n", dev.copy_engines,
                dev.copy_engines >= 2   ? "a copy in, a kernel and a copy out can all run at once"
                : dev.copy_engines == 1 ? "a copy can overlap a kernel, but the two directions take turns"
                                        : "copies cannot overlap kernels on this GPU");
    std::printf("streams: N = %lld words (%.1f MiB each way), %d chunks of %lld%s words, %d streams%s\n", n,
                bytes / 1048576.0, chunks, largest_chunk, n % chunks ? " or one fewer" : "", used_streams,
                used_streams < streams ? " (no more than there are chunks)" : "");
    // A long run says so first. Each stage alone runs repeats + 1 times and each
    // mode repeats + 2 times; conservative rates: copies at 5 GB/s (the H200's
    // link: 55 GB/s), the kernel at 1e12 generator steps a second (an H200: 6.6e12).
    // With --work auto a chunk's kernel takes as long as its copy in.
    double copy_s = bytes / 5e9, kernel_s = auto_work ? copy_s : n * (double)steps / 1e12;
    int passes = 3 * (repeats + 1) + MODES * (repeats + 2);
    announce_long_run(passes * (2 * copy_s + kernel_s),
                      "estimated for copies at 5 GB/s and 1e12 generator steps a second");

    // Pinned host memory: without it cudaMemcpyAsync has to stage the data
    // through the driver's buffer and nothing overlaps (part 1 of the chapter).
    word_t *host_in, *host_out;
    HANDLE_ERROR(cudaHostAlloc((void**)&host_in, bytes, cudaHostAllocDefault));
    HANDLE_ERROR(cudaHostAlloc((void**)&host_out, bytes, cudaHostAllocDefault));
    fill_input(host_in, n);

    Pipeline p;
    pipeline_create(&p, host_in, host_out, n, chunks, streams, auto_work ? 1 : steps, 8 * dev.sm_count);

    // Each stage alone, for all chunks, in one stream.
    TimingStats h2d = time_gpu([&] { run_stage_alone(&p, H2D); }, repeats, 1);
    if (auto_work) steps = calibrate_steps(&p, h2d.median_ms);
    p.steps = steps;
    TimingStats kernel = time_gpu([&] { run_stage_alone(&p, KERNEL); }, repeats, 1);
    TimingStats d2h = time_gpu([&] { run_stage_alone(&p, D2H); }, repeats, 1);
    double ideal = ideal_pipelined_ms(h2d.median_ms, kernel.median_ms, d2h.median_ms, chunks, dev.copy_engines);
    double in_order = h2d.median_ms + kernel.median_ms + d2h.median_ms;
    std::printf("Kernel work: %d generator steps per word%s\n\n", steps, auto_work ? " (auto)" : "");
    std::printf("Each stage alone, all %d chunks in one stream (median of %d):\n", chunks, repeats);
    print_stage("copy in  (H2D)", h2d, bytes);
    print_stage("kernel", kernel, 0);
    print_stage("copy out (D2H)", d2h, bytes);
    std::printf("  in order, nothing overlapped: %.3f ms; ideal pipelined: %.3f ms\n\n", in_order, ideal);

    // Each mode: one checked run with the timeline recorded, then timed runs.
    TimingStats mode_time[MODES];
    long long wrong[MODES], guards[MODES];  // wrong result words; guard words written
    std::vector<Segment> timeline[MODES];
    for (int m = 0; m < MODES; m++) {
        pipeline_poison(&p);
        p.record = true;
        run_mode(&p, (Mode)m);
        HANDLE_ERROR(cudaDeviceSynchronize());
        p.record = false;
        wrong[m] = count_wrong(host_in, host_out, n, steps);
        guards[m] = pipeline_guards_written(&p);
        timeline[m] = read_timeline(&p, (Mode)m);
        // The events of time_gpu() go on the default stream; the streams are
        // blocking streams, so the stop event waits for the work in all of them.
        mode_time[m] = time_gpu([&] { run_mode(&p, (Mode)m); }, repeats, 1);
    }

    std::printf("  %-14s %10s %10s %11s %9s  %s\n", "mode", "median ms", "ideal ms", "% of ideal",
                "vs sync", "check");
    int best = DEPTH_FIRST;
    for (int m = 0; m < MODES; m++) {
        std::printf("  %-14s %10.3f %10.3f %10.1f%% %8.2fx  %s\n", MODE_NAMES[m], mode_time[m].median_ms, ideal,
                    100 * ideal / mode_time[m].median_ms, mode_time[0].median_ms / mode_time[m].median_ms,
                    wrong[m] || guards[m] ? "FAIL" : "PASS");
        if (m >= DEPTH_FIRST && mode_time[m].median_ms < mode_time[best].median_ms) best = m;
    }
    std::printf("\nTimelines (one checked run of each mode, events around every operation):\n");
    for (int m = 0; m < MODES; m++) {
        std::printf("  %s\n", MODE_NAMES[m]);
        print_timeline(timeline[m], m >= DEPTH_FIRST ? used_streams : 1, TIMELINE_WIDTH);
    }
    std::printf("    H/h copy in, K/k kernel, D/d copy out (case alternates by chunk); '-' reached but\n"
                "    waiting for its engine (inferred: operations of one kind run one at a time); '.' idle\n");

    // JSON: the three stages, the four modes, and one timeline record.
    JsonRecord size, launch;
    size.add("n", n).add("bytes_each_way", (long long)bytes).add("chunks", chunks);
    launch.add("streams", used_streams).add("steps", steps).add("auto_work", auto_work)
        .add("threads", 256).add("max_blocks", 8 * dev.sm_count).add("copy_engines", dev.copy_engines);
    const TimingStats* stages[3] = {&h2d, &kernel, &d2h};
    for (int op = 0; op < 3; op++) {
        std::string variant = std::string("stage-") + OP_NAMES[op];
        double gbps = op == KERNEL ? NAN : bytes / (stages[op]->median_ms * 1e6);
        print_json(json, measurement_against("streams", variant.c_str(), dev, *stages[op], gbps, NAN, NAN, nullptr, "PASS")
                             .add("size", size).add("launch", launch));
    }
    for (int m = 0; m < MODES; m++) {
        const TimingStats& t = mode_time[m];
        print_json(json, measurement_against("streams", MODE_NAMES[m], dev, t, 2.0 * bytes / (t.median_ms * 1e6), NAN,
                                             100 * ideal / t.median_ms, "ideal-overlap",
                                             wrong[m] || guards[m] ? "FAIL" : "PASS")
                             .add("size", size).add("launch", launch).add("ideal_ms", ideal)
                             .add("in_order_ms", in_order).add("speedup_vs_sync", mode_time[0].median_ms / t.median_ms)
                             .add("wrong_words", wrong[m]).add("guard_words_written", guards[m]));
    }
    if (json) {
        double span = 0;
        for (const Segment& seg : timeline[best]) span = std::max(span, seg.end_ms);
        TimingStats one_run;
        one_run.median_ms = one_run.min_ms = one_run.max_ms = span;
        one_run.repeats = 1;
        std::string all_modes = "[";
        for (int m = 0; m < MODES; m++) {
            all_modes += std::string(m ? "," : "") + "{\"mode\":" + JsonRecord::quote(MODE_NAMES[m]) +
                         ",\"segments\":" + segments_json(timeline[m]) + "}";
        }
        all_modes += "]";
        print_json(json, measurement_against("streams", "timeline", dev, one_run, 2.0 * bytes / (span * 1e6), NAN,
                                             100 * ideal / span, "ideal-overlap",
                                             wrong[best] || guards[best] ? "FAIL" : "PASS")
                             .add("size", size).add("launch", launch).add("mode", MODE_NAMES[best])
                             .add("ideal_ms", ideal).raw("segments", segments_json(timeline[best]))
                             .raw("all_modes", all_modes));
    }

    pipeline_destroy(&p);
    HANDLE_ERROR(cudaFreeHost(host_in));
    HANDLE_ERROR(cudaFreeHost(host_out));

    long long total_wrong = 0, total_guards = 0;
    for (int m = 0; m < MODES; m++) {
        total_wrong += wrong[m];
        total_guards += guards[m];
    }
    char detail[200];
    if (total_wrong || total_guards)
        std::snprintf(detail, sizeof detail,
                      "%lld wrong words and %lld guard words written past a chunk over the %d "
                      "modes (see the check column)", total_wrong, total_guards, MODES);
    else
        std::snprintf(detail, sizeof detail, "all %lld words match the CPU in each of the %d modes", n, MODES);
    return verdict(total_wrong == 0 && total_guards == 0, detail);
}
#endif
