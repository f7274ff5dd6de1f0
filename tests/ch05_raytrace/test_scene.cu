// CPU tests of chapter 5 (no GPU needed): random scenes, the scene-file
// parser, the two CPU renderers checked against each other and against
// pixels worked out by hand, the limit on pixels too close to call, the
// --output check, and visible_spheres' own CPU check.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "../../ch05_raytrace/visible_spheres.cu"
#include "common/cpu_bitmap.h"
#include "raytrace_check.h"
#include "visible_check.h"

#ifndef CH05_SOURCE_DIR
#error "CH05_SOURCE_DIR must name the source tree (set by tests/ch05_raytrace/CMakeLists.txt)"
#endif
static std::string source(const std::string& relative) {
    return std::string(CH05_SOURCE_DIR) + "/" + relative;
}

// ---- random scenes ------------------------------------------------------------
TEST(RandomScene, SameSeedSameSceneBitForBit) {
    std::vector<Sphere> a = random_scene(7, 200), b = random_scene(7, 200),
                        c = random_scene(8, 200);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), sizeof(Sphere) * a.size()));
    EXPECT_NE(0, std::memcmp(a.data(), c.data(), sizeof(Sphere) * a.size()));
}
TEST(RandomScene, TheOriginalsRanges) {
    for (const Sphere& s : random_scene(1, 2048)) {
        for (float c : {s.r, s.g, s.b}) EXPECT_TRUE(c >= 0 && c < 1);
        for (float v : {s.x, s.y, s.z}) EXPECT_TRUE(v >= -500 && v < 500);
        EXPECT_TRUE(s.radius >= 20 && s.radius < 120);
    }
}
TEST(RandomScene, KnownValuesOnEveryMachine) {
    // SplitMix64 from seed 1: the first output is 0x910A2DEC89025CC1, whose
    // top 24 bits are 0x910A2D = 9505325, so r = 9505325 / 2^24.
    SplitMix64 random(1);
    EXPECT_EQ(random.next(), 0x910A2DEC89025CC1ULL);
    EXPECT_FLOAT_EQ(random_scene(1, 1)[0].r, 9505325.0f / 16777216.0f);
}

// ---- the scene parser -----------------------------------------------------------
static std::string parse_error(const std::string& text) {
    std::vector<Sphere> spheres;
    std::string error;
    EXPECT_FALSE(parse_scene(text, "scene", &spheres, &error)) << "accepted: " << text;
    EXPECT_TRUE(spheres.empty());
    return error;
}

TEST(SceneParser, ReadsSpheresCommentsAndBlankLines) {
    std::vector<Sphere> spheres;
    std::string error;
    ASSERT_TRUE(
        parse_scene("# a scene\n\n 1 2 3 4 0.1 0.2 0.3  # trailing\r\n-5e1 +6 7.5 8 1 0 1\n", "s",
                    &spheres, &error))
        << error;
    ASSERT_EQ(spheres.size(), 2u);
    EXPECT_EQ(spheres[0].x, 1);
    EXPECT_EQ(spheres[0].radius, 4);
    EXPECT_FLOAT_EQ(spheres[0].b, 0.3f);
    EXPECT_EQ(spheres[1].x, -50);
    EXPECT_EQ(spheres[1].z, 7.5f);
    ASSERT_TRUE(parse_scene("", "s", &spheres, &error));  // an empty scene is a scene
    EXPECT_TRUE(spheres.empty());
    ASSERT_TRUE(parse_scene("1 2 3 4 0 0 0", "s", &spheres, &error));  // no final newline
    EXPECT_EQ(spheres.size(), 1u);
}
TEST(SceneParser, EachErrorNamesItsLine) {
    EXPECT_EQ(parse_error("1 2 3 4 0 0 0\n\n1 2 3\n"),
              "scene:3: expected 7 numbers (x y z radius r g b), found 3");
    EXPECT_EQ(parse_error("1 2 3 4 0 0 0 9\n"),
              "scene:1: expected 7 numbers (x y z radius r g b), found 8");
    EXPECT_EQ(parse_error("#\n1 2 abc 4 0 0 0\n"), "scene:2: z 'abc' is not a number");
    EXPECT_EQ(parse_error("1 2 3 0 0 0 0\n"),
              "scene:1: radius 0 is out of range (0.001 to 100000)");
    EXPECT_EQ(parse_error("1 2 3 -4 0 0 0\n"),
              "scene:1: radius -4 is out of range (0.001 to 100000)");
    EXPECT_EQ(parse_error("1 2 3 4 0 1.01 0\n"), "scene:1: g 1.01 is out of range (0 to 1)");
    EXPECT_EQ(parse_error("1e6 2 3 4 0 0 0\n"),
              "scene:1: x 1e6 is out of range (-100000 to 100000)");
    EXPECT_EQ(parse_error("1 2 3 4 0 0 -0.5\n"), "scene:1: b -0.5 is out of range (0 to 1)");
    // Found by the fuzzer: positive as a double, zero as the float the GPU gets.
    EXPECT_EQ(parse_error("1 2 3 1e-50 0 0 0\n"),
              "scene:1: radius 1e-50 is out of range (0.001 to 100000)");
}
TEST(SceneParser, RefusesWhatStrtodWouldAccept) {
    for (const char* word :
         {"nan", "inf", "-inf", "0x10", "1e999", "1..2", "1e", "--1", "+", "."}) {
        std::string error = parse_error(std::string("1 2 ") + word + " 4 0 0 0\n");
        EXPECT_NE(error.find("scene:1: z"), std::string::npos) << word << ": " << error;
    }
    EXPECT_EQ(parse_error(std::string("1 2 3 4 0 0 0\n1 2\0 3 4 0 0 0\n", 29)),
              "scene:2: unexpected character (byte 0)");
    EXPECT_EQ(parse_error("1 2 3 4 0 0 \xff\n"), "scene:1: unexpected character (byte 255)");
}
TEST(SceneParser, AcceptsAByteOrderMark) {
    // Editors on Windows start UTF-8 files with EF BB BF; it used to be
    // refused as "unexpected character (byte 239)".
    std::vector<Sphere> spheres;
    std::string error;
    ASSERT_TRUE(
        parse_scene("\xEF\xBB\xBF"
                    "1 2 3 4 0 0 0\n",
                    "s", &spheres, &error))
        << error;
    ASSERT_EQ(spheres.size(), 1u);
    EXPECT_EQ(spheres[0].x, 1);
    ASSERT_TRUE(parse_scene("\xEF\xBB\xBF", "s", &spheres, &error)) << error;  // and nothing else
    EXPECT_TRUE(spheres.empty());
    // Only at the very start: anywhere else it is still a stray byte.
    EXPECT_EQ(parse_error("1 2 3 4 0 0 0\n\xEF\xBB\xBF"
                          "1 2 3 4 0 0 0\n"),
              "scene:2: unexpected character (byte 239)");
    EXPECT_EQ(parse_error("\xEF\xBB\xBF"
                          "1 2 3\n"),  // lines are still counted from 1
              "scene:1: expected 7 numbers (x y z radius r g b), found 3");
}
TEST(SceneParser, NumbersTooSmallForAFloatAreZero) {
    // 1e-310 underflows even a double (strtod says ERANGE); 1e-50 and 1e-40
    // only a float. Each is 0 on the GPU, so each reads as 0: accepted where 0
    // is (a coordinate, a colour), out of range where it is not (a radius).
    std::vector<Sphere> spheres;
    std::string error;
    ASSERT_TRUE(parse_scene("1e-310 -1e-310 1e-40 4 1e-310 0 1e-50\n", "s", &spheres, &error))
        << error;
    ASSERT_EQ(spheres.size(), 1u);
    EXPECT_EQ(spheres[0].x, 0.0f);
    EXPECT_EQ(spheres[0].y, 0.0f);
    EXPECT_EQ(spheres[0].z, 0.0f);  // 1e-40 would be a denormal float: flushed
    EXPECT_EQ(spheres[0].r, 0.0f);
    EXPECT_EQ(spheres[0].b, 0.0f);
    EXPECT_EQ(parse_error("1 2 3 1e-310 0 0 0\n"),
              "scene:1: radius 1e-310 is out of range (0.001 to 100000)");
    // The other way: too large for a double is out of range, not "not a number".
    EXPECT_EQ(parse_error("1e999 2 3 4 0 0 0\n"),
              "scene:1: x 1e999 is out of range (-100000 to 100000)");
    EXPECT_EQ(parse_error("1 2 3 4 0 0 -1e400\n"), "scene:1: b -1e400 is out of range (0 to 1)");
}
TEST(SceneParser, LongWordsAreShortInMessages) {
    // A 5 MB "number" used to be echoed whole into the message.
    std::string huge(5 << 20, '7');
    EXPECT_EQ(parse_error("1 " + huge + " 3 4 0 0 0\n"),
              "scene:1: y '77777777777777777777...' is too long "
              "(5242880 characters; a number has at most 64)");
    EXPECT_EQ(parse_error("1 2 3 4 0 0 " + std::string(30, 'x') + "\n"),
              "scene:1: b 'xxxxxxxxxxxxxxxxxxxx...' is not a number");
    // 64 characters is still a number.
    std::vector<Sphere> spheres;
    std::string error;
    std::string longest = "0." + std::string(62, '5');
    EXPECT_TRUE(parse_scene(longest + " 2 3 4 0 0 0", "s", &spheres, &error)) << error;
}
TEST(SceneParser, TooManySpheres) {
    std::string text;
    for (int i = 0; i < MAX_SPHERES; i++) text += "0 0 0 1 0 0 0\n";
    std::vector<Sphere> spheres;
    std::string error;
    ASSERT_TRUE(parse_scene(text, "s", &spheres, &error));
    EXPECT_EQ((int)spheres.size(), MAX_SPHERES);
    EXPECT_EQ(parse_error(text + "# a comment is fine\n" + "0 0 0 1 0 0 0\n"),
              "scene:2050: too many spheres (at most 2048, all of which must fit in 64 KB of "
              "constant memory)");
}
TEST(SceneParser, Files) {
    std::vector<Sphere> spheres;
    std::string error;
    ASSERT_TRUE(load_scene_file(source("ch05_raytrace/scenes/three_spheres.txt"), &spheres, &error))
        << error;
    EXPECT_EQ(spheres.size(), 3u);
    ASSERT_TRUE(
        load_scene_file(source("tests/ch05_raytrace/scenes/good_mixed.txt"), &spheres, &error))
        << error;
    EXPECT_EQ(spheres.size(), 2u);
    ASSERT_TRUE(
        load_scene_file(source("tests/ch05_raytrace/scenes/good_bom.txt"), &spheres, &error))
        << error;
    EXPECT_EQ(spheres.size(), 2u);
    EXPECT_FALSE(
        load_scene_file(source("tests/ch05_raytrace/scenes/bad_count.txt"), &spheres, &error));
    EXPECT_NE(error.find("bad_count.txt:4: expected 7 numbers"), std::string::npos) << error;
    EXPECT_FALSE(
        load_scene_file(source("tests/ch05_raytrace/scenes/no-such-file.txt"), &spheres, &error));
    EXPECT_NE(error.find("cannot open the scene file: No such file or directory"),
              std::string::npos)
        << error;
    EXPECT_FALSE(load_scene_file(source("tests/ch05_raytrace/scenes"), &spheres, &error));
    EXPECT_NE(error.find("cannot read the scene file: it is a directory"), std::string::npos)
        << error;
}
TEST(SceneParser, OnlyRegularFilesAreRead) {
    std::vector<Sphere> spheres;
    std::string error;
    // /dev/zero never ends (it used to end in std::bad_alloc), and a FIFO
    // with no writer would make fopen wait for ever: both refused unread.
    EXPECT_FALSE(load_scene_file("/dev/zero", &spheres, &error));
    EXPECT_EQ(error,
              "/dev/zero: cannot read the scene file: it is not a regular file "
              "(a device, a pipe or a socket)");
    std::string fifo = ::testing::TempDir() + "ch05_scene_fifo";
    std::remove(fifo.c_str());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    EXPECT_FALSE(load_scene_file(fifo, &spheres, &error));
    EXPECT_NE(error.find("it is not a regular file"), std::string::npos) << error;
    std::remove(fifo.c_str());
}
TEST(SceneParser, FilesOfAtMostOneMegabyte) {
    // Comment lines only, exactly MAX_SCENE_FILE_BYTES of them: read (an empty
    // scene). One byte more: refused, without reading it whole.
    std::string text(MAX_SCENE_FILE_BYTES, '#');
    for (size_t i = 79; i < text.size(); i += 80) text[i] = '\n';
    std::string path = ::testing::TempDir() + "ch05_big_scene.txt";
    std::vector<Sphere> spheres;
    std::string error;
    for (int extra : {0, 1}) {
        FILE* f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(std::fwrite(text.data(), 1, text.size(), f), text.size());
        if (extra) std::fputc('#', f);
        std::fclose(f);
        EXPECT_EQ(load_scene_file(path, &spheres, &error), extra == 0) << error;
    }
    EXPECT_EQ(error, path + ": the scene file is too large (at most 1048576 bytes)");
    std::remove(path.c_str());
}

// ---- the programs' --output check (common/cpu_bitmap.h) ------------------------------
TEST(OutputPath, CheckedBeforeTheWork) {
    std::string why;
    std::string dir = ::testing::TempDir();
    EXPECT_FALSE(CPUBitmap::check_output_path(dir + "x.jpg", &why));  // would have got PPM bytes
    EXPECT_NE(why.find("must end in"), std::string::npos) << why;
    EXPECT_FALSE(CPUBitmap::check_output_path(dir + "no_such_dir/x.ppm", &why));
    EXPECT_EQ(why, "no folder " + dir + "no_such_dir to write it in");
    // The folder is named first, whatever the file's type.
    EXPECT_FALSE(CPUBitmap::check_output_path(dir + "no_such_dir/x.png", &why));
    EXPECT_EQ(why, "no folder " + dir + "no_such_dir to write it in");
    mkdir((dir + "ch05_dir.ppm").c_str(), 0700);
    EXPECT_FALSE(CPUBitmap::check_output_path(dir + "ch05_dir.ppm", &why));
    EXPECT_EQ(why, "cannot create the file: Is a directory");
    rmdir((dir + "ch05_dir.ppm").c_str());
    // A file that can be created is not left behind...
    std::string fresh = dir + "ch05_fresh.ppm";
    std::remove(fresh.c_str());
    EXPECT_TRUE(CPUBitmap::check_output_path(fresh, &why)) << why;
    struct stat info;
    EXPECT_NE(stat(fresh.c_str(), &info), 0) << "the probe left " << fresh << " behind";
    // ... and one that exists is neither removed nor emptied.
    FILE* f = std::fopen(fresh.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("P6 keep me", f);
    std::fclose(f);
    EXPECT_TRUE(CPUBitmap::check_output_path(fresh, &why)) << why;
    ASSERT_EQ(stat(fresh.c_str(), &info), 0);
    EXPECT_EQ(info.st_size, 10);
    std::remove(fresh.c_str());
    // A .png always: compressed with libpng, stored uncompressed without it.
    EXPECT_TRUE(CPUBitmap::check_output_path(dir + "ch05_image.png", &why)) << why;
}

// ---- the CPU renderers ------------------------------------------------------------
// One sphere at the origin, radius 100, colour (1, 0.5, 0.25), on a 301 x 301
// image (centre pixel 150): worked out by hand.
TEST(CpuRenderers, PixelsWorkedOutByHand) {
    std::vector<Sphere> scene = {make_sphere(0, 0, 0, 100, 1, 0.5f, 0.25f)};
    ReferenceImage a = render_reference(scene, 301);
    ZImage b = zbuffer_render(scene, 301);
    auto pixel = [](const std::vector<unsigned char>& rgba, int x, int y) {
        return &rgba[4 * (y * 301 + x)];
    };
    for (const std::vector<unsigned char>* img : {&a.rgba, &b.rgba}) {
        const unsigned char* centre = pixel(*img, 150, 150);  // n = 1
        EXPECT_EQ(centre[0], 255);
        EXPECT_EQ(centre[1], 127);  // 127.5 truncated
        EXPECT_EQ(centre[2], 63);   // 63.75 truncated
        EXPECT_EQ(centre[3], 255);
        const unsigned char* side = pixel(*img, 210, 150);  // dx = 60: n = sqrt(1 - 0.36) = 0.8
        EXPECT_NEAR(side[0], 204, 1);
        EXPECT_NEAR(side[1], 102, 1);
        EXPECT_NEAR(side[2], 51, 1);
        const unsigned char* corner =
            pixel(*img, 150 + 80, 150 - 59);  // 80^2 + 59^2 = 9881 < 10000: inside
        EXPECT_GT(corner[0], 0);
        const unsigned char* outside = pixel(*img, 150 + 80, 150 - 61);  // 10121 > 10000: black
        EXPECT_EQ(outside[0] + outside[1] + outside[2], 0);
    }
    // (250, 150) lies exactly on the rim: too close to call, in both.
    EXPECT_TRUE(a.unsure[150 * 301 + 250]);
    EXPECT_TRUE(b.unsure[150 * 301 + 250]);
}
TEST(CpuRenderers, NearerSphereWinsWhicheverComesFirst) {
    std::vector<Sphere> scene = overlapping_scene();  // the second is nearer
    std::vector<Sphere> reversed = {scene[1], scene[0]};
    for (const std::vector<Sphere>* s : {&scene, &reversed}) {
        ZImage z = zbuffer_render(*s, 200);
        ReferenceImage r = render_reference(*s, 200);
        const unsigned char* p = &z.rgba[4 * (105 * 200 + 100)];  // inside both discs
        EXPECT_EQ(p[0], 0);
        EXPECT_GT(p[1], 200);
        EXPECT_EQ(0, std::memcmp(p, &r.rgba[4 * (105 * 200 + 100)], 4));
    }
}
TEST(CpuRenderers, TheTwoAlgorithmsAgree) {
    struct Case {
        std::vector<Sphere> scene;
        int dim;
    };
    std::vector<Case> cases = {{random_scene(1, 20), 1024},
                               {random_scene(2, 200), 300},
                               {random_scene(3, MAX_SPHERES), 64},
                               {behind_scene(), 256},
                               {edge_scene(37), 37},
                               {overlapping_scene(), 200},
                               {{}, 16}};
    for (const Case& c : cases) {
        ReferenceImage a = render_reference(c.scene, c.dim);
        ZImage b = zbuffer_render(c.scene, c.dim);
        long long differ = 0;
        for (long long p = 0; p < (long long)c.dim * c.dim; p++) {
            EXPECT_EQ(a.unsure[p], b.unsure[p]);
            if (a.unsure[p]) continue;
            for (int ch = 0; ch < 4; ch++)
                differ += std::abs((int)a.rgba[4 * p + ch] - (int)b.rgba[4 * p + ch]) > 1;
        }
        EXPECT_EQ(differ, 0) << c.scene.size() << " spheres at " << c.dim;
        EXPECT_LE(a.unsure_count, (long long)c.dim * c.dim / 1000 + 4);
        EXPECT_FALSE(check_says_nothing(a.unsure_count, c.dim));  // the programs' refusal rule
    }
}
TEST(CpuRenderers, OnlyAnImageWithNoCheckablePixelIsRefused) {
    // Two spheres in the same place: every pixel of their disc is a tie, so
    // only the pixels outside it can be checked. The programs render such a
    // scene and say how many pixels were checked; they refuse it only where
    // the disc covers the whole image (scene.h: check_says_nothing).
    std::vector<Sphere> spheres;
    std::string error;
    std::string path = source("tests/ch05_raytrace/scenes/unsure_coincident.txt");
    ASSERT_TRUE(load_scene_file(path, &spheres, &error)) << error;
    ReferenceImage whole = render_reference(spheres, 16);  // radius 100 covers 16 x 16
    EXPECT_EQ(whole.unsure_count, 16 * 16);
    EXPECT_TRUE(check_says_nothing(whole.unsure_count, 16));
    for (int dim : {256, 1024}) {
        ReferenceImage ref = render_reference(spheres, dim);
        EXPECT_GT(ref.unsure_count, 0) << "dim " << dim;
        EXPECT_FALSE(check_says_nothing(ref.unsure_count, dim)) << "dim " << dim;
    }
    // Random scenes leave few pixels unchecked, even with 2048 spheres.
    EXPECT_LE(render_reference(random_scene(1, 20), 1024).unsure_count, 8);
    for (int seed = 1; seed <= 8; seed++)
        for (int dim : {16, 128, 256})
            EXPECT_LE(render_reference(random_scene(seed, 2048), dim).unsure_count * 100,
                      (long long)dim * dim + 400)
                << "seed " << seed << ", dim " << dim;
}
TEST(CpuRenderers, CountBadPixelsCanFail) {
    std::vector<Sphere> scene = random_scene(4, 20);
    ReferenceImage ref = render_reference(scene, 128);
    std::vector<unsigned char> img = ref.rgba;
    long long first_bad;
    EXPECT_EQ(count_bad_pixels(img.data(), ref, 128, &first_bad), 0);
    EXPECT_EQ(first_bad, -1);
    size_t p = 0;
    while (ref.unsure[p]) p++;
    img[4 * p] ^= 0x40;  // one channel of one pixel, far out
    EXPECT_EQ(count_bad_pixels(img.data(), ref, 128, &first_bad), 1);
    EXPECT_EQ(first_bad, (long long)p);
    img = ref.rgba;
    img[4 * p + 3] = 254;  // alpha must be 255
    EXPECT_EQ(count_bad_pixels(img.data(), ref, 128, &first_bad), 1);
}

// ---- visible_spheres' own CPU check ----------------------------------------------
// main's visible_on_cpu and the tests' coverage() (visible_check.h) agree
// wherever both are sure. (It needs no GPU, so it lives here, not in
// test_visible_spheres.)
TEST(VisibleSpheresCpu, ProgramsCpuCheckAgrees) {
    for (int dim : {1, 64, 90}) {
        std::vector<Ball> scene = random_balls(6, 100, dim);
        std::vector<unsigned char> a = visible_on_cpu(scene, dim), b = coverage(scene, dim);
        long long compared = 0;
        for (size_t i = 0; i < a.size(); i++) {
            if (a[i] == 2 || b[i] == 2) continue;
            ASSERT_EQ(a[i], b[i]) << "pixel " << i << " at dim " << dim;
            compared++;
        }
        EXPECT_GE(compared, (long long)dim * dim - (long long)dim * dim / 1000 - 4);
    }
}
