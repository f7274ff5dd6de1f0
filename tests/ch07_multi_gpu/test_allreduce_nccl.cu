// Tests of allreduce_nccl.cu (one process, all visible GPUs): ncclAllReduce at sizes from
// one float up, and the dot product whose partial sums NCCL combines, against the CPU.
#include "../../ch07_multi_gpu/allreduce_nccl.cu"
#include "multi_gpu_test.h"

class NcclTest : public GpuTest {
protected:
    std::vector<Member> members;
    std::vector<ncclComm_t> comms;
    int k = 0;
    const long long capacity = (1LL << 22) + 64;

    void SetUp() override {
        GpuTest::SetUp();
        if (IsSkipped()) return;
        k = visible_gpus();
        nvls_off_unless_set();
        comms.resize(k);
        HANDLE_NCCL(ncclCommInitAll(comms.data(), k, nullptr));
        members.resize(k);
        for (int g = 0; g < k; ++g) {
            members[g].device = members[g].rank = g;
            members[g].comm = comms[g];
        }
        allocate_members(members, capacity * sizeof(float));
    }
    void TearDown() override { free_members(members); }
};

TEST_F(NcclTest, AllReduceMatchesTheCpu) {
    for (long long count : {1LL, 1023LL, 1024LL, 100003LL, 1LL << 22})
        EXPECT_EQ(check_allreduce(members, count, k), 0) << count << " floats on " << k << " GPUs";
}

TEST_F(NcclTest, DotProductEqualsTheReference) {
    for (long long n : {1LL, 1001LL, (1LL << 21) + 3}) {
        std::vector<float> a(n), b(n);
        fill_eighths_host(a.data(), n, 1);
        fill_eighths_host(b.data(), n, 2);
        EXPECT_EQ((double)nccl_dot(members, n, k), dot_reference(a.data(), b.data(), n))
            << "n = " << n << " on " << k << " GPUs";
    }
}

// The check can fail: an all-reduce over fewer ranks than expected is seen.
TEST_F(NcclTest, CheckerSeesAMissingRank) {
    if (k < 2) GTEST_SKIP() << "needs 2 GPUs, " << k << " visible";
    for (Member& m : members) {
        HANDLE_ERROR(cudaSetDevice(m.device));
        launch_fill_eighths(m.send, 0, 1000, m.rank, m.stream);
    }
    nccl_allreduce(members, 1000);
    std::vector<float> host(1000), wrong_expected = allreduce_expected_host(1000, k - 1);
    HANDLE_ERROR(cudaSetDevice(0));
    HANDLE_ERROR(cudaStreamSynchronize(members[0].stream));
    HANDLE_ERROR(
        cudaMemcpy(host.data(), members[0].recv, 1000 * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT_GT(count_wrong(host.data(), wrong_expected, 1000), 0);
}
