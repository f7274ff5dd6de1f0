// CPU tests of ch04_matmul/matrix.h: the data, the triple loop, the check, the
// host-memory refusal, the time estimate and the matrix run's options. No GPU needed.
//
// The check is proved on synthetic "GPU results" at W = 8192, 8193 and 32767:
// a product with a tile of terms missing from every element, or a handful of
// corrupted elements inside one tile, must be refused -- without a W^3 CPU
// product: N is built as a rank-1 matrix, N[k][x] = a[k] * b[x], so that
// P[y][x] = s[y] * b[x] with s = M a takes W^2 work. The check does not know
// that; it sees dense matrices on the 1/8 grid like any other.
#include <gtest/gtest.h>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>
#include "../../ch04_matmul/matrix.h"

TEST(Matrix, DocumentDataCountsUpRowByRow) {
    std::vector<float> M(9);
    fill_document(M.data(), 3);
    for (int i = 0; i < 9; i++) EXPECT_EQ(M[i], (float)i);
    EXPECT_FALSE(on_eighths_grid(M.data(), 3));  // 2, 3, ... are outside [-1, 1]
}

TEST(Matrix, RandomDataIsOddEighthsOfBothSignsAndRepeatable) {
    std::vector<float> a(100 * 100), b(100 * 100);
    fill_random(a.data(), 100, 5);
    fill_random(b.data(), 100, 5);
    EXPECT_EQ(a, b);
    int negative = 0;
    for (float v : a) {
        float eighths = 8 * v;
        EXPECT_TRUE(eighths == std::floor(eighths) && std::fabs(eighths) <= 7 &&
                    std::fmod(std::fabs(eighths), 2.0f) == 1)
            << v << " is not an odd multiple of 1/8 in [-1, 1]";
        negative += v < 0;
    }
    EXPECT_GT(negative, 4000);
    EXPECT_LT(negative, 6000);
    EXPECT_TRUE(on_eighths_grid(a.data(), 100));
}

// fill_random's promise, at the largest Widths: a dot product of W odd
// eighths comes out exact in float, whatever the order of the additions and
// with or without fused multiply-adds. So the check may demand exactness.
TEST(Matrix, GridDotProductsAreExactInFloatInAnyOrder) {
    for (int W : {32767, 32768}) {
        std::vector<float> a(W), b(W);  // a row of M and a column of N
        std::mt19937 rng(W);
        std::uniform_int_distribution<int> eighth(-4, 3);
        for (int k = 0; k < W; k++) {
            a[k] = (2 * eighth(rng) + 1) / 8.0f;
            b[k] = (2 * eighth(rng) + 1) / 8.0f;
        }
        double exact = 0;
        for (int k = 0; k < W; k++) exact += (double)a[k] * b[k];
        float forward = 0, fused = 0, backward = 0, tiles = 0;
        for (int k = 0; k < W; k++) {
            forward += a[k] * b[k];
            fused = std::fmaf(a[k], b[k], fused);
        }
        for (int k = W - 1; k >= 0; k--) backward += a[k] * b[k];
        for (int k0 = 0; k0 < W; k0 += 32) {  // a tiled kernel: partial sums of 32, then their sum
            float part = 0;
            for (int k = k0; k < W && k < k0 + 32; k++) part = std::fmaf(a[k], b[k], part);
            tiles += part;
        }
        EXPECT_EQ((double)forward, exact) << "W " << W;
        EXPECT_EQ((double)fused, exact) << "W " << W;
        EXPECT_EQ((double)backward, exact) << "W " << W;
        EXPECT_EQ((double)tiles, exact) << "W " << W;
    }
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

TEST(Matrix, CpuResultOfGridDataPassesTheExactCheck) {
    for (int W : {1, 2, 31, 33, 65, 200}) {
        std::vector<float> M(W * W), N(W * W), P(W * W);
        fill_random(M.data(), W, 1);
        fill_random(N.data(), W, 2);
        matmul_cpu(M.data(), N.data(), P.data(), W);
        CheckResult r = check_product(M.data(), N.data(), P.data(), W);
        EXPECT_TRUE(r.exact);
        EXPECT_EQ(r.tolerance, 0.0);
        EXPECT_TRUE(r.passed()) << "Width " << W << ": " << describe(r);
        EXPECT_EQ(r.rows, W);
        EXPECT_GE(r.checked, W < 4 ? W * W : 4 * W);
    }
}

// Data off the grid (uniform floats) is checked with the rounding tolerance.
TEST(Matrix, CpuResultOfOtherDataPassesTheRoundingTolerance) {
    int W = 200;
    std::vector<float> M(W * W), N(W * W), P(W * W);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float& m : M) m = value(rng);
    for (float& n : N) n = value(rng);
    matmul_cpu(M.data(), N.data(), P.data(), W);
    CheckResult r = check_product(M.data(), N.data(), P.data(), W);
    EXPECT_FALSE(r.exact);
    EXPECT_EQ(r.tolerance, check_tolerance(W, false));
    EXPECT_TRUE(r.passed()) << describe(r);
}

TEST(Matrix, DocumentDataPassesTheCheckDespiteLargeValues) {
    int W = 300;
    std::vector<float> M(W * W), N(W * W), P(W * W);
    fill_document(M.data(), W);
    fill_document(N.data(), W);
    matmul_cpu(M.data(), N.data(), P.data(), W);
    CheckResult r = check_product(M.data(), N.data(), P.data(), W);
    EXPECT_FALSE(r.exact);
    EXPECT_TRUE(r.passed()) << describe(r);
}

// The original's bug on the original's data: Width / 32 phases drop the last
// 300 - 9 * 32 = 12 terms of every dot product.
TEST(Matrix, CheckCatchesTheOriginalsPartialTileOnDocumentData) {
    int W = 300, kept = W / 32 * 32;
    std::vector<float> M(W * W), N(W * W), P(W * W);
    fill_document(M.data(), W);
    fill_document(N.data(), W);
    for (int y = 0; y < W; y++)
        for (int x = 0; x < W; x++) {
            float sum = 0;
            for (int k = 0; k < kept; k++) sum += M[y * W + k] * N[k * W + x];
            P[y * W + x] = sum;
        }
    CheckResult r = check_product(M.data(), N.data(), P.data(), W);
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.wrong, r.checked) << describe(r);  // every element is short
}

// One wrong element in the middle (off by the smallest step of the grid,
// 1/64) and one unwritten (NaN) element: neither lies in a checked row or
// column; Freivalds' test finds both rows.
TEST(Matrix, CheckCatchesAWrongAndAnUnwrittenInteriorElement) {
    int W = 200;
    std::vector<float> M(W * W), N(W * W), P(W * W);
    fill_random(M.data(), W, 1);
    fill_random(N.data(), W, 2);
    matmul_cpu(M.data(), N.data(), P.data(), W);
    P[(size_t)97 * W + 101] += 1.0f / 64;
    P[(size_t)151 * W + 13] = NAN;
    CheckResult r = check_product(M.data(), N.data(), P.data(), W);
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.rows_wrong, 2) << describe(r);
    EXPECT_EQ(r.first_wrong_row, 97);
}

// ---------------------------------------------------------------------------
// Synthetic products at the large Widths.

// The memory this machine can give right now (MemAvailable), in bytes; 0 if unknown.
static double available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    double kb = 0;
    while (meminfo >> key >> kb) {
        if (key == "MemAvailable:") return kb * 1024;
        meminfo.ignore(256, '\n');
    }
    return 0;
}

// M on the grid (fill_random); N[k][x] = a[k] * b[x] with a = +-1 and b odd
// eighths, so N is on the grid too and no term is zero; P = M N, exact.
struct RankOneProduct {
    int W;
    std::vector<float> M, N, P, a, b;
    std::vector<double> s;  // s = M a, so P[y][x] = s[y] * b[x]

    explicit RankOneProduct(int width) : W(width), a(width), b(width), s(width, 0.0) {
        size_t n = (size_t)W * W;
        M.resize(n);
        N.resize(n);
        P.resize(n);
        fill_random(M.data(), W, 11);
        std::mt19937 rng(W);
        std::uniform_int_distribution<int> eighth(-4, 3), sign(0, 1);
        for (int i = 0; i < W; i++) {
            a[i] = sign(rng) ? 1.0f : -1.0f;
            b[i] = (2 * eighth(rng) + 1) / 8.0f;
        }
        for (int k = 0; k < W; k++)
            for (int x = 0; x < W; x++) N[(size_t)k * W + x] = a[k] * b[x];
        for (int y = 0; y < W; y++)
            for (int k = 0; k < W; k++) s[y] += M[(size_t)y * W + k] * a[k];
        set_rows(s);
    }
    // P[y][x] = row_sums[y] * b[x] (exact in float: multiples of 1/64 below 2^15).
    void set_rows(const std::vector<double>& row_sums) {
        for (int y = 0; y < W; y++)
            for (int x = 0; x < W; x++) P[(size_t)y * W + x] = (float)(row_sums[y] * b[x]);
    }
    // sum over k0 <= k < k1 of M[y][k] * a[k]: the part of row y's sums that
    // the terms k0..k1-1 contribute (times b[x]).
    double part(int y, int k0, int k1) const {
        double sum = 0;
        for (int k = k0; k < k1; k++) sum += M[(size_t)y * W + k] * a[k];
        return sum;
    }
    // A kernel that leaves out the terms k0 .. k1-1 of every dot product.
    void leave_out_terms(int k0, int k1) {
        std::vector<double> short_sums(W);
        for (int y = 0; y < W; y++) short_sums[y] = s[y] - part(y, k0, k1);
        set_rows(short_sums);
    }
    // A race: a few elements inside the tile of 32 x 32 at (tile_y, tile_x)
    // miss the contribution of one phase (32 terms), as when a thread read a
    // shared tile that was already overwritten. Returns the rows changed.
    std::set<int> corrupt_inside_tile(int tile_y, int tile_x, int count) {
        std::set<int> rows;
        std::mt19937 rng(tile_y * 31 + tile_x);
        std::uniform_int_distribution<int> offset(1, 30), phase(0, W / 32 - 1);
        for (int i = 0; i < count; i++) {
            int y = tile_y * 32 + offset(rng), x = tile_x * 32 + offset(rng), p = phase(rng);
            float wrong = (float)((s[y] - part(y, 32 * p, 32 * p + 32)) * b[x]);
            if (wrong != P[(size_t)y * W + x]) rows.insert(y);
            P[(size_t)y * W + x] = wrong;
        }
        return rows;
    }
    CheckResult check() const { return check_product(M.data(), N.data(), P.data(), W); }
};

// What every large Width must show: the correct product passes, exactly; the
// product without the terms [k0, k1) fails in (nearly) every row; and a few
// corrupted elements in one interior tile plus a single element off by 1/64,
// each in a row of its own and in none of the rows and columns checked
// element by element, are each found by Freivalds' test.
// The skip's reason, in GB to one decimal, as README and docs/install.md give them (32767:
// 12.9 GB of matrices, 14.9 GB needed).
static std::string memory_skip_reason(double matrices, double available) {
    auto gb = [](double bytes) {
        char text[32];
        std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
        return std::string(text);
    };
    return "needs " + gb(matrices + 2e9) + " of memory (three matrices of " + gb(matrices) +
           " in all, and 2 GB more); " + gb(available) + " are available";
}

TEST(MatrixLarge, TheSkipSaysWhatItNeedsRounded) {
    // The numbers of a machine where it skipped: 32767^2 floats x 3, and 10.4 GB free.
    EXPECT_EQ(memory_skip_reason(3.0 * 32767 * 32767.0 * sizeof(float), 10439819264.0),
              "needs 14.9 GB of memory (three matrices of 12.9 GB in all, and 2 GB more); "
              "10.4 GB are available");
}

static void expect_check_is_tight(int W, int k0, int k1) {
    double needed = 3.0 * W * (double)W * sizeof(float);
    double available = available_bytes();
    if (available != 0 && available < needed + 2e9)
        GTEST_SKIP() << memory_skip_reason(needed, available);
    RankOneProduct p(W);

    CheckResult r = p.check();
    EXPECT_TRUE(r.exact);
    EXPECT_TRUE(r.passed()) << "W " << W << ", the correct product: " << describe(r);

    p.leave_out_terms(k0, k1);
    r = p.check();
    EXPECT_FALSE(r.passed()) << "W " << W << ", terms " << k0 << ".." << k1 - 1 << " left out";
    EXPECT_GT(r.rows_wrong, W * 9 / 10) << describe(r);  // a row where they cancel is rare
    EXPECT_GT(r.wrong, r.checked * 9 / 10) << describe(r);

    p.set_rows(p.s);
    int middle = W / 32 / 2;
    std::set<int> rows = p.corrupt_inside_tile(middle + 1, middle - 1, 4);
    EXPECT_GE(rows.size(), 3u);
    int one_y = W / 3, one_x = W / 5;
    p.P[(size_t)one_y * W + one_x] -= 1.0f / 64;
    rows.insert(one_y);
    r = p.check();
    EXPECT_FALSE(r.passed()) << "W " << W << ", corrupted elements";
    EXPECT_EQ(r.wrong, 0) << "no corrupted element lies in a row or column checked whole";
    EXPECT_EQ(r.rows_wrong, (long long)rows.size()) << describe(r);
    EXPECT_EQ(r.first_wrong_row, *rows.begin()) << describe(r);
}

// W = 8192 has no partial tile: a kernel that stops one tile short.
TEST(MatrixLarge, CheckIsTightAtWidth8192) {
    expect_check_is_tight(8192, 8192 - 32, 8192);
}

// The original's bug at its smallest: Width / 32 phases drop 1 term of 8193.
TEST(MatrixLarge, CheckIsTightAtWidth8193) {
    expect_check_is_tight(8193, 8192, 8193);
}

// The largest odd Width: Width / 32 phases drop the last 31 terms.
TEST(MatrixLarge, CheckIsTightAtWidth32767) {
    expect_check_is_tight(32767, 32736, 32767);
}

// ---------------------------------------------------------------------------
// Host memory and time.

static Args test_args() {
    static char name[] = "MM-CPU";
    static char* argv[] = {name, nullptr};
    return Args(1, argv, "usage: MM-CPU [--width W]\n");
}

// A machine with 16 GB cannot hold three 32768 x 32768 matrices (12.9 GB)
// beside everything else: exit 2 with a message, not a kill by the kernel.
TEST(Matrix, WidthTooLargeForTheHostExitsWith2) {
    Args args = test_args();
    EXPECT_EXIT(check_matrices_fit_on_host(args, 3, 32768, 16000000000ULL),
                ::testing::ExitedWithCode(2), "Width 32768 needs 12.88 GB of host memory");
    EXPECT_EXIT(check_matrices_fit_on_host(args, 4, 32768, 20000000000ULL),
                ::testing::ExitedWithCode(2), "4 matrices of 4.29 GB");
    check_matrices_fit_on_host(args, 3, 32768, 128000000000ULL);  // fits: returns
    check_matrices_fit_on_host(args, 3, 1024, 16000000000ULL);
    check_matrices_fit_on_host(args, 3, 32768, 0);  // RAM unknown: no refusal
}

// The estimate of MM-CPU's time is in seconds and in the right range: at
// W = 512 (2.7e8 floating-point operations) one core takes between a few ms
// (tens of GFLOP/s, far beyond this dependent chain of adds) and a minute.
TEST(Matrix, TimeEstimateOfTheTripleLoopIsPlausible) {
    int W = 512;
    std::vector<float> M(W * W), N(W * W);
    fill_document(M.data(), W);
    fill_document(N.data(), W);
    double seconds = estimate_matmul_cpu_seconds(M.data(), N.data(), W);
    EXPECT_GT(seconds, 0.003);
    EXPECT_LT(seconds, 60.0);
}

// ---------------------------------------------------------------------------
// The matrix run's options (read_matrix_run): the rules of this chapter only;
// the parser itself is tested in tests/common.

static MatrixRun run_of(std::vector<std::string> words, const char* default_data, bool gpu) {
    static std::vector<std::string> kept;
    kept = words;
    kept.insert(kept.begin(), "MM-GPU-SM");
    static std::vector<char*> argv;
    argv.clear();
    for (std::string& w : kept) argv.push_back(&w[0]);
    Args args((int)argv.size(), argv.data(), "usage: MM-GPU-SM [--width W]\n");
    MatrixRun run = read_matrix_run(args, default_data, gpu);
    args.done();
    return run;
}

TEST(MatrixRun, DefaultsAndSizes) {
    MatrixRun gpu = run_of({}, "random", true);
    EXPECT_EQ(gpu.W, 1024);
    EXPECT_EQ(gpu.data, "random");
    EXPECT_EQ(gpu.seed, 1u);
    EXPECT_FALSE(gpu.cpu);
    EXPECT_EQ(gpu.bytes, 1024u * 1024u * 4u);
    EXPECT_EQ(gpu.guarded_bytes(), gpu.bytes + 4);
    EXPECT_EQ(gpu.flops(), 2.0 * 1024 * 1024 * 1024);
    EXPECT_EQ(run_of({}, "document", false).data, "document");  // MM-CPU's default
}

TEST(MatrixRun, ReadsEveryOption) {
    MatrixRun run =
        run_of({"--width", "33", "--data", "document", "--seed", "9", "--cpu"}, "random", true);
    EXPECT_EQ(run.W, 33);
    EXPECT_EQ(run.data, "document");
    EXPECT_EQ(run.seed, 9u);
    EXPECT_TRUE(run.cpu);
}

TEST(MatrixRun, RefusesWhatTheChapterDoesNotAllow) {
    EXPECT_EXIT(run_of({"--data", "ones"}, "random", true), ::testing::ExitedWithCode(2),
                "--data must be 'document' or 'random'");
    EXPECT_EXIT(run_of({"--width", "32769"}, "random", true), ::testing::ExitedWithCode(2),
                "too large");
    EXPECT_EXIT(run_of({"--cpu"}, "document", false), ::testing::ExitedWithCode(2),
                "unknown option '--cpu'");  // MM-CPU has no --cpu: it is the CPU run
}

// ---------------------------------------------------------------------------
// The check of results computed from rounded inputs (MM-GPU-TC, MM-cuBLAS
// --precision): the tolerances of check_tolerance and frobenius_tolerance,
// proved without a GPU. The Tensor Cores' arithmetic is emulated: the inputs
// rounded as the GPU rounds them (written here independently of
// ch04_matmul/tensor_inputs.h), products and sums in double (closer than FP32
// sums: the FP32 part of the error is some 100 times below the rounding's).

static float to_tf32(float x) {  // 10 mantissa bits, to nearest, ties away (cvt.rna)
    double scale = std::ldexp(1.0, 10 - std::ilogb(x));  // one TF32 ulp becomes 1
    return x == 0 ? x : (float)(std::round(x * scale) / scale);
}
static float to_bf16(float x) {  // 7 mantissa bits, to nearest, ties to even
    double scale = std::ldexp(1.0, 7 - std::ilogb(x));
    return x == 0 ? x : (float)(std::nearbyint(x * scale) / scale);
}
static float to_fewer_bits(float x, int bits) {  // any width: a precision too short
    double scale = std::ldexp(1.0, bits - std::ilogb(x));
    return x == 0 ? x : (float)(std::nearbyint(x * scale) / scale);
}

// P = round(M) x round(N), the rounding given as a function.
template <typename Round>
static std::vector<float> rounded_product(const std::vector<float>& M, const std::vector<float>& N,
                                          int W, Round round) {
    std::vector<float> A(M.size()), B(N.size()), P(M.size());
    for (size_t i = 0; i < M.size(); i++) A[i] = round(M[i]), B[i] = round(N[i]);
    std::vector<double> row(W);
    for (int y = 0; y < W; y++) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int k = 0; k < W; k++)
            for (int x = 0; x < W; x++)
                row[x] += (double)A[(size_t)y * W + k] * B[(size_t)k * W + x];
        for (int x = 0; x < W; x++) P[(size_t)y * W + x] = (float)row[x];
    }
    return P;
}

struct UniformPair {
    int W;
    std::vector<float> M, N;
    explicit UniformPair(int width) : W(width), M((size_t)W * W), N((size_t)W * W) {
        fill_uniform(M.data(), W, 3);
        fill_uniform(N.data(), W, 4);
    }
};

const double TF32_UNIT = std::ldexp(1.0, -11), BF16_UNIT = std::ldexp(1.0, -8);

TEST(RoundedInputs, EmulatedRoundingKeepsTheRightBits) {
    EXPECT_EQ(to_tf32(1.0f + std::ldexp(1.0f, -10)), 1.0f + std::ldexp(1.0f, -10));  // kept
    EXPECT_EQ(to_tf32(1.0f + std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -10));  // ties away
    EXPECT_EQ(to_bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);                           // ties to even
    EXPECT_EQ(to_bf16(-3.0f / 8), -3.0f / 8);  // the 1/8 grid is exact in both
    EXPECT_EQ(to_tf32(7.0f / 8), 7.0f / 8);
}

// A correct TF32 or BF16 product passes, and its error is the one the
// handout explains: about 0.6 u, inside the 1 u that is allowed.
TEST(RoundedInputs, CorrectTF32AndBF16ProductsPassWithTheExpectedError) {
    UniformPair d(256);
    for (double u : {TF32_UNIT, BF16_UNIT}) {
        std::vector<float> P = rounded_product(d.M, d.N, d.W, u == TF32_UNIT ? to_tf32 : to_bf16);
        CheckResult r = check_product(d.M.data(), d.N.data(), P.data(), d.W, 7, u);
        EXPECT_TRUE(r.passed()) << describe(r);
        EXPECT_FALSE(r.exact);
        EXPECT_GT(r.relative_error(), 0.3 * u) << "the inputs were not rounded?";
        EXPECT_LT(r.relative_error(), 1.0 * u);
        // Without its allowance for the rounding, the FP32 check refuses it.
        EXPECT_FALSE(check_product(d.M.data(), d.N.data(), P.data(), d.W).passed());
    }
}

// A result that claims TF32 but has BF16's 7 bits (8 times the error) fails
// the statistical test; the worst-case element bound alone would let it pass.
// (One bit fewer, twice the error, would pass: the test is 3 times the
// expected error wide, to be safe for a correct result.)
TEST(RoundedInputs, TooFewBitsFailTheFrobeniusTest) {
    UniformPair d(256);
    for (int bits : {7}) {
        std::vector<float> P =
            rounded_product(d.M, d.N, d.W, [bits](float x) { return to_fewer_bits(x, bits); });
        CheckResult r = check_product(d.M.data(), d.N.data(), P.data(), d.W, 7, TF32_UNIT);
        EXPECT_FALSE(r.passed()) << bits << " bits: " << describe(r);
        EXPECT_EQ(r.wrong, 0) << "the element bound is worst-case: it cannot see this";
        EXPECT_FALSE(r.frobenius_passed());
    }
}

// Inputs truncated instead of rounded to nearest (a biased rounding: every input
// moves towards zero): about 1.4 u, against a correct result's 0.6 u. The
// Frobenius test's 1 u (matrix.h: frobenius_tolerance, W >= 128) refuses it,
// in TF32 and in BF16; the worst-case element bound cannot see it.
TEST(RoundedInputs, TruncatedInputsFailTheFrobeniusTest) {
    UniformPair d(256);
    for (int bits : {10, 7}) {
        double u = bits == 10 ? TF32_UNIT : BF16_UNIT;
        std::vector<float> P = rounded_product(d.M, d.N, d.W, [bits](float x) {
            double scale = std::ldexp(1.0, bits - std::ilogb(x));
            return x == 0 ? x : (float)(std::trunc(x * scale) / scale);
        });
        CheckResult r = check_product(d.M.data(), d.N.data(), P.data(), d.W, 7, u);
        EXPECT_EQ(r.wrong, 0) << "the element bound is worst-case: it cannot see this";
        EXPECT_FALSE(r.frobenius_passed()) << bits << " bits, truncated: " << describe(r);
        EXPECT_GT(r.relative_error(), 1.1 * u);
    }
}

// One element negated in a correct product, in a checked line (row 0 is
// always checked): among the 8 W elements of the test it moves the norm by
// some 2 / sqrt(8 W) = 4e-2, far above 2 u, in TF32 and in BF16. An element
// outside the checked lines is the exact check's to find (data on the 1/8
// grid, the programs' default): Freivalds' test of every element, with no
// tolerance (CheckCatchesAWrongAndAnUnwrittenInteriorElement above).
TEST(RoundedInputs, OneWrongElementFailsTheCheck) {
    UniformPair d(256);
    for (double u : {TF32_UNIT, BF16_UNIT}) {
        std::vector<float> P = rounded_product(d.M, d.N, d.W, u == TF32_UNIT ? to_tf32 : to_bf16);
        P[37] *= -1;
        CheckResult r = check_product(d.M.data(), d.N.data(), P.data(), d.W, 7, u);
        EXPECT_FALSE(r.frobenius_passed()) << describe(r);
    }
}

TEST(RoundedInputs, GridDataStaysExactWhenRounded) {
    int W = 100;
    std::vector<float> M((size_t)W * W), N((size_t)W * W);
    fill_random(M.data(), W, 1);
    fill_random(N.data(), W, 2);
    std::vector<float> P = rounded_product(M, N, W, to_bf16);
    CheckResult r = check_product(M.data(), N.data(), P.data(), W, 7, BF16_UNIT);
    EXPECT_TRUE(r.exact);
    EXPECT_EQ(r.tolerance, 0.0);
    EXPECT_EQ(r.relative_error(), 0.0);
    EXPECT_TRUE(r.passed()) << describe(r);
}
