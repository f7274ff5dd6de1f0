// CPU tests of ch04_matmul/matrix.h: the triple loop, the data and the check.
#include <gtest/gtest.h>
#include <vector>
#include "../../ch04_matmul/matrix.h"

TEST(Matrix, DocumentDataCountsUpRowByRow) {
    std::vector<float> M(9);
    fill_document(M.data(), 3);
    for (int i = 0; i < 9; i++) EXPECT_EQ(M[i], (float)i);
}

TEST(Matrix, RandomDataIsInRangeAndRepeatable) {
    std::vector<float> a(100 * 100), b(100 * 100);
    fill_random(a.data(), 100, 5);
    fill_random(b.data(), 100, 5);
    EXPECT_EQ(a, b);
    for (float v : a) EXPECT_TRUE(v >= -1 && v <= 1);
}

TEST(Matrix, CpuTripleLoopOnASmallKnownProduct) {
    // [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50]
    float M[4] = {1, 2, 3, 4}, N[4] = {5, 6, 7, 8}, P[4];
    matmul_cpu(M, N, P, 2);
    EXPECT_EQ(P[0], 19);
    EXPECT_EQ(P[1], 22);
    EXPECT_EQ(P[2], 43);
    EXPECT_EQ(P[3], 50);
}

TEST(Matrix, CpuResultPassesTheCheck) {
    for (int W : {1, 31, 33, 200}) {
        std::vector<float> M(W * W), N(W * W), P(W * W);
        fill_random(M.data(), W, 1);
        fill_random(N.data(), W, 2);
        matmul_cpu(M.data(), N.data(), P.data(), W);
        CheckResult r = check_product(M.data(), N.data(), P.data(), W);
        EXPECT_EQ(r.wrong, 0) << "Width " << W << ": " << describe(r);
        EXPECT_GT(r.checked, 0);
    }
}

TEST(Matrix, DocumentDataPassesTheCheckDespiteLargeValues) {
    int W = 300;
    std::vector<float> M(W * W), N(W * W), P(W * W);
    fill_document(M.data(), W);
    fill_document(N.data(), W);
    matmul_cpu(M.data(), N.data(), P.data(), W);
    CheckResult r = check_product(M.data(), N.data(), P.data(), W);
    EXPECT_EQ(r.wrong, 0) << describe(r);
}

// The check must be able to fail: one wrong element in the last row, one
// NaN (an unwritten element) in the last column, both caught by the sample.
TEST(Matrix, CheckCatchesAWrongAndAnUnwrittenElement) {
    int W = 200;
    std::vector<float> M(W * W), N(W * W), P(W * W);
    fill_random(M.data(), W, 1);
    fill_random(N.data(), W, 2);
    matmul_cpu(M.data(), N.data(), P.data(), W);
    P[(size_t)(W - 1) * W + 17] += 0.01f;
    P[(size_t)5 * W + (W - 1)] = NAN;
    CheckResult r = check_product(M.data(), N.data(), P.data(), W, 100);
    EXPECT_GE(r.wrong, 2) << describe(r);
}
