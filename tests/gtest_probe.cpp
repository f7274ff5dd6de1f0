// tests/gtest_probe.cpp -- a GoogleTest binary that does what GTEST_PROBE says, to test what
// tests/gtest_main.cpp and scripts/test_summary.py make of it (tests/test_gtest_report.py).
//   pass: both tests pass          skip: both skip ("no CUDA device: probe")
//   gpus: one passes, one skips ("needs 2 GPUs, 1 visible")    fail: one fails
//   exit0: the first test ends the process with exit(0), before any report is written
#include <cstdlib>
#include <string>
#include <gtest/gtest.h>

static std::string mode() {
    const char* m = std::getenv("GTEST_PROBE");
    return m ? m : "pass";
}

TEST(Probe, First) {
    if (mode() == "skip") GTEST_SKIP() << "no CUDA device: probe";
    if (mode() == "exit0") std::exit(0);
    EXPECT_EQ(1 + 1, 2);
}

TEST(Probe, Second) {
    if (mode() == "skip") GTEST_SKIP() << "no CUDA device: probe";
    if (mode() == "gpus") GTEST_SKIP() << "needs 2 GPUs, 1 visible";
    EXPECT_NE(mode(), "fail") << "the probe fails here, as asked";
}
