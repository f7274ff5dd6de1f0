// Unit tests of common/: argument parsing, statistics, JSON, device-info
// arithmetic and CPUBitmap. None needs a GPU.
#include <gtest/gtest.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>
#include "common/args.h"
#include "common/cpu_bitmap.h"
#include "common/device_info.h"
#include "common/random.h"
#include "common/report.h"
#include "common/timer.h"

// ---- parse_integer and Args ------------------------------------------------
TEST(ParseInteger, AcceptsDigitsAndPowersOfTwo) {
    long long v = 0;
    std::string why;
    EXPECT_TRUE(parse_integer("1000", &v, &why));
    EXPECT_EQ(v, 1000);
    EXPECT_TRUE(parse_integer("2^28", &v, &why));
    EXPECT_EQ(v, 1LL << 28);
    EXPECT_TRUE(parse_integer("0", &v, &why));
    EXPECT_EQ(v, 0);
}

TEST(ParseInteger, RefusesBadText) {
    long long v = 0;
    std::string why;
    EXPECT_FALSE(parse_integer("abc", &v, &why));
    EXPECT_NE(why.find("not a whole number"), std::string::npos);
    EXPECT_FALSE(parse_integer("12x", &v, &why));
    EXPECT_FALSE(parse_integer("1.5", &v, &why));
    EXPECT_FALSE(parse_integer("", &v, &why));
    EXPECT_FALSE(parse_integer("-3", &v, &why));
    EXPECT_NE(why.find("negative"), std::string::npos);
    EXPECT_FALSE(parse_integer("99999999999999999999", &v, &why));
    EXPECT_NE(why.find("too large"), std::string::npos);
    EXPECT_FALSE(parse_integer("3^4", &v, &why));
    EXPECT_FALSE(parse_integer("2^63", &v, &why));
    // A second caret used to be read as 2^(2^3) = 256.
    EXPECT_FALSE(parse_integer("2^2^3", &v, &why));
    EXPECT_FALSE(parse_integer("2^", &v, &why));
    EXPECT_FALSE(parse_integer("^3", &v, &why));
}

static Args make_args(std::vector<std::string> words) {
    static std::vector<std::string> storage;
    static std::vector<char*> argv;
    storage = words;
    storage.insert(storage.begin(), "prog");
    argv.clear();
    for (std::string& w : storage) argv.push_back(&w[0]);
    return Args((int)argv.size(), argv.data(), "prog", "usage: prog [--n N] [--json]\n");
}

TEST(Args, ReadsOptionsFlagsAndDefaults) {
    Args args = make_args({"--n", "64", "--json", "--mode=fast"});
    EXPECT_EQ(args.integer("--n", 1, 1, 100), 64);
    EXPECT_EQ(args.integer("--repeats", 7, 1, 100), 7);
    EXPECT_TRUE(args.flag("--json"));
    EXPECT_FALSE(args.flag("--verbose"));
    EXPECT_EQ(args.text("--mode", "slow"), "fast");
    args.done();
}

// Every program reads its options with Args, so the parser's rules are tested
// here, once, on a stand-in program; each program's own tests only check its
// --help, one unknown flag (tests/CMakeLists.txt, from programs.json) and the
// rules of its own (a range, a file). One row per rule: the command line, the
// exit code and the message.
struct CommandLine {
    const char* name;
    std::vector<std::string> words;
    int exit_code;
    const char* message;  // a regular expression for what goes to stderr
};

const CommandLine COMMAND_LINES[] = {
    {"NonNumeric", {"--n", "abc"}, 2, "prog: error: --n 'abc' is not a whole number"},
    {"NonNumericAfterEquals", {"--n=12x"}, 2, "--n '12x' is not a whole number"},
    {"Fraction", {"--n", "1.5"}, 2, "is not a whole number"},
    {"Negative", {"--n", "-5"}, 2, "--n '-5' must not be negative"},
    {"Zero", {"--n", "0"}, 2, "--n '0' must not be zero"},
    {"BelowTheMinimum", {"--threads", "16"}, 2, "--threads '16' is too small \\(at least 32\\)"},
    {"AboveTheMaximum", {"--n", "1001"}, 2, "--n '1001' is too large \\(at most 1000\\)"},
    {"Overflow", {"--n", "99999999999999999999999"}, 2, "is too large"},
    {"PowerOutOfRange", {"--n", "2^63"}, 2, "out of range"},
    {"NotAPowerOfTwo", {"--n", "3^4"}, 2, "out of range"},
    {"NestedPower", {"--n", "2^2^3"}, 2, "is not a number"},
    {"MissingValue", {"--n"}, 2, "--n needs a value"},
    {"EmptyValue", {"--n", ""}, 2, "--n '' is empty"},
    {"EmptyText", {"--mode="}, 2, "--mode is empty"},
    {"GivenTwice", {"--n", "1", "--n=2"}, 2, "--n is given twice"},
    {"FlagGivenTwice", {"--json", "--json"}, 2, "--json is given twice"},
    {"FlagWithAValue", {"--json=1"}, 2, "--json is a flag and takes no value"},
    {"UnknownOption", {"--bogus"}, 2, "unknown option '--bogus'"},
    {"PrefixOfAnOption", {"--thread", "64"}, 2, "unknown option '--thread'"},
    {"StrayWord", {"64"}, 2, "unknown option '64'"},
    {"TheUsageFollowsTheError", {"--bogus"}, 2, "usage: prog \\[--n N\\]"},
    {"Help", {"--n", "abc", "--help"}, 0, ""},  // --help wins, whatever else is there
};

// GoogleTest names a failing row by this, not by its bytes.
void PrintTo(const CommandLine& line, std::ostream* os) {
    *os << line.name;
}

// What a program does with its command line: read every option, then done().
static void parse_like_a_program(const std::vector<std::string>& words) {
    Args args = make_args(words);
    args.integer("--n", 10, 1, 1000);
    args.integer("--threads", 256, 32, 1024);
    args.text("--mode", "fast");
    args.flag("--json");
    args.done();
    std::exit(EXIT_CODE_OK);
}

class ArgsDeathTest : public ::testing::TestWithParam<CommandLine> {};

TEST_P(ArgsDeathTest, OneMessageAndTheDocumentedExitCode) {
    const CommandLine& line = GetParam();
    EXPECT_EXIT(parse_like_a_program(line.words), ::testing::ExitedWithCode(line.exit_code),
                line.message);
}

INSTANTIATE_TEST_SUITE_P(Rules, ArgsDeathTest, ::testing::ValuesIn(COMMAND_LINES),
                         [](const ::testing::TestParamInfo<CommandLine>& info) {
                             return std::string(info.param.name);
                         });

TEST(Args, GoodCommandLinesParse) {
    Args args = make_args({"--n=2^9", "--threads", "1024", "--json"});
    EXPECT_EQ(args.integer("--n", 10, 1, 1000), 512);
    EXPECT_EQ(args.integer("--threads", 256, 32, 1024), 1024);
    EXPECT_EQ(args.text("--mode", "fast"), "fast");
    EXPECT_TRUE(args.flag("--json"));
    args.done();
}

TEST(Args, TheProgramNameIsReadFromTheUsage) {
    char name[] = "./whatever";
    char* argv[] = {name};
    Args args(1, argv, "usage: VA-GPU-NN [--n N]\n");
    EXPECT_STREQ(args.program(), "VA-GPU-NN");
    Args bare(1, argv, "usage: MM-CPU\n");
    EXPECT_STREQ(bare.program(), "MM-CPU");
}

TEST(Args, GivenTellsAnOptionGivenFromOneLeftOut) {
    Args args = make_args({"--scene", "a.txt", "--seed=3", "--json"});
    EXPECT_TRUE(args.given("--scene"));
    EXPECT_TRUE(args.given("--seed"));
    EXPECT_TRUE(args.given("--json"));
    EXPECT_FALSE(args.given("--spheres"));
    EXPECT_FALSE(args.given("--see"));              // a prefix is not the option
    EXPECT_EQ(args.text("--scene", "x"), "a.txt");  // given() consumes nothing
}

// An empty value used to be taken as "not given", which let --spheres ''
// slip past the checks that refuse two conflicting options.
TEST(ArgsRulesDeathTest, AnEmptyValueIsRefusedNotIgnored) {
    EXPECT_EXIT(make_args({"--scene", ""}).text("--scene", ""), ::testing::ExitedWithCode(2),
                "--scene is empty");
    EXPECT_EXIT(make_args({"--mb="}).text("--mb", "64"), ::testing::ExitedWithCode(2),
                "--mb is empty");
    EXPECT_EXIT(make_args({"--n", ""}).integer("--n", 1, 1, 10), ::testing::ExitedWithCode(2),
                "empty");
}

TEST(ArgsRulesDeathTest, ByteCountOverflowIsRefused) {
    Args args = make_args({});
    EXPECT_EQ(checked_bytes(args, 1000, 8, 3), 24000u);
    EXPECT_EXIT(checked_bytes(args, 1LL << 62, 8, 3), ::testing::ExitedWithCode(2), "overflows");
}

TEST(Grid, CeilDivCoversTheLastPartialBlock) {
    EXPECT_EQ(ceil_div(1, 256), 1);
    EXPECT_EQ(ceil_div(256, 256), 1);
    EXPECT_EQ(ceil_div(257, 256), 2);
    EXPECT_EQ(ceil_div(3000000000LL, 1024), 2929688);
}

// The published SplitMix64 sequence from seed 1 (tests/ch05_raytrace pins its
// first output too): the same numbers on every machine and C library.
TEST(SplitMix64, KnownSequenceAndRanges) {
    SplitMix64 rng(1);
    EXPECT_EQ(rng.next(), 0x910A2DEC89025CC1ULL);
    EXPECT_EQ(rng.next(), 0xBEEB8DA1658EEC67ULL);
    for (int i = 0; i < 1000; i++) {
        double u = rng.uniform();
        EXPECT_GE(u, 0.0);
        EXPECT_LT(u, 1.0);
        EXPECT_LT(rng.below(7), 7u);
    }
}

// ---- statistics ---------------------------------------------------------------
TEST(Summarize, MedianMinMax) {
    TimingStats odd = summarize({5, 1, 3});
    EXPECT_DOUBLE_EQ(odd.median_ms, 3);
    EXPECT_DOUBLE_EQ(odd.min_ms, 1);
    EXPECT_DOUBLE_EQ(odd.max_ms, 5);
    EXPECT_EQ(odd.repeats, 3);
    TimingStats even = summarize({4, 1, 3, 2});
    EXPECT_DOUBLE_EQ(even.median_ms, 2.5);
    EXPECT_EQ(summarize({}).repeats, 0);
}

// ---- JSON ---------------------------------------------------------------------
TEST(JsonRecord, WritesValidFieldsAndEscapes) {
    JsonRecord inner;
    inner.add("n", 3LL);
    JsonRecord r;
    r.add("name", "a \"quoted\"\\path\n")
        .add("ok", true)
        .add("x", 1.5)
        .add("bad", NAN)
        .add("size", inner);
    EXPECT_EQ(r.str(),
              "{\"name\":\"a \\\"quoted\\\"\\\\path\\n\",\"ok\":true,\"x\":1.5,\"bad\":null,"
              "\"size\":{\"n\":3}}");
}

TEST(JsonRecord, MeasurementHasTheCoreFields) {
    DeviceInfo dev;
    dev.name = "Test GPU";
    dev.cc_major = 9;
    dev.memory_clock_khz = 2619000;
    dev.bus_width_bits = 5120;
    TimingStats t = summarize({1.0, 2.0, 3.0});
    std::string s = measurement("P", "kernel", dev, t, 1676.16, NAN, "PASS").str();
    for (const char* key :
         {"\"schema\":1", "\"program\":\"P\"", "\"variant\":\"kernel\"", "\"device\":\"Test GPU\"",
          "\"cc\":\"9.0\"", "\"median\":2", "\"gbps\":1676.16", "\"gflops\":null",
          "\"pct_peak\":50", "\"peak\":\"dram\"", "\"verdict\":\"PASS\""})
        EXPECT_NE(s.find(key), std::string::npos) << key << " missing in " << s;
}

// ---- device arithmetic ---------------------------------------------------------
TEST(DeviceInfo, TheoreticalPeaks) {
    DeviceInfo dev;  // numbers of an H100 SXM-like part
    dev.memory_clock_khz = 2619000;
    dev.bus_width_bits = 5120;
    dev.cc_major = 9;
    dev.sm_count = 132;
    dev.clock_khz = 1980000;
    EXPECT_NEAR(dev.peak_bandwidth_gbs(), 2 * 2.619e9 * 640 / 1e9, 1e-6);
    EXPECT_NEAR(dev.peak_fp32_gflops(), 2.0 * 132 * 128 * 1.98e9 / 1e9, 1e-6);
    dev.cc_major = 8;
    dev.cc_minor = 0;
    EXPECT_EQ(dev.fp32_lanes_per_sm(), 64);
}

// ---- CPUBitmap ----------------------------------------------------------------
TEST(CPUBitmap, PixelLayoutIsRGBARowMajor) {
    CPUBitmap bitmap(7, 5);
    EXPECT_EQ(bitmap.image_size(), 7 * 5 * 4);
    unsigned char* p = bitmap.get_ptr();
    for (long i = 0; i < bitmap.image_size(); i++) EXPECT_EQ(p[i], 0) << "not zeroed at " << i;
    // Pixel (x, y) = (3, 2) starts at byte 4 * (x + y * width).
    unsigned char* pixel = p + 4 * (3 + 2 * 7);
    pixel[0] = 10, pixel[1] = 20, pixel[2] = 30, pixel[3] = 255;
    EXPECT_EQ(p[4 * 17 + 2], 30);
}

static void fill_pattern(CPUBitmap& bitmap) {
    unsigned char* p = bitmap.get_ptr();
    for (int y = 0; y < bitmap.y; y++)
        for (int x = 0; x < bitmap.x; x++) {
            unsigned char* px = p + 4 * (x + y * bitmap.x);
            px[0] = (unsigned char)(x * 13);
            px[1] = (unsigned char)(y * 29);
            px[2] = (unsigned char)(x ^ y);
            px[3] = 255;
        }
}

// A file in the tests' temporary folder, removed when the test ends, passed or failed; its name
// holds the process id, so that two test runs at once (build/ and build-ci/) never share one.
struct ScratchFile {
    std::string path;
    explicit ScratchFile(const std::string& name)
        : path(::testing::TempDir() + "cuda-examples-" + std::to_string(getpid()) + "-" + name) {}
    ~ScratchFile() { std::remove(path.c_str()); }
};

TEST(CPUBitmap, PpmSaveReloadRoundTrip) {
    CPUBitmap bitmap(31, 17);
    fill_pattern(bitmap);
    ScratchFile file_name("roundtrip.ppm");
    const std::string& path = file_name.path;
    ASSERT_TRUE(bitmap.save(path));
    CPUBitmap back(31, 17);
    ASSERT_TRUE(back.load_ppm(path));
    EXPECT_EQ(0, std::memcmp(bitmap.get_ptr(), back.get_ptr(), bitmap.image_size()));

    // The file starts with the TOP row (y = height - 1), as the window shows it.
    std::ifstream file(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::string header = "P6\n31 17\n255\n";
    ASSERT_EQ(bytes.substr(0, header.size()), header);
    ASSERT_EQ(bytes.size(), header.size() + 31 * 17 * 3);
    EXPECT_EQ((unsigned char)bytes[header.size() + 1],
              (unsigned char)(16 * 29));  // green of (0, 16)
    CPUBitmap wrong_size(30, 17);
    EXPECT_FALSE(wrong_size.load_ppm(path));
    EXPECT_FALSE(back.load_ppm(::testing::TempDir() + "does-not-exist.ppm"));
}

TEST(CPUBitmap, OutputPathWritesAFileAndCallsTheExitFunction) {
    CPUBitmap bitmap(4, 4);
    fill_pattern(bitmap);
    ScratchFile file_name("display.ppm");
    bitmap.output_path = file_name.path;
    static int calls = 0;
    bitmap.display_and_exit([](void*) { calls++; });
    EXPECT_EQ(calls, 1);
    CPUBitmap back(4, 4);
    EXPECT_TRUE(back.load_ppm(bitmap.output_path));
}

// Without libpng (a plain nvcc line) a .png is written uncompressed: a real PNG all the same.
TEST(CPUBitmap, PngWithoutLibpngIsAPng) {
    CPUBitmap bitmap(300, 250);  // rows of 1201 bytes: two stored deflate blocks and a part
    fill_pattern(bitmap);
    bitmap.get_ptr()[7] = 200;
    ScratchFile file_name("uncompressed.png");
    ASSERT_TRUE(bitmap.save_png_uncompressed(file_name.path));
    std::ifstream file(file_name.path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    ASSERT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(bytes.substr(12, 4), "IHDR");
    EXPECT_EQ(bytes.substr(bytes.size() - 8, 4), "IEND");
    EXPECT_GT(bytes.size(), (size_t)300 * 250 * 4);  // stored, not compressed
#ifdef CUDA_EXAMPLES_USE_PNG
    // libpng checks every CRC and the zlib stream's Adler-32 as it reads.
    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    ASSERT_TRUE(png_image_begin_read_from_file(&image, file_name.path.c_str())) << image.message;
    image.format = PNG_FORMAT_RGBA;
    ASSERT_EQ(image.width, 300u);
    ASSERT_EQ(image.height, 250u);
    std::vector<unsigned char> back(PNG_IMAGE_SIZE(image));
    ASSERT_TRUE(png_image_finish_read(&image, nullptr, back.data(), -300 * 4, nullptr))
        << image.message;
    EXPECT_EQ(0, std::memcmp(bitmap.get_ptr(), back.data(), back.size()));
#endif
}

#ifdef CUDA_EXAMPLES_USE_PNG
TEST(CPUBitmap, PngSaveReloadRoundTrip) {
    CPUBitmap bitmap(33, 9);
    fill_pattern(bitmap);
    bitmap.get_ptr()[3] = 128;  // PNG keeps alpha too
    ScratchFile file_name("roundtrip.png");
    const std::string& path = file_name.path;
    ASSERT_TRUE(bitmap.save(path));
    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    ASSERT_TRUE(png_image_begin_read_from_file(&image, path.c_str()));
    image.format = PNG_FORMAT_RGBA;
    ASSERT_EQ(image.width, 33u);
    ASSERT_EQ(image.height, 9u);
    std::vector<unsigned char> back(PNG_IMAGE_SIZE(image));
    ASSERT_TRUE(
        png_image_finish_read(&image, nullptr, back.data(), -33 * 4, nullptr));  // bottom-up
    EXPECT_EQ(0, std::memcmp(bitmap.get_ptr(), back.data(), back.size()));
}
#endif

// ---- Report ------------------------------------------------------------------
TEST(Report, ReadsItsOptionsAndPrintsOneRecordPerMeasurementWithTheVerdict) {
    Args args = make_args({"--json", "--repeats", "3"});
    Report report(args, 20);
    EXPECT_EQ(report.repeats(), 3);
    report.size("n", 1000).launch(4, 256);
    TimingStats t = summarize({1.0, 2.0, 3.0});
    ::testing::internal::CaptureStdout();
    report.record("kernel", "kernel only", t, 100.0, NAN, 50.0, "dram");
    report.note("end to end", "end_to_end_ms", 7.5);
    report.record("d2d-copy", "device-to-device copy", t, 200.0, NAN, NAN, nullptr);
    int code = report.verdict(false, "3 elements wrong");
    std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(code, EXIT_CODE_FAILED);
    EXPECT_NE(out.find("kernel only"), std::string::npos);
    EXPECT_NE(out.find("50.0% of dram"), std::string::npos);
    EXPECT_NE(out.find("end to end"), std::string::npos);
    // Two records, each with the run's verdict, size and launch; the note joins the first.
    std::vector<std::string> records;
    size_t at = 0;
    while ((at = out.find("{\"schema\":1", at)) != std::string::npos) {
        records.push_back(out.substr(at, out.find('\n', at) - at));
        ++at;
    }
    ASSERT_EQ(records.size(), 2u);
    for (const std::string& r : records) {
        EXPECT_NE(r.find("\"program\":\"prog\""), std::string::npos) << r;
        EXPECT_NE(r.find("\"verdict\":\"FAIL\""), std::string::npos) << r;
        EXPECT_NE(r.find("\"size\":{\"n\":1000}"), std::string::npos) << r;
        EXPECT_NE(r.find("\"launch\":{\"blocks\":4,\"threads\":256}"), std::string::npos) << r;
    }
    EXPECT_NE(records[0].find("\"end_to_end_ms\":7.5"), std::string::npos);
    EXPECT_EQ(records[1].find("end_to_end_ms"), std::string::npos);
    EXPECT_NE(records[1].find("\"pct_peak\":null"), std::string::npos);
    EXPECT_NE(out.find("Verdict: FAIL (3 elements wrong)"), std::string::npos);
}

// MM-CPU's report (no GPU looked for), a sweep's own sizes, a JSON array, and
// the setup line printed before the first figure.
TEST(Report, OnTheCpuWithASizePerRecordAndAnArray) {
    Args args = make_args({"--json"});
    Report report(args, 5);
    ::testing::internal::CaptureStdout();
    report.start_on_cpu("CPU (one core)", 1000);
    report.size("width", 64).size("scene", "a.txt");
    TimingStats t = summarize({2.0});
    report.record("triple-loop", "CPU", t, NAN, 3.0, NAN, nullptr);
    report.size_of_last("bytes", 4096);
    report.extra_json("segments", "[1,2]");
    int code = report.verdict(true, "%d of %d right", 7, 7);
    std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(code, EXIT_CODE_OK);
    EXPECT_NE(out.find("prog: width = 64, scene = a.txt\n"), std::string::npos) << out;
    EXPECT_NE(out.find("\"device\":\"CPU (one core)\",\"cc\":null"), std::string::npos) << out;
    EXPECT_NE(out.find("\"size\":{\"bytes\":4096}"), std::string::npos) << out;
    EXPECT_EQ(out.find("\"width\":64"), std::string::npos) << out;
    EXPECT_NE(out.find("\"segments\":[1,2]"), std::string::npos) << out;
    EXPECT_NE(out.find("Verdict: PASS (7 of 7 right)"), std::string::npos) << out;
}

TEST(Report, WithoutJsonPrintsNoRecords) {
    Args args = make_args({});
    Report report(args, 2);
    report.record("kernel", "kernel only", summarize({1.0}), 1.0, NAN, NAN, nullptr);
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(report.verdict(true, "fine"), EXIT_CODE_OK);
    std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(out.find("{\"schema\""), std::string::npos);
    EXPECT_NE(out.find("Verdict: PASS (fine)"), std::string::npos);
}

// An H200 as the driver describes it: 132 SMs at 1980 MHz, HBM3e at 3201 MHz on a
// 6144-bit bus, 60 MiB of L2, a PCIe 5 x16 link (sysfs: 32 GT/s, 16 lanes).
static DeviceInfo h200() {
    DeviceInfo d;
    d.name = "NVIDIA H200";
    d.cc_major = 9, d.sm_count = 132, d.clock_khz = 1980000;
    d.memory_clock_khz = 3201000, d.bus_width_bits = 6144, d.l2_bytes = 60 << 20;
    d.pcie_gbs = 32.0 * 16 * 128 / 130 / 8;
    return d;
}

// Runs one record through a report on that H200; returns (exit code, output).
static std::pair<int, std::string> one_rate(double gbps, double gflops, double ms,
                                            const char* limit, const char* resource = nullptr,
                                            double pcie = -1) {
    Args args = make_args({});
    Report report(args, 2);
    DeviceInfo d = h200();
    if (pcie >= 0) d.pcie_gbs = pcie > 0 ? pcie : NAN;
    report.start_on_device(d);
    ::testing::internal::CaptureStdout();
    report.record("kernel", "kernel only", summarize({ms}), gbps, gflops, NAN, limit, resource);
    int code = report.verdict(true, "right");
    return {code, ::testing::internal::GetCapturedStdout()};
}

TEST(DeviceInfo, PeaksFromTheDriversFigures) {
    DeviceInfo d = h200();
    EXPECT_NEAR(d.peak("dram"), 4916.7, 0.1);    // 2 x 3201 MHz x 768 bytes
    EXPECT_NEAR(d.peak("fp32"), 66908.2, 0.1);   // 132 x 128 lanes x 2 x 1980 MHz
    EXPECT_NEAR(d.peak("tf32"), 535265.3, 0.1);  // 132 x 2048 x 1980 MHz
    EXPECT_NEAR(d.peak("bf16"), 2 * d.peak("tf32"), 1e-6);
    EXPECT_NEAR(d.peak("pcie"), 63.015, 0.001);  // 32 GT/s x 16 x 128/130 / 8
    EXPECT_NEAR(d.peak("pcie-duplex"), 126.031, 0.001);
    EXPECT_TRUE(std::isnan(d.peak("ideal-overlap")));  // not a physical resource
}

// Issue 23's impossible number: VA-GPU-NN's bytes counted twice, some 8 TB/s.
TEST(Report, ARateAboveItsPeakIsAnImpossibleMeasurement) {
    // 8 GB in 1 ms: 8000 GB/s from DRAM (far more than 4 x L2): impossible.
    auto [code, out] = one_rate(8000, NAN, 1.0, "dram");
    EXPECT_EQ(code, EXIT_CODE_FAILED);
    EXPECT_NE(out.find("\nimpossible measurement: kernel only: 8000 GB/s is above the dram peak"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("Verdict: FAIL (right; but impossible measurement"), std::string::npos);
    // 4467 GB/s, Dot-SM-Warp's on an H200 (91% of the peak): possible.
    EXPECT_EQ(one_rate(4467, NAN, 1.0, "dram").first, EXIT_CODE_OK);
    // 5100 GB/s: within the 5% margin (the events' resolution); 5200: not.
    EXPECT_EQ(one_rate(5100, NAN, 1.0, "dram").first, EXIT_CODE_OK);
    EXPECT_EQ(one_rate(5200, NAN, 1.0, "dram").first, EXIT_CODE_FAILED);
    // 8000 GB/s over 80 MB, data that fits in 4 x L2: possible from the L2.
    EXPECT_EQ(one_rate(8000, NAN, 0.01, "dram").first, EXIT_CODE_OK);
    // FP32: MM-GPU-RT's flops counted twice at Width 4096, 90 TFLOP/s of 67.
    EXPECT_EQ(one_rate(NAN, 90000, 1.0, "fp32").first, EXIT_CODE_FAILED);
    EXPECT_EQ(one_rate(NAN, 51300, 1.0, "fp32").first, EXIT_CODE_OK);  // cuBLAS SGEMM's
    // The Tensor Cores: BF16 at 739 TFLOP/s (cuBLAS) is possible, 1200 is not.
    EXPECT_EQ(one_rate(NAN, 739000, 1.0, nullptr, "bf16").first, EXIT_CODE_OK);
    EXPECT_EQ(one_rate(NAN, 1.2e6, 1.0, nullptr, "bf16").first, EXIT_CODE_FAILED);
    // The host link: 110 GB/s over PCIe 5 x16 is impossible; without a known
    // link the DRAM peak bounds it (loosely), and then it passes.
    EXPECT_EQ(one_rate(110, NAN, 1.0, nullptr, "pcie").first, EXIT_CODE_FAILED);
    EXPECT_EQ(one_rate(55, NAN, 1.0, nullptr, "pcie").first, EXIT_CODE_OK);
    EXPECT_EQ(one_rate(110, NAN, 1.0, nullptr, "pcie", 0).first, EXIT_CODE_OK);
    // A limit that is no resource (a schedule's ideal) checks nothing.
    EXPECT_EQ(one_rate(1e9, NAN, 1.0, "ideal-overlap").first, EXIT_CODE_OK);
}

// Issue 43's missing ceilings: a record that names no resource, a copy bounded by DRAM, a
// stream schedule faster than its ideal.
TEST(Report, EveryRecordHasACeiling) {
    auto run = [](auto body) {
        Args args = make_args({});
        Report report(args, 2);
        report.start_on_device(h200());
        ::testing::internal::CaptureStdout();
        body(report);
        int code = report.verdict(true, "right");
        return std::make_pair(code, ::testing::internal::GetCapturedStdout());
    };
    // MM-GPU-WGMMA's steps name no resource: the run's precision bounds them (BF16: 1071 TF/s).
    auto wgmma = [&](double gflops) {
        return run([&](Report& r) {
            r.size("precision", "bf16");
            r.record("step4-bf16", "step 4", summarize({1.0}), NAN, gflops, NAN, nullptr);
        });
    };
    EXPECT_EQ(wgmma(680000).first, EXIT_CODE_OK);  // the H200's step 4, measured
    auto doubled = wgmma(1.39e6);                  // its flops counted twice
    EXPECT_EQ(doubled.first, EXIT_CODE_FAILED);
    EXPECT_NE(doubled.second.find("above the bf16 peak"), std::string::npos) << doubled.second;
    // zero_copy's copy-then-compute: a DRAM-measured record whose "ceiling" is the link.
    auto copied = [&](double gbps) {
        return run([&](Report& r) {
            r.record("copy-then-compute", "copy, then compute", summarize({10.0}), gbps, NAN, NAN,
                     "dram");
            r.extra("ceiling", "pcie");
        });
    };
    EXPECT_EQ(copied(54.7).first, EXIT_CODE_OK);
    auto outside = copied(4213);  // its copies left outside the events: a kernel's rate
    EXPECT_EQ(outside.first, EXIT_CODE_FAILED);
    EXPECT_NE(outside.second.find("above the pcie peak"), std::string::npos) << outside.second;
    // A stream schedule: no faster than its floor, 5% allowed, in a run of its own (ctest's
    // side-by-side pass sets CUDA_EXAMPLES_LESSONS=report).
    unsetenv("CUDA_EXAMPLES_LESSONS");
    EXPECT_EQ(run([](Report& r) { r.time_floor("depth-first", 5.71, 6.0); }).first, EXIT_CODE_OK);
    auto fast = run([](Report& r) { r.time_floor("depth-first", 3.0, 6.0); });
    EXPECT_EQ(fast.first, EXIT_CODE_FAILED);
    EXPECT_NE(fast.second.find("impossible measurement: depth-first: 3 ms is below its floor 6 ms"),
              std::string::npos)
        << fast.second;
    // On a shared GPU the floor, itself measured, is reported and does not fail.
    setenv("CUDA_EXAMPLES_LESSONS", "report", 1);
    auto shared = run([](Report& r) { r.time_floor("depth-first", 3.0, 6.0); });
    unsetenv("CUDA_EXAMPLES_LESSONS");
    EXPECT_EQ(shared.first, EXIT_CODE_OK);
    EXPECT_NE(shared.second.find("floor not enforced (CUDA_EXAMPLES_LESSONS=report, the GPU is "
                                 "shared): depth-first: 3 ms is below its floor 6 ms"),
              std::string::npos)
        << shared.second;
    EXPECT_EQ(shared.second.find("impossible measurement"), std::string::npos) << shared.second;
}

TEST(Report, TheLessonLineAndItsExitCode) {
    // Lessons enforced, as in a run of its own (ctest may set CUDA_EXAMPLES_LESSONS=report).
    unsetenv("CUDA_EXAMPLES_LESSONS");
    auto run = [](auto setup, bool pass = true) {
        Args args = make_args({"--json"});
        Report report(args, 2);
        report.start_on_device(h200());
        ::testing::internal::CaptureStdout();
        report.record("kernel", "kernel only", summarize({1.0}), 100, NAN, NAN, "dram");
        setup(report);
        int code = report.verdict(pass, "right");
        return std::make_pair(code, ::testing::internal::GetCapturedStdout());
    };
    auto shown = run([](Report& r) { r.lesson("speed-up", 2.5, 1.6); });
    EXPECT_EQ(shown.first, EXIT_CODE_OK);
    EXPECT_NE(shown.second.find("\nLesson: shown (speed-up 2.50, at least 1.60)\n"),
              std::string::npos)
        << shown.second;
    EXPECT_NE(shown.second.find("\"lesson\":{\"status\":\"shown\""), std::string::npos);
    // Missed: exit 1 although the answer is right; the line comes after the verdict.
    auto missed = run([](Report& r) {
        r.lesson("speed-up", 1.0, 1.6);
        r.lesson_at_most("a time ratio", 1.2, 2.5);
    });
    EXPECT_EQ(missed.first, EXIT_CODE_FAILED);
    EXPECT_NE(missed.second.find("Verdict: PASS (right)\nLesson: MISSED (speed-up 1.00, at least "
                                 "1.60; shown: a time ratio 1.20, at most 2.50)"),
              std::string::npos)
        << missed.second;
    EXPECT_NE(missed.second.find("\"status\":\"MISSED\""), std::string::npos);
    // A run that shares the GPU with other tests (CUDA_EXAMPLES_LESSONS=report, as ctest sets
    // for everything but the lesson tests) prints the miss but does not fail on a timing.
    setenv("CUDA_EXAMPLES_LESSONS", "report", 1);
    auto shared = run([](Report& r) { r.lesson("speed-up", 1.0, 1.6); });
    unsetenv("CUDA_EXAMPLES_LESSONS");
    EXPECT_EQ(shared.first, EXIT_CODE_OK);
    EXPECT_NE(shared.second.find("\nLesson: not enforced (CUDA_EXAMPLES_LESSONS=report, the GPU is "
                                 "shared: speed-up 1.00, at least 1.60)"),
              std::string::npos)
        << shared.second;
    EXPECT_NE(shared.second.find("\"status\":\"not enforced\""), std::string::npos);
    auto nan = run([](Report& r) { r.lesson("speed-up", NAN, 1.6); });
    EXPECT_EQ(nan.first, EXIT_CODE_FAILED);  // a ratio that could not be measured is no lesson
    // A GPU that cannot show it, a run too small to: said, and no failure.
    auto gpu = run([](Report& r) { r.lesson_not_shown("1 copy engine(s)"); });
    EXPECT_EQ(gpu.first, EXIT_CODE_OK);
    EXPECT_NE(gpu.second.find("\nLesson: not shown on this GPU (1 copy engine(s))"),
              std::string::npos)
        << gpu.second;
    auto small = run([](Report& r) { r.lesson_not_checked("use --n 2^26"); });
    EXPECT_EQ(small.first, EXIT_CODE_OK);
    EXPECT_NE(small.second.find("\nLesson: not checked (use --n 2^26)"), std::string::npos);
    // A wrong answer stays a failure, lesson or not; no lesson: no line.
    EXPECT_EQ(run([](Report& r) { r.lesson("speed-up", 2.5, 1.6); }, false).first,
              EXIT_CODE_FAILED);
    EXPECT_EQ(run([](Report&) {}).second.find("Lesson:"), std::string::npos);
}

TEST(ReportDeathTest, UnknownOptionsAreRefusedWhenTheReportIsMade) {
    EXPECT_EXIT(
        {
            Args a = make_args({"--bogus"});
            Report r(a, 2);
        },
        ::testing::ExitedWithCode(2), "unknown option '--bogus'");
}
