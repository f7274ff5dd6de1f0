// CPU tests of chapter 5 (no GPU needed): random scenes, the scene-file
// parser, and the two CPU renderers checked against each other and against
// pixels worked out by hand.
#include <gtest/gtest.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "raytrace_check.h"

#ifndef CH05_SOURCE_DIR
#error "CH05_SOURCE_DIR must name the source tree (set by tests/ch05_raytrace/CMakeLists.txt)"
#endif
static std::string source(const std::string& relative) { return std::string(CH05_SOURCE_DIR) + "/" + relative; }

// ---- random scenes ------------------------------------------------------------
TEST(RandomScene, SameSeedSameSceneBitForBit) {
    std::vector<Sphere> a = random_scene(7, 200), b = random_scene(7, 200), c = random_scene(8, 200);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), sizeof(Sphere) * a.size()));
    EXPECT_NE(0, std::memcmp(a.data(), c.data(), sizeof(Sphere) * a.size()));
}
TEST(RandomScene, TheDocumentsRanges) {
    for (const Sphere& s : random_scene(1, 2048)) {
        for (float c : {s.r, s.g, s.b}) EXPECT_TRUE(c >= 0 && c < 1);
        for (float v : {s.x, s.y, s.z}) EXPECT_TRUE(v >= -500 && v < 500);
        EXPECT_TRUE(s.radius >= 20 && s.radius < 120);
    }
}
TEST(RandomScene, KnownValuesOnEveryMachine) {
    // SplitMix64 from seed 1: the first output is 0x910A2DEC89025CC1, whose
    // top 24 bits are 0x910A2D = 9505325, so r = 9505325 / 2^24.
    SceneRandom random(1);
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
    ASSERT_TRUE(parse_scene("# a scene\n\n 1 2 3 4 0.1 0.2 0.3  # trailing\r\n-5e1 +6 7.5 8 1 0 1\n", "s", &spheres,
                            &error)) << error;
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
    EXPECT_EQ(parse_error("1 2 3 4 0 0 0\n\n1 2 3\n"), "scene:3: expected 7 numbers (x y z radius r g b), found 3");
    EXPECT_EQ(parse_error("1 2 3 4 0 0 0 9\n"), "scene:1: expected 7 numbers (x y z radius r g b), found 8");
    EXPECT_EQ(parse_error("#\n1 2 abc 4 0 0 0\n"), "scene:2: z 'abc' is not a number");
    EXPECT_EQ(parse_error("1 2 3 0 0 0 0\n"), "scene:1: radius 0 is out of range (0.001 to 100000)");
    EXPECT_EQ(parse_error("1 2 3 -4 0 0 0\n"), "scene:1: radius -4 is out of range (0.001 to 100000)");
    EXPECT_EQ(parse_error("1 2 3 4 0 1.01 0\n"), "scene:1: g 1.01 is out of range (0 to 1)");
    EXPECT_EQ(parse_error("1e6 2 3 4 0 0 0\n"), "scene:1: x 1e6 is out of range (-100000 to 100000)");
    EXPECT_EQ(parse_error("1 2 3 4 0 0 -0.5\n"), "scene:1: b -0.5 is out of range (0 to 1)");
    // Found by the fuzzer: positive as a double, zero as the float the GPU gets.
    EXPECT_EQ(parse_error("1 2 3 1e-50 0 0 0\n"), "scene:1: radius 1e-50 is out of range (0.001 to 100000)");
}
TEST(SceneParser, RefusesWhatStrtodWouldAccept) {
    for (const char* word : {"nan", "inf", "-inf", "0x10", "1e999", "1..2", "1e", "--1", "+", "."}) {
        std::string error = parse_error(std::string("1 2 ") + word + " 4 0 0 0\n");
        EXPECT_NE(error.find("scene:1: z"), std::string::npos) << word << ": " << error;
    }
    EXPECT_EQ(parse_error(std::string("1 2 3 4 0 0 0\n1 2\0 3 4 0 0 0\n", 29)), "scene:2: unexpected character (byte 0)");
    EXPECT_EQ(parse_error("1 2 3 4 0 0 \xff\n"), "scene:1: unexpected character (byte 255)");
}
TEST(SceneParser, TooManySpheres) {
    std::string text;
    for (int i = 0; i < MAX_SPHERES; i++) text += "0 0 0 1 0 0 0\n";
    std::vector<Sphere> spheres;
    std::string error;
    ASSERT_TRUE(parse_scene(text, "s", &spheres, &error));
    EXPECT_EQ((int)spheres.size(), MAX_SPHERES);
    EXPECT_EQ(parse_error(text + "# a comment is fine\n" + "0 0 0 1 0 0 0\n"),
              "scene:2050: too many spheres (at most 2048, all of which must fit in 64 KB of constant memory)");
}
TEST(SceneParser, Files) {
    std::vector<Sphere> spheres;
    std::string error;
    ASSERT_TRUE(load_scene_file(source("ch05_raytrace/scenes/three_spheres.txt"), &spheres, &error)) << error;
    EXPECT_EQ(spheres.size(), 3u);
    ASSERT_TRUE(load_scene_file(source("tests/ch05_raytrace/scenes/good_mixed.txt"), &spheres, &error)) << error;
    EXPECT_EQ(spheres.size(), 2u);
    EXPECT_FALSE(load_scene_file(source("tests/ch05_raytrace/scenes/bad_count.txt"), &spheres, &error));
    EXPECT_NE(error.find("bad_count.txt:4: expected 7 numbers"), std::string::npos) << error;
    EXPECT_FALSE(load_scene_file(source("tests/ch05_raytrace/scenes/no-such-file.txt"), &spheres, &error));
    EXPECT_NE(error.find("cannot open the scene file: No such file or directory"), std::string::npos) << error;
    EXPECT_FALSE(load_scene_file(source("tests/ch05_raytrace/scenes"), &spheres, &error));
    EXPECT_NE(error.find("cannot read the scene file: Is a directory"), std::string::npos) << error;
}

// ---- the CPU renderers ------------------------------------------------------------
// One sphere at the origin, radius 100, colour (1, 0.5, 0.25), on a 301 x 301
// image (centre pixel 150): worked out by hand.
TEST(CpuRenderers, PixelsWorkedOutByHand) {
    std::vector<Sphere> scene = {make_sphere(0, 0, 0, 100, 1, 0.5f, 0.25f)};
    ReferenceImage a = render_reference(scene, 301);
    ZImage b = zbuffer_render(scene, 301);
    auto pixel = [](const std::vector<unsigned char>& rgba, int x, int y) { return &rgba[4 * (y * 301 + x)]; };
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
        const unsigned char* corner = pixel(*img, 150 + 80, 150 - 59);  // 80^2 + 59^2 = 9881 < 10000: inside
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
    struct Case { std::vector<Sphere> scene; int dim; };
    std::vector<Case> cases = {{random_scene(1, 20), 1024}, {random_scene(2, 200), 300},
                               {random_scene(3, MAX_SPHERES), 64}, {behind_scene(), 256},
                               {edge_scene(37), 37}, {overlapping_scene(), 200}, {{}, 16}};
    for (const Case& c : cases) {
        ReferenceImage a = render_reference(c.scene, c.dim);
        ZImage b = zbuffer_render(c.scene, c.dim);
        long long differ = 0;
        for (long long p = 0; p < (long long)c.dim * c.dim; p++) {
            EXPECT_EQ(a.unsure[p], b.unsure[p]);
            if (a.unsure[p]) continue;
            for (int ch = 0; ch < 4; ch++) differ += std::abs((int)a.rgba[4 * p + ch] - (int)b.rgba[4 * p + ch]) > 1;
        }
        EXPECT_EQ(differ, 0) << c.scene.size() << " spheres at " << c.dim;
        EXPECT_LE(a.unsure_count, (long long)c.dim * c.dim / 1000 + 4);
    }
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
