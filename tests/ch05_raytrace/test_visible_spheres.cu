// Tests of visible_spheres: its kernel and launch against a CPU coverage map
// built ball by ball (visible_check.h). The test of the program's own CPU
// check needs no GPU and lives in test_scene.cu.
#include "../../ch05_raytrace/visible_spheres.cu"
#include "gpu_test.h"
#include "visible_check.h"

class VisibleSpheres : public GpuTest {};

// Runs the program's launch on a poisoned map; returns the wrong pixels.
template <typename Launch>
long long count_wrong(Launch launch, const std::vector<Ball>& scene, int dim,
                      long long* unsure = nullptr) {
    DeviceArray<bool> dev((size_t)dim * dim);
    dev.poison(0x7F);
    launch(scene, dev.ptr, dim);
    HANDLE_ERROR(cudaDeviceSynchronize());
    std::vector<unsigned char> gpu((size_t)dim * dim);
    HANDLE_ERROR(cudaMemcpy(gpu.data(), dev.ptr, gpu.size(), cudaMemcpyDeviceToHost));
    std::vector<unsigned char> cpu = coverage(scene, dim);
    long long wrong = 0, rims = 0;
    for (size_t i = 0; i < cpu.size(); i++) {
        if (cpu[i] == 2)
            rims++;
        else
            wrong += gpu[i] != cpu[i];
    }
    EXPECT_LE(rims, (long long)dim * dim / 1000 + 4);
    if (unsure) *unsure = rims;
    return wrong;
}

TEST_F(VisibleSpheres, OriginalScene40) {
    EXPECT_EQ(count_wrong(cast_visible, random_balls(1, 40, 64), 64), 0);
}
TEST_F(VisibleSpheres, ManySeeds) {
    for (uint64_t seed = 2; seed < 10; seed++)
        EXPECT_EQ(count_wrong(cast_visible, random_balls(seed, 60, 80), 80), 0);
}
TEST_F(VisibleSpheres, FiveHundredSpheres) {
    EXPECT_EQ(count_wrong(cast_visible, random_balls(3, 500, 128), 128), 0);
}
TEST_F(VisibleSpheres, DimNotAMultipleOfTheBlock) {
    for (int dim : {1, 7, 17, 77})
        EXPECT_EQ(count_wrong(cast_visible, random_balls(4, 50, dim), dim), 0);
}
TEST_F(VisibleSpheres, EmptySceneSeesNothing) {
    EXPECT_EQ(count_wrong(cast_visible, {}, 33), 0);
}
TEST_F(VisibleSpheres, LargeMap) {
    EXPECT_EQ(count_wrong(cast_visible, random_balls(5, 500, 1024), 1024), 0);
}
// Constant memory keeps what an earlier upload left in it. poison_balls()
// fills every slot with a ball that covers the map; the scene then overwrites
// the first few. A kernel that reads past `count` sees a covered map.
TEST_F(VisibleSpheres, ReadsNoBallPastCount) {
    for (int dim : {64, 77}) {
        poison_balls(dim);
        std::vector<Ball> scene = {Ball{-10, 0, 0, 8}, Ball{12, 3, 5, 9}};
        EXPECT_EQ(count_wrong(cast_visible, scene, dim), 0) << "dim " << dim;
        EXPECT_EQ(count_wrong(cast_visible, random_balls(7, 30, dim), dim), 0) << "dim " << dim;
    }
}

// The checker must be able to fail: a kernel that skips the last ball.
__global__ void raytrace_skips_last(bool* visible, int count, int dim) {
    int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x >= dim || y >= dim) return;
    float nearest = NO_HIT;
    for (int i = 0; i < count - 1; i++)
        nearest = fmaxf(nearest, balls[i].hit((float)(x - dim / 2), (float)(y - dim / 2)));
    visible[x + y * dim] = nearest != NO_HIT;
}
TEST_F(VisibleSpheres, CheckerCatchesAPlantedBug) {
    auto buggy = [](const std::vector<Ball>& scene, bool* dev, int dim) {
        HANDLE_ERROR(cudaMemcpyToSymbol(balls, scene.data(), sizeof(Ball) * scene.size()));
        raytrace_skips_last<<<dim3(ceil_div(dim, 16), ceil_div(dim, 16)), dim3(16, 16)>>>(
            dev, (int)scene.size(), dim);
        CHECK_LAUNCH_SYNC();
    };
    std::vector<Ball> scene = {Ball{-10, 0, 0, 8}, Ball{12, 3, 5, 9}};
    EXPECT_GT(count_wrong(buggy, scene, 64), 100);
}
