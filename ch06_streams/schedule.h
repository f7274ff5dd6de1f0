// schedule.h -- the check of a schedule (chapter 6, part 2): run_op carries out an
// operation only if it exists and keeps the answer right; anything else stops the
// program with one clear message (exit 1) before a single index is used.
//
// A schedule is the order of run_op(p, op, c, s, synchronous) calls. Inside run_mode it
// must queue every chunk's three operations exactly once, H2D before KERNEL before D2H,
// and never let two streams use one pair of device buffers at once: chunk c uses the
// pair c % S, so chunk c + S may reuse it only from the same stream (one stream runs in
// order) or after a synchronous operation (the legacy default stream waits for all).
// The check also keeps what it let through: `queued`, the mode's operations in order. The
// lab's grader takes that list from the student's program and has its own program carry it
// out and time it (labs/drivers/streams.cu), so a student's code decides only the order.
// Plain C++ with no CUDA in it: tests/ch06_streams/test_streams_cpu.cu feeds it schedules,
// good and bad, on the CPU.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <vector>

struct ScheduleCheck {
    int chunks, streams;
    bool in_mode = false;          // inside run_mode: the order is checked too
    std::vector<int> next_op;      // per chunk: the operation it needs next (3: all done)
    std::vector<int> last_stream;  // per buffer pair: stream of its last operation, -1 none
    std::vector<int> queued;       // the mode's operations, 4 integers each: op, c, s, synchronous

    ScheduleCheck(int chunks_, int streams_) : chunks(chunks_), streams(streams_) {}

    [[noreturn]] static void refuse(const char* why, long long op, long long c, long long s) {
        std::fprintf(stderr,
                     "schedule refused: %s (run_op with op %lld, chunk %lld, stream %lld)\n", why,
                     op, c, s);
        std::exit(1);
    }

    // Before run_op touches anything: the operation, the chunk and the stream exist.
    void operation(int op, int c, int s, bool synchronous) {
        if (op < 0 || op > 2) refuse("op is not H2D, KERNEL or D2H", op, c, s);
        if (c < 0 || c >= chunks) refuse("chunk out of range 0..chunks-1", op, c, s);
        if (s < 0 || s >= streams) refuse("stream out of range 0..streams-1", op, c, s);
        if (!in_mode) return;  // a stage timed alone (run_stage_alone): no order to keep
        if (op < next_op[c]) refuse("this operation of this chunk was queued before", op, c, s);
        if (op > next_op[c])
            refuse("queued before the chunk's earlier operation (H2D, KERNEL, D2H)", op, c, s);
        int pair = c % streams, stream = synchronous ? -1 : s;
        if (stream >= 0 && last_stream[pair] >= 0 && last_stream[pair] != stream)
            refuse("the chunk's buffers are in use in another stream: a race", op, c, s);
        next_op[c]++;
        last_stream[pair] = stream;
        queued.insert(queued.end(), {op, c, s, synchronous ? 1 : 0});  // checked: kept
    }
    void start_mode() {
        in_mode = true;
        next_op.assign(chunks, 0);
        last_stream.assign(streams, -1);
        queued.clear();
    }
    void finish_mode() {
        in_mode = false;
        for (int c = 0; c < chunks; c++)
            if (next_op[c] != 3)
                refuse("a chunk's operations were not all queued", next_op[c], c, -1);
    }
};
