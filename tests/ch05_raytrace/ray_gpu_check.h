// GPU side of the chapter-5 tests: render a scene with one of the programs'
// launches into a poisoned image and compare it with the z-buffer renderer.
#pragma once

#include <vector>
#include "gpu_test.h"
#include "raytrace_check.h"

// render(spheres, dev_bitmap, dim) must fill a dim x dim RGBA image on the GPU.
template <typename Render>
std::vector<unsigned char> render_on_gpu(Render render, const std::vector<Sphere>& spheres,
                                         int dim) {
    DeviceArray<unsigned char> bitmap((size_t)dim * dim * 4);
    // Poison with 0x7F: grey with alpha 127, which no pixel of the kernel has,
    // so a pixel it forgot (or wrote twice over the wrong one) is caught.
    bitmap.poison(0x7F);
    render(spheres, bitmap.ptr, dim);
    HANDLE_ERROR(cudaDeviceSynchronize());
    return bitmap.download();
}

// Renders on the GPU and compares with the CPU. Float (GPU) and double (CPU)
// may disagree on pixels within a hair of a rim or of a tie in depth; those
// are "unsure" and skipped, and there must be few of them (0.1% at most).
// Everywhere else each channel must agree to within 1 step of 255 (colour x
// shade x 255 is truncated, and float and double may straddle a whole number).
template <typename Render>
ImageDiff check_scene(Render render, const std::vector<Sphere>& spheres, int dim) {
    std::vector<unsigned char> gpu = render_on_gpu(render, spheres, dim);
    ZImage ref = zbuffer_render(spheres, dim);
    ImageDiff d = compare_to_zbuffer(gpu, ref, dim);
    EXPECT_LE(d.unsure, (long long)dim * dim / 1000 + 4) << "too many pixels too close to call";
    return d;
}
