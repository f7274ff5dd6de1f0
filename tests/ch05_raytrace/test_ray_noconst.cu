// Tests of ray_noconst: its own kernel and launch (spheres in global memory),
// against the z-buffer CPU renderer of raytrace_check.h.
// gtest first: cpu_bitmap.h may pull in X11/Xlib.h, whose macro `None`
// breaks gtest's headers when they come after it.
#include "gpu_test.h"
#include <cstring>
#include "../../ch05_raytrace/ray_noconst.cu"
#include "ray_gpu_check.h"

class RayNoconst : public GpuTest {};

static void render_scene(const std::vector<Sphere>& spheres, unsigned char* dev_bitmap, int dim) {
    DeviceArray<Sphere> dev_spheres(spheres.size());
    dev_spheres.upload(spheres);
    launch_render(dev_spheres.ptr, (int)spheres.size(), dev_bitmap, dim, false);
    HANDLE_ERROR(cudaDeviceSynchronize());
}
static void render_scene_divergent(const std::vector<Sphere>& spheres, unsigned char* dev_bitmap,
                                   int dim) {
    DeviceArray<Sphere> dev_spheres(spheres.size());
    dev_spheres.upload(spheres);
    launch_render(dev_spheres.ptr, (int)spheres.size(), dev_bitmap, dim, true);
    HANDLE_ERROR(cudaDeviceSynchronize());
}

#define EXPECT_SCENE_OK(render_fn, spheres, dim)            \
    do {                                                    \
        ImageDiff d = check_scene(render_fn, spheres, dim); \
        EXPECT_EQ(d.bad, 0) << d.describe(dim);             \
    } while (0)

TEST_F(RayNoconst, RandomScenes) {
    for (uint64_t seed : {1, 2, 3, 42}) EXPECT_SCENE_OK(render_scene, random_scene(seed, 20), 256);
}
TEST_F(RayNoconst, TwoHundredSpheres) {
    EXPECT_SCENE_OK(render_scene, random_scene(7, 200), 300);
}
TEST_F(RayNoconst, MaximumSpheres) {
    EXPECT_SCENE_OK(render_scene, random_scene(8, MAX_SPHERES), 96);
}
TEST_F(RayNoconst, OriginalSizeLarge) {
    EXPECT_SCENE_OK(render_scene, random_scene(1, 20), 1024);
}
TEST_F(RayNoconst, OverlappingNearerWins) {
    std::vector<Sphere> scene = overlapping_scene();
    EXPECT_SCENE_OK(render_scene, scene, 200);
    // Pixel (100, 105) is ox = 0, oy = 5: inside both discs. The second,
    // nearer sphere is pure green, so red must be 0 and green bright.
    std::vector<unsigned char> img = render_on_gpu(render_scene, scene, 200);
    const unsigned char* p = &img[4 * (105 * 200 + 100)];
    EXPECT_EQ(p[0], 0);
    EXPECT_GT(p[1], 200);
}
TEST_F(RayNoconst, SphereBehindAnother) {
    EXPECT_SCENE_OK(render_scene, behind_scene(), 256);
}
TEST_F(RayNoconst, SpheresPartlyOutsideTheImage) {
    for (int dim : {200, 37, 64}) EXPECT_SCENE_OK(render_scene, edge_scene(dim), dim);
}
TEST_F(RayNoconst, EmptySceneIsBlack) {
    std::vector<unsigned char> img = render_on_gpu(render_scene, {}, 50);
    for (size_t i = 0; i < img.size(); i++) ASSERT_EQ(img[i], i % 4 == 3 ? 255 : 0) << "byte " << i;
}
TEST_F(RayNoconst, DimNotAMultipleOfTheBlock) {
    for (int dim : {1, 2, 15, 17, 100, 257})
        EXPECT_SCENE_OK(render_scene, random_scene(5, 30), dim);
}
TEST_F(RayNoconst, SameSeedSameImageBitForBit) {
    std::vector<unsigned char> a = render_on_gpu(render_scene, random_scene(11, 50), 300);
    std::vector<unsigned char> b = render_on_gpu(render_scene, random_scene(11, 50), 300);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size()));
}
TEST_F(RayNoconst, DivergentReadsGiveTheSameImage) {
    std::vector<Sphere> scene = random_scene(9, 200);
    EXPECT_SCENE_OK(render_scene_divergent, scene, 256);
    ZImage ref = zbuffer_render(scene, 256);
    std::vector<unsigned char> a = render_on_gpu(render_scene, scene, 256);
    std::vector<unsigned char> b = render_on_gpu(render_scene_divergent, scene, 256);
    for (size_t p = 0; p < ref.unsure.size(); p++)
        if (!ref.unsure[p]) ASSERT_EQ(0, std::memcmp(&a[4 * p], &b[4 * p], 4)) << "pixel " << p;
}
// main's path: render_end_to_end into a CPUBitmap. The scene has
// its last sphere in front of the others (2806 of the 123 x 123 pixels are
// its), so a sphere left out of the copy shows.
TEST_F(RayNoconst, EndToEndPathAsInMain) {
    std::vector<Sphere> scene = overlapping_scene();
    for (const Sphere& s : behind_scene()) scene.push_back(s);
    CPUBitmap bitmap(123, 123);
    HostTimer outside;
    double ms = render_end_to_end(scene, bitmap, false);
    double outside_ms = outside.stop_ms();
    // The time it reports is that of real work, taken within the call: more
    // than zero, and no more than the call took as seen from outside.
    EXPECT_GT(ms, 0.0);
    EXPECT_LE(ms, outside_ms);
    std::vector<unsigned char> img(bitmap.get_ptr(), bitmap.get_ptr() + bitmap.image_size());
    ImageDiff d = compare_to_zbuffer(img, zbuffer_render(scene, 123), 123);
    EXPECT_EQ(d.bad, 0) << d.describe(123);
    // main's own check (scene.h's reference) agrees.
    long long first_bad;
    EXPECT_EQ(count_bad_pixels(bitmap.get_ptr(), render_reference(scene, 123), 123, &first_bad), 0);
}
// The spheres' array here holds one sphere more than `count`: a white one that
// covers the image in front of everything. A kernel that reads past `count`
// (in either loop order) paints it white.
static void render_with_cover(const std::vector<Sphere>& spheres, unsigned char* dev_bitmap,
                              int dim, bool divergent) {
    std::vector<Sphere> with_cover = spheres;
    with_cover.push_back(make_sphere(0, 0, 1000, 10000, 1, 1, 1));
    DeviceArray<Sphere> dev_spheres(with_cover.size());
    dev_spheres.upload(with_cover);
    launch_render(dev_spheres.ptr, (int)spheres.size(), dev_bitmap, dim, divergent);
    HANDLE_ERROR(cudaDeviceSynchronize());
}
TEST_F(RayNoconst, ReadsNoSpherePastCount) {
    auto uniform = [](const std::vector<Sphere>& s, unsigned char* b, int dim) {
        render_with_cover(s, b, dim, false);
    };
    auto divergent = [](const std::vector<Sphere>& s, unsigned char* b, int dim) {
        render_with_cover(s, b, dim, true);
    };
    EXPECT_SCENE_OK(uniform, overlapping_scene(), 200);
    EXPECT_SCENE_OK(divergent, overlapping_scene(), 200);
    EXPECT_SCENE_OK(divergent, edge_scene(37), 37);
}

// The checker must be able to fail. Two planted bugs:
// 1. the first sphere hit wins instead of the nearest;
// 2. the original's offset x + y * blockDim.x * gridDim.x, wrong when the grid
//    is wider than the image (DIM not a multiple of 16).
__global__ void kernel_first_hit_wins(const Sphere* s, int count, unsigned char* ptr, int dim) {
    int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x >= dim || y >= dim) return;
    float r = 0, g = 0, b = 0;
    for (int i = 0; i < count; i++) {
        float n;
        if (s[i].hit((float)(x - dim / 2), (float)(y - dim / 2), &n) > -INF) {
            r = s[i].r * n, g = s[i].g * n, b = s[i].b * n;
            break;
        }
    }
    int o = x + y * dim;
    ptr[4 * o] = (int)(r * 255), ptr[4 * o + 1] = (int)(g * 255), ptr[4 * o + 2] = (int)(b * 255),
            ptr[4 * o + 3] = 255;
}
__global__ void kernel_book_offset(const Sphere* s, int count, unsigned char* ptr, int dim) {
    int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x >= dim || y >= dim) return;
    int o = x + y * blockDim.x * gridDim.x;  // the bug
    if (o >= dim * dim) return;
    float r = 0, g = 0, b = 0, maxz = -INF;
    for (int i = 0; i < count; i++) {
        float n, t = s[i].hit((float)(x - dim / 2), (float)(y - dim / 2), &n);
        if (t > maxz) r = s[i].r * n, g = s[i].g * n, b = s[i].b * n, maxz = t;
    }
    ptr[4 * o] = (int)(r * 255), ptr[4 * o + 1] = (int)(g * 255), ptr[4 * o + 2] = (int)(b * 255),
            ptr[4 * o + 3] = 255;
}

TEST_F(RayNoconst, CheckerCatchesPlantedBugs) {
    auto first_hit = [](const std::vector<Sphere>& spheres, unsigned char* bitmap, int dim) {
        DeviceArray<Sphere> dev(spheres.size());
        dev.upload(spheres);
        kernel_first_hit_wins<<<dim3(ceil_div(dim, 16), ceil_div(dim, 16)), dim3(16, 16)>>>(
            dev.ptr, (int)spheres.size(), bitmap, dim);
        CHECK_LAUNCH_SYNC();
    };
    auto book_offset = [](const std::vector<Sphere>& spheres, unsigned char* bitmap, int dim) {
        DeviceArray<Sphere> dev(spheres.size());
        dev.upload(spheres);
        kernel_book_offset<<<dim3(ceil_div(dim, 16), ceil_div(dim, 16)), dim3(16, 16)>>>(
            dev.ptr, (int)spheres.size(), bitmap, dim);
        CHECK_LAUNCH_SYNC();
    };
    EXPECT_GT(check_scene(first_hit, overlapping_scene(), 200).bad, 1000);
    EXPECT_GT(check_scene(book_offset, random_scene(1, 20), 100).bad, 1000);
    // ... while with DIM a multiple of 16 the original's offset is right.
    EXPECT_EQ(check_scene(book_offset, random_scene(1, 20), 128).bad, 0);
}
