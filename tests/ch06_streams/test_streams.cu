// GPU tests of streams: the kernel against a plain CPU loop, every mode at
// awkward sizes, the recorded timeline, and a checker that can fail. The CPU
// parts (closed form, chunking, ideal time) are in test_streams_cpu.cu.
#include "../../ch06_streams/streams.cu"
#include "gpu_test.h"

// The most literal CPU reference: the generator applied step by step.
static word_t lcg_loop(word_t x, int steps) {
    for (int s = 0; s < steps; s++) x = LCG_A * x + LCG_C;
    return x;
}

// What run_checked_and_timed() does around a checked run.
static void poison_pipeline(Pipeline& p) {
    poison(p.dev_in, p.guard + 1);
    poison(p.dev_out, p.guard + 1);
    std::memset(p.host_out, 0xFF, p.n * sizeof(word_t));
    HANDLE_ERROR(cudaDeviceSynchronize());
}
static long long guards_written(const Pipeline& p) {
    return guards_written(p.dev_in, p.guard) + guards_written(p.dev_out, p.guard);
}

class Streams : public GpuTest {
protected:
    // Runs `mode` once on n words in `chunks` chunks and `streams` streams,
    // returns the words that differ from the closed form, plus the guard words
    // (one past the largest chunk in each device buffer) that were written.
    // (As main() does, no more streams than chunks.)
    long long wrong_words(Mode mode, long long n, int chunks, int streams, int steps) {
        Pipeline p(n, chunks, std::min(streams, chunks), 64);
        p.steps = steps;
        poison_pipeline(p);
        run_mode(p, mode);
        HANDLE_ERROR(cudaDeviceSynchronize());
        return count_wrong(p.host_in, p.host_out, n, steps) + guards_written(p);
    }
};

TEST_F(Streams, KernelMatchesTheStepByStepLoop) {
    const long long n = 5003;  // not a multiple of the block (256)
    const int steps = 37;
    std::vector<word_t> in(n);
    fill_input(in.data(), n);
    in.push_back(POISON);  // one guard word past the end of each buffer
    DeviceArray<word_t> dev_in(n + 1), dev_out(n + 1);
    dev_in.upload(in);
    dev_out.poison();
    launch_lcg_steps(dev_in.ptr, dev_out.ptr, n, steps, 3,
                     0);  // 3 blocks: the grid-stride loop does the rest
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<word_t> out = dev_out.download();
    long long wrong = 0;
    for (long long i = 0; i < n; i++) wrong += (out[i] != lcg_loop(in[i], steps));
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(out[n], POISON) << "the kernel wrote past the end";
}

TEST_F(Streams, EveryModeOneWord) {
    for (int m = 0; m < MODES; m++) EXPECT_EQ(wrong_words((Mode)m, 1, 1, 2, 5), 0) << MODE_NAMES[m];
}
TEST_F(Streams, EveryModeChunksThatDoNotDivide) {
    for (int m = 0; m < MODES; m++)
        EXPECT_EQ(wrong_words((Mode)m, 100003, 7, 3, 11), 0) << MODE_NAMES[m];
}
TEST_F(Streams, EveryModeOneWordPerChunk) {
    for (int m = 0; m < MODES; m++)
        EXPECT_EQ(wrong_words((Mode)m, 100, 100, 4, 2), 0) << MODE_NAMES[m];
}
TEST_F(Streams, EveryModeMoreStreamsThanChunks) {
    for (int m = 0; m < MODES; m++)
        EXPECT_EQ(wrong_words((Mode)m, 1000, 3, 8, 9), 0) << MODE_NAMES[m];
}
// A kernel far longer than its chunk's copies (about 0.3 ms against 10 us on an
// H200): a copy out that does not wait for its kernel, or a kernel that does not
// wait for its copy in, is then certain to see poison, not merely likely to.
TEST_F(Streams, EveryModeKernelMuchLongerThanTheCopies) {
    for (int m = 0; m < MODES; m++)
        EXPECT_EQ(wrong_words((Mode)m, 1 << 20, 8, 4, 20000), 0) << MODE_NAMES[m];
}
TEST_F(Streams, EveryModeLarge) {
    for (int m = 0; m < MODES; m++)
        EXPECT_EQ(wrong_words((Mode)m, 1 << 24, 16, 4, 100), 0) << MODE_NAMES[m];
}

// The recorded timeline obeys the rules of streams: every operation of a chunk
// starts after the one before it ended, and one stream never runs two at once.
TEST_F(Streams, TimelineRespectsStreamOrder) {
    const long long n = 1 << 18;
    const int chunks = 6, streams = 3, steps = 50;
    Pipeline p(n, chunks, streams, 64);
    p.steps = steps;
    for (int m = 0; m < MODES; m++) {
        p.record = true;
        run_mode(p, (Mode)m);
        HANDLE_ERROR(cudaDeviceSynchronize());
        std::vector<Segment> segments = p.events.read(m >= DEPTH_FIRST ? streams : 1);
        ASSERT_EQ((int)segments.size(), 3 * chunks);
        double first = 1e300;
        for (const Segment& seg : segments) {
            first = std::min(first, seg.start_ms);
            EXPECT_LE(seg.start_ms, seg.run_ms);
            EXPECT_LE(seg.run_ms, seg.end_ms);
            EXPECT_LT(seg.stream, streams);
        }
        EXPECT_DOUBLE_EQ(first, 0.0);
        // Segments are stored chunk by chunk, in the order h2d, kernel, d2h.
        for (int c = 0; c < chunks; c++) {
            EXPECT_LE(segments[3 * c].end_ms, segments[3 * c + 1].start_ms)
                << MODE_NAMES[m] << " chunk " << c;
            EXPECT_LE(segments[3 * c + 1].end_ms, segments[3 * c + 2].start_ms)
                << MODE_NAMES[m] << " chunk " << c;
        }
        for (size_t i = 0; i < segments.size(); i++)
            for (size_t j = i + 1; j < segments.size(); j++)
                if (segments[i].stream == segments[j].stream)
                    EXPECT_TRUE(segments[i].end_ms <= segments[j].start_ms ||
                                segments[j].end_ms <= segments[i].start_ms)
                        << MODE_NAMES[m] << ": two operations at once in stream "
                        << segments[i].stream;
        EXPECT_EQ(count_wrong(p.host_in, p.host_out, n, steps), 0) << MODE_NAMES[m];
    }
}

// run_checked_and_timed(), as main() calls it: the check and the timeline of one
// mode, and a time for it.
TEST_F(Streams, CheckedAndTimedRunOfEachMode) {
    Pipeline p(100003, 7, 3, 64);
    p.steps = 11;
    for (int m = 0; m < MODES; m++) {
        ModeRun r = run_checked_and_timed(p, (Mode)m, 2);
        EXPECT_EQ(r.wrong_words, 0) << MODE_NAMES[m];
        EXPECT_EQ(r.guard_words_written, 0) << MODE_NAMES[m];
        EXPECT_EQ((int)r.timeline.size(), 3 * 7) << MODE_NAMES[m];
        EXPECT_EQ(r.streams, m >= DEPTH_FIRST ? 3 : 1) << MODE_NAMES[m];
        EXPECT_GT(r.time.median_ms, 0.0) << MODE_NAMES[m];
    }
}

// The checker can fail: a schedule that forgets the last chunk's copy out
// leaves exactly that chunk poisoned, and a wrong step count is caught everywhere.
TEST_F(Streams, CheckerCatchesAForgottenChunk) {
    const long long n = 10007;
    const int chunks = 5, streams = 2, steps = 13;
    Pipeline p(n, chunks, streams, 64);
    p.steps = steps;
    poison_pipeline(p);
    for (int c = 0; c < chunks; c++) {
        run_op(p, H2D, c, c % streams, false);
        run_op(p, KERNEL, c, c % streams, false);
        if (c != chunks - 1) run_op(p, D2H, c, c % streams, false);
    }
    HANDLE_ERROR(cudaDeviceSynchronize());
    EXPECT_EQ(count_wrong(p.host_in, p.host_out, n, steps), chunk_size(n, chunks, chunks - 1));
    EXPECT_EQ(count_wrong(p.host_in, p.host_out, n, steps + 1), n);
}

// The guard check can fail: a word written one past the largest chunk of a
// stream's output buffer is counted, although every result word is right.
TEST_F(Streams, CheckerCatchesAWritePastTheChunk) {
    const long long n = 1000;
    const int chunks = 4, streams = 2, steps = 3;
    Pipeline p(n, chunks, streams, 64);
    p.steps = steps;
    poison_pipeline(p);
    run_mode(p, DEPTH_FIRST);
    HANDLE_ERROR(cudaDeviceSynchronize());
    EXPECT_EQ(count_wrong(p.host_in, p.host_out, n, steps), 0);
    EXPECT_EQ(guards_written(p), 0);
    HANDLE_ERROR(cudaMemset(p.dev_out[1] + chunk_size(n, chunks, 0), 0, sizeof(word_t)));
    EXPECT_EQ(guards_written(p), 1);
}
