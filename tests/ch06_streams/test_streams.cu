// Tests of streams: the kernel against a plain CPU loop, the CPU's closed
// form, the chunking, the ideal-time formula, every mode at awkward sizes,
// the recorded timeline, and a checker that can fail.
#include "../../ch06_streams/streams.cu"
#include "gpu_test.h"

#include <random>

// The most literal CPU reference: the generator applied step by step.
static word_t lcg_loop(word_t x, int steps) {
    for (int s = 0; s < steps; s++) x = LCG_A * x + LCG_C;
    return x;
}

TEST(StreamsCpu, ClosedFormEqualsTheLoop) {
    std::mt19937 rng(7);
    for (int steps : {0, 1, 2, 3, 10, 257, 5000}) {
        AffineMap m = lcg_power(steps);
        for (int trial = 0; trial < 100; trial++) {
            word_t x = (word_t)rng();
            ASSERT_EQ((word_t)(m.a * x + m.c), lcg_loop(x, steps)) << "steps " << steps;
        }
    }
}

// Every word in exactly one chunk, chunks in order, sizes within one word.
TEST(StreamsCpu, ChunksCoverEveryWordOnce) {
    const long long cases[][2] = {{1, 1}, {10, 3}, {10, 10}, {16, 16}, {1000003, 7}, {5, 1}, {4096, 4096}, {99, 4}};
    for (const auto& nc : cases) {
        long long n = nc[0];
        int chunks = (int)nc[1];
        long long next = 0, smallest = n, largest = 0;
        for (int c = 0; c < chunks; c++) {
            ASSERT_EQ(chunk_begin(n, chunks, c), next) << n << " in " << chunks;
            long long size = chunk_size(n, chunks, c);
            ASSERT_GE(size, 1);
            smallest = std::min(smallest, size);
            largest = std::max(largest, size);
            next += size;
        }
        EXPECT_EQ(next, n);
        EXPECT_LE(largest - smallest, 1);
        EXPECT_EQ(largest, chunk_size(n, chunks, 0));  // the first chunk is never smaller
    }
}

TEST(StreamsCpu, IdealPipelinedTime) {
    // Three equal stages of 1 ms per chunk, 8 chunks: 8 + 2 = 10 ms, not 24.
    EXPECT_DOUBLE_EQ(ideal_pipelined_ms(8, 8, 8, 8, 2), 10.0);
    EXPECT_DOUBLE_EQ(ideal_pipelined_ms(8, 8, 8, 8, 3), 10.0);
    // One chunk: nothing to overlap.
    EXPECT_DOUBLE_EQ(ideal_pipelined_ms(1, 2, 3, 1, 2), 6.0);
    // A slow kernel: it runs throughout, plus one chunk's copy in and copy out.
    EXPECT_DOUBLE_EQ(ideal_pipelined_ms(4, 40, 4, 4, 2), 40.0 + 8.0 / 4);
    // One copy engine: the two directions share it.
    EXPECT_DOUBLE_EQ(ideal_pipelined_ms(8, 8, 8, 8, 1), 16.0 + 8.0 / 8);
    // No copy engine: no overlap at all.
    EXPECT_DOUBLE_EQ(ideal_pipelined_ms(8, 8, 8, 8, 0), 24.0);
}

// Three copies reached at once run one after another on the one link.
TEST(StreamsCpu, RunStartsAreInferredFromTheQueue) {
    std::vector<Segment> segments = {
        {0, 0, H2D, 0.0, 1.0, 0.0}, {2, 2, H2D, 0.0, 3.0, 0.0}, {1, 1, H2D, 0.0, 2.0, 0.0},
        {0, 0, KERNEL, 1.0, 2.0, 1.0},  // reached when its copy ended, engine free: runs at once
        {1, 1, KERNEL, 2.5, 3.0, 2.5},  // reached after the first kernel ended: no wait
    };
    infer_run_starts(&segments);
    EXPECT_DOUBLE_EQ(segments[0].run_ms, 0.0);
    EXPECT_DOUBLE_EQ(segments[2].run_ms, 1.0);
    EXPECT_DOUBLE_EQ(segments[1].run_ms, 2.0);
    EXPECT_DOUBLE_EQ(segments[3].run_ms, 1.0);
    EXPECT_DOUBLE_EQ(segments[4].run_ms, 2.5);
}

class Streams : public GpuTest {
protected:
    // Runs `mode` once on n words in `chunks` chunks and `streams` streams,
    // returns the words that differ from the closed form.
    long long wrong_words(Mode mode, long long n, int chunks, int streams, int steps) {
        word_t *in, *out;
        HANDLE_ERROR(cudaHostAlloc((void**)&in, n * sizeof(word_t), cudaHostAllocDefault));
        HANDLE_ERROR(cudaHostAlloc((void**)&out, n * sizeof(word_t), cudaHostAllocDefault));
        fill_input(in, n);
        Pipeline p;
        pipeline_create(&p, in, out, n, chunks, streams, steps, 64);
        pipeline_poison(&p);
        run_mode(&p, mode);
        HANDLE_ERROR(cudaDeviceSynchronize());
        long long wrong = count_wrong(in, out, n, steps);
        pipeline_destroy(&p);
        HANDLE_ERROR(cudaFreeHost(in));
        HANDLE_ERROR(cudaFreeHost(out));
        return wrong;
    }
};

TEST_F(Streams, KernelMatchesTheStepByStepLoop) {
    const long long n = 5003;  // not a multiple of the block (256)
    const int steps = 37;
    std::vector<word_t> in(n);
    fill_input(in.data(), n);
    DeviceArray<word_t> dev_in(n), dev_out(n);
    dev_in.upload(in);
    dev_out.poison();
    launch_lcg(dev_in.ptr, dev_out.ptr, n, steps, 3, 0);  // 3 blocks: the grid-stride loop does the rest
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<word_t> out = dev_out.download();
    long long wrong = 0;
    for (long long i = 0; i < n; i++) wrong += (out[i] != lcg_loop(in[i], steps));
    EXPECT_EQ(wrong, 0);
}

TEST_F(Streams, EveryModeOneWord) {
    for (int m = 0; m < MODES; m++) EXPECT_EQ(wrong_words((Mode)m, 1, 1, 2, 5), 0) << MODE_NAMES[m];
}
TEST_F(Streams, EveryModeChunksThatDoNotDivide) {
    for (int m = 0; m < MODES; m++) EXPECT_EQ(wrong_words((Mode)m, 100003, 7, 3, 11), 0) << MODE_NAMES[m];
}
TEST_F(Streams, EveryModeOneWordPerChunk) {
    for (int m = 0; m < MODES; m++) EXPECT_EQ(wrong_words((Mode)m, 100, 100, 4, 2), 0) << MODE_NAMES[m];
}
TEST_F(Streams, EveryModeMoreStreamsThanChunks) {
    for (int m = 0; m < MODES; m++) EXPECT_EQ(wrong_words((Mode)m, 1000, 3, 8, 9), 0) << MODE_NAMES[m];
}
TEST_F(Streams, EveryModeLarge) {
    for (int m = 0; m < MODES; m++) EXPECT_EQ(wrong_words((Mode)m, 1 << 24, 16, 4, 100), 0) << MODE_NAMES[m];
}

// The recorded timeline obeys the rules of streams: every operation of a chunk
// starts after the one before it ended, and one stream never runs two at once.
TEST_F(Streams, TimelineRespectsStreamOrder) {
    const long long n = 1 << 18;
    const int chunks = 6, streams = 3, steps = 50;
    word_t *in, *out;
    HANDLE_ERROR(cudaHostAlloc((void**)&in, n * sizeof(word_t), cudaHostAllocDefault));
    HANDLE_ERROR(cudaHostAlloc((void**)&out, n * sizeof(word_t), cudaHostAllocDefault));
    fill_input(in, n);
    Pipeline p;
    pipeline_create(&p, in, out, n, chunks, streams, steps, 64);
    for (int m = 0; m < MODES; m++) {
        p.record = true;
        run_mode(&p, (Mode)m);
        HANDLE_ERROR(cudaDeviceSynchronize());
        std::vector<Segment> segments = read_timeline(&p, (Mode)m);
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
            EXPECT_LE(segments[3 * c].end_ms, segments[3 * c + 1].start_ms) << MODE_NAMES[m] << " chunk " << c;
            EXPECT_LE(segments[3 * c + 1].end_ms, segments[3 * c + 2].start_ms) << MODE_NAMES[m] << " chunk " << c;
        }
        for (size_t i = 0; i < segments.size(); i++)
            for (size_t j = i + 1; j < segments.size(); j++)
                if (segments[i].stream == segments[j].stream)
                    EXPECT_TRUE(segments[i].end_ms <= segments[j].start_ms || segments[j].end_ms <= segments[i].start_ms)
                        << MODE_NAMES[m] << ": two operations at once in stream " << segments[i].stream;
        EXPECT_EQ(count_wrong(in, out, n, steps), 0) << MODE_NAMES[m];
    }
    pipeline_destroy(&p);
    HANDLE_ERROR(cudaFreeHost(in));
    HANDLE_ERROR(cudaFreeHost(out));
}

// The checker can fail: a schedule that forgets the last chunk's copy out
// leaves exactly that chunk poisoned, and a wrong step count is caught everywhere.
TEST_F(Streams, CheckerCatchesAForgottenChunk) {
    const long long n = 10007;
    const int chunks = 5, streams = 2, steps = 13;
    word_t *in, *out;
    HANDLE_ERROR(cudaHostAlloc((void**)&in, n * sizeof(word_t), cudaHostAllocDefault));
    HANDLE_ERROR(cudaHostAlloc((void**)&out, n * sizeof(word_t), cudaHostAllocDefault));
    fill_input(in, n);
    Pipeline p;
    pipeline_create(&p, in, out, n, chunks, streams, steps, 64);
    pipeline_poison(&p);
    for (int c = 0; c < chunks; c++) {
        run_op(&p, H2D, c, c % streams, false);
        run_op(&p, KERNEL, c, c % streams, false);
        if (c != chunks - 1) run_op(&p, D2H, c, c % streams, false);
    }
    HANDLE_ERROR(cudaDeviceSynchronize());
    EXPECT_EQ(count_wrong(in, out, n, steps), chunk_size(n, chunks, chunks - 1));
    EXPECT_EQ(count_wrong(in, out, n, steps + 1), n);
    pipeline_destroy(&p);
    HANDLE_ERROR(cudaFreeHost(in));
    HANDLE_ERROR(cudaFreeHost(out));
}
