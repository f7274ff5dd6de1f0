// tests/gtest_main.cpp -- main() of every GoogleTest binary: GoogleTest's own, with two changes.
//
// 1. A binary in which every test that ran was skipped (no GPU: GpuTest skips and says why)
//    exits 77, the programs' own "no usable CUDA device" status, so that ctest counts it as
//    skipped, not passed.
// 2. With --gtest_output=xml:FILE, FILE is removed before the first test runs. GoogleTest
//    writes it only at the end; a binary that died half-way must leave no report behind,
//    or an older run's report would be read as this one's (scripts/test_summary.py reads it).
#include <cstdio>
#include <string>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
#ifdef GTEST_FLAG_GET
    const std::string output = GTEST_FLAG_GET(output);
#else  // GoogleTest before 1.12
    const std::string output = testing::GTEST_FLAG(output);
#endif
    if (output.rfind("xml:", 0) == 0) std::remove(output.substr(4).c_str());
    const int status = RUN_ALL_TESTS();
    const testing::UnitTest& run = *testing::UnitTest::GetInstance();
    if (status == 0 && run.test_to_run_count() > 0 &&
        run.skipped_test_count() == run.test_to_run_count())
        return 77;
    return status;
}
