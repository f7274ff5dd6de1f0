// Tests of ring_allreduce.cu: the ring against the CPU's sums, on 1 to 4 GPUs, at sizes
// no chunking divides; the event order across repeated calls; NCCL on the same buffers.
// Every value is a sum of random eighths: exact, so the comparison has no tolerance.
#include "../../ch07_multi_gpu/ring_allreduce.cu"
#include "multi_gpu_test.h"

// The chunks cover 0 .. n-1 once, in order, whatever n and k (no GPU needed).
TEST(RingChunks, CoverEveryElementOnce) {
    for (int k : {1, 2, 3, 4, 8})
        for (long long n : {1LL, 3LL, 63LL, 64LL, 65LL, 1000003LL}) {
            long long next = 0;
            for (int c = 0; c < k; ++c) {
                Slice s = ring_chunk(n, k, c);
                EXPECT_EQ(s.begin, next) << "k " << k << " n " << n << " chunk " << c;
                EXPECT_EQ(s.begin % CHUNK_ALIGN == 0 || s.count == 0, true);
                next = s.begin + s.count;
            }
            EXPECT_EQ(next, n) << "k " << k << " n " << n;
        }
}

class RingTest : public GpuTest,
                 public ::testing::WithParamInterface<std::tuple<int, long long>> {};

// Ring of k GPUs, n floats each: every GPU ends with the sum, exactly.
TEST_P(RingTest, MatchesTheCpu) {
    int k = std::get<0>(GetParam());
    long long n = std::get<1>(GetParam());
    REQUIRE_GPUS(k);
    Ring r = make_ring(k, n);
    EXPECT_EQ(check_once(r, [&] { ring_allreduce(r); }), 0) << k << " GPUs, n = " << n;
    free_ring(r);
}

INSTANTIATE_TEST_SUITE_P(Sizes, RingTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4),
                                            ::testing::Values(1LL, 5LL, 257LL, 100003LL,
                                                              (1LL << 20) + 1)));

class RingOrder : public GpuTest {};

// A GPU that runs late. Without the events between devices, two equally fast GPUs
// finish each step at about the same moment and a missing wait rarely shows.
__global__ void spin_for(long long ns) {
    long long start = clock64(), cycles = ns * 2;  // at least ns at any clock up to 2 GHz
    while (clock64() - start < cycles) __nanosleep(1000);
}

// Two all-reduces in a row, no host wait between, GPU `late` held back `late_ns` before
// each of them (late < 0: none): the second sums k copies of the first result, so every
// value must be k times the first sum (exact). Returns the wrong values over all GPUs.
long long wrong_after_two(Ring& r, int late, long long late_ns) {
    int k = r.k;
    long long n = r.n;
    fill_ring_inputs(r);
    for (int call = 0; call < 2; ++call) {
        if (late >= 0) {
            HANDLE_ERROR(cudaSetDevice(late));
            spin_for<<<1, 1, 0, r.streams[late]>>>(late_ns);
            CHECK_LAUNCH();
        }
        ring_allreduce(r);
    }
    for (int g = 0; g < k; ++g) HANDLE_ERROR(cudaStreamSynchronize(r.streams[g]));
    std::vector<float> expected = allreduce_expected_host(n, k), host(n);
    for (float& e : expected) e *= k;
    long long wrong = 0;
    for (int g = 0; g < k; ++g) {
        HANDLE_ERROR(cudaSetDevice(g));
        HANDLE_ERROR(cudaMemcpy(host.data(), r.data[g], n * sizeof(float), cudaMemcpyDeviceToHost));
        wrong += count_wrong(host.data(), expected, n);
    }
    return wrong;
}

// A missing wait between the calls, or between the steps, lets a GPU read a chunk
// before it is complete.
TEST_F(RingOrder, TwoInARowGiveKTimesTheSum) {
    int k = visible_gpus();
    Ring r = make_ring(k, 3 * 1000003);
    EXPECT_EQ(wrong_after_two(r, -1, 0), 0) << k << " GPUs";
    free_ring(r);
}

// Each GPU in turn starts ~20 ms behind the others, twice: a GPU that reads or copies
// its neighbour's chunk without waiting for its event gets a chunk not yet summed.
// Whether a missing wait shows depends on how the driver schedules the peer copies
// (one late GPU, one round, let it pass on two H200s), so every GPU is made late in
// turn, in 2k rounds, and the second all-reduce's kernels read what the first one's
// copies wrote.
TEST_F(RingOrder, WaitsForASlowNeighbour) {
    REQUIRE_GPUS(2);
    int k = visible_gpus();
    Ring r = make_ring(k, 1000003);
    for (int round = 0; round < 2 * k; ++round)
        EXPECT_EQ(wrong_after_two(r, round % k, 20 * 1000 * 1000), 0)
            << k << " GPUs, GPU " << round % k << " late, round " << round;
    free_ring(r);
}

// The check can fail: one value changed on the last GPU after the all-reduce is found.
TEST_F(RingOrder, CheckerSeesOneWrongValue) {
    int k = visible_gpus();
    long long n = 1001;
    Ring r = make_ring(k, n);
    fill_ring_inputs(r);
    ring_allreduce(r);
    for (int g = 0; g < k; ++g) HANDLE_ERROR(cudaStreamSynchronize(r.streams[g]));
    float wrong = 1000;
    HANDLE_ERROR(cudaSetDevice(k - 1));
    HANDLE_ERROR(cudaMemcpy(r.data[k - 1] + 500, &wrong, sizeof(float), cudaMemcpyHostToDevice));
    EXPECT_EQ(count_allreduce_errors(r.data, n, k), 1);
    free_ring(r);
}

// NCCL on the same buffers and streams gives the same sums.
TEST_F(RingOrder, NcclMatchesTheCpu) {
    int k = visible_gpus();
    long long n = 100003;
    nvls_off_unless_set();
    Ring r = make_ring(k, n);
    std::vector<ncclComm_t> comms(k);
    HANDLE_NCCL(ncclCommInitAll(comms.data(), k, nullptr));
    EXPECT_EQ(check_once(r, [&] { nccl_allreduce(r, comms); }), 0);
    for (int g = 0; g < k; ++g) HANDLE_NCCL(ncclCommDestroy(comms[g]));
    free_ring(r);
}

// The issue's size, 256 MiB per GPU plus an odd tail, on every visible GPU.
TEST_F(RingOrder, LargeOnEveryGpu) {
    int k = visible_gpus();
    long long n = (1LL << 26) + 7;
    Ring r = make_ring(k, n);
    EXPECT_EQ(check_once(r, [&] { ring_allreduce(r); }), 0);
    free_ring(r);
}
