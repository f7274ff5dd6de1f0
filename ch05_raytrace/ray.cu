// ray.cu -- the same ray tracer with its spheres in CONSTANT memory (chapter 5, step 2 of 2).
//
// One thread per pixel of a dim x dim image. Each thread shoots a ray from its
// pixel straight down the z axis, asks every sphere whether the ray hits it,
// keeps the nearest hit, and colours the pixel with that sphere's colour,
// darker towards the rim. ray_noconst.cu and ray.cu differ only in where the
// spheres live (diff them): in ray_noconst, an ordinary cudaMalloc'd array
// passed to the kernel; in ray, a __constant__ array filled with
// cudaMemcpyToSymbol. All the threads of a warp read the same sphere at the
// same moment, and constant memory is built for exactly that: one read,
// broadcast to all of them, from a small cache of its own. Both programs time
// the original's way (one pair of events around everything) and the kernel
// alone; ch05_raytrace/compare.py runs them back to back.
// Source: "CUDA by Example" (Sanders and Kandrot, 2010), chapter 6, constant memory and events.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o ray ray.cu
// Run:
//   ./ray --spheres 200 --seed 7          (--help lists every option; --output FILE writes it)
// The image opens in a window when built with freeglut and a display is
// there (ESC closes it); otherwise, or with --output, it is written to a file:
// .png or .ppm (a .png is compressed where built with libpng, as the CMake build is
// when it finds it; the plain nvcc line above writes it uncompressed).

#include <cstdio>
#include <vector>
#include "../common/args.h"
#include "../common/cpu_bitmap.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "scene.h"

const int BLOCK_SIDE = 16;  // 16 x 16 = 256 threads per block, as in the original

// The spheres, in constant memory: a fixed size (64 KB at most for the whole
// program), written by the host with cudaMemcpyToSymbol, read-only for kernels.
__constant__ Sphere s[MAX_SPHERES];

// The kernel: pixel (x, y) is thread (x, y) of a 2-D grid, and it reads the
// spheres from `s`.
__global__ void render(int count, unsigned char* ptr, int dim, bool divergent) {
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    // The grid is rounded up to whole blocks, so threads past the image's
    // edge must do nothing (the original's DIM was always a multiple of 16).
    if (x >= dim || y >= dim) return;
    int offset = x + y * dim;

    // Put the z axis through the centre of the image.
    float ox = (float)(x - dim / 2);
    float oy = (float)(y - dim / 2);

    // --divergent (the chapter's experiment, not the original's): each thread starts
    // its loop at a different sphere, so the 32 threads of a warp read 32
    // different spheres at the same moment. The image is the same.
    int first = (divergent && count > 0) ? (threadIdx.x + threadIdx.y * blockDim.x) % count : 0;

    float r = 0, g = 0, b = 0;  // black where nothing is hit
    float maxz = -INF;
    // LAB ch05.nearest-hit {
    for (int k = 0; k < count; k++) {
        int i = (first + k < count) ? first + k : first + k - count;
        float n;
        float t = s[i].hit(ox, oy, &n);
        if (t > maxz) {  // nearer than every sphere so far: this one wins
            r = s[i].r * n;
            g = s[i].g * n;
            b = s[i].b * n;
            maxz = t;
        }
    }
    // LAB }
    ptr[offset * 4 + 0] = (unsigned char)(int)(r * 255);
    ptr[offset * 4 + 1] = (unsigned char)(int)(g * 255);
    ptr[offset * 4 + 2] = (unsigned char)(int)(b * 255);
    ptr[offset * 4 + 3] = 255;
}

// The launch shared by main() below and by tests/ch05_raytrace: enough
// 16 x 16 blocks to cover the image, rounding up.
void launch_render(int count, unsigned char* ptr, int dim, bool divergent) {
    dim3 blocks(ceil_div(dim, BLOCK_SIDE), ceil_div(dim, BLOCK_SIDE));
    dim3 threads(BLOCK_SIDE, BLOCK_SIDE);
    render<<<blocks, threads>>>(count, ptr, dim, divergent);
    CHECK_LAUNCH();
}

// The original's program, from the first allocation to the image back on the
// host, timed as the original timed it: one pair of events around all of it.
// Returns those milliseconds; the image ends up in `bitmap`. With
// `kernel_only`, the launch is then also timed alone, `repeats` times, while
// the spheres and the image are still on the GPU.
double render_end_to_end(const std::vector<Sphere>& spheres, CPUBitmap& bitmap, bool divergent,
                         TimingStats* kernel_only = nullptr, int repeats = 0,
                         TimingStats* other_order = nullptr) {
    int count = (int)spheres.size();
    cudaEvent_t start, stop;
    HANDLE_ERROR(cudaEventCreate(&start));
    HANDLE_ERROR(cudaEventCreate(&stop));
    HANDLE_ERROR(cudaEventRecord(start, 0));
    unsigned char* dev_bitmap;
    HANDLE_ERROR(cudaMalloc((void**)&dev_bitmap, bitmap.image_size()));
    // Poison: 0x7F is grey with alpha 127, which no pixel of the kernel has, so
    // a pixel it missed shows. (0xFF would not do: alpha 255 is a real pixel's.)
    HANDLE_ERROR(cudaMemset(dev_bitmap, 0x7F, bitmap.image_size()));
    // LAB ch05.constant-copy {
    if (count > 0) HANDLE_ERROR(cudaMemcpyToSymbol(s, spheres.data(), sizeof(Sphere) * count));
    // LAB }
    auto launch = [&] { launch_render(count, dev_bitmap, bitmap.x, divergent); };
    launch();
    HANDLE_ERROR(
        cudaMemcpy(bitmap.get_ptr(), dev_bitmap, bitmap.image_size(), cudaMemcpyDeviceToHost));
    HANDLE_ERROR(cudaEventRecord(stop, 0));
    HANDLE_ERROR(cudaEventSynchronize(stop));
    float ms;
    HANDLE_ERROR(cudaEventElapsedTime(&ms, start, stop));
    HANDLE_ERROR(cudaEventDestroy(start));
    HANDLE_ERROR(cudaEventDestroy(stop));

    if (kernel_only) *kernel_only = time_gpu(launch, repeats);
    // The lesson's other half (scene.h): the same image, each warp's reads in the other order.
    if (other_order)
        *other_order =
            time_gpu([&] { launch_render(count, dev_bitmap, bitmap.x, !divergent); }, repeats);
    HANDLE_ERROR(cudaFree(dev_bitmap));
    return ms;
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: ray [options]\n"
    "  --spheres N     random spheres, 0..2048 (default 20)\n"
    "  --seed S        which random scene (default 1); the same seed gives the same image\n"
    "  --scene FILE    read the spheres from FILE instead: one per line, x y z radius r g b,\n"
    "                  '#' starts a comment (not together with --spheres or --seed)\n"
    "  --dim D         the image is D x D pixels, 1..16384 (default 1024)\n"
    "  --output FILE   write the image to FILE (.png or .ppm) instead of opening a window\n"
    "  --window        open the window as well (with --output: the file, then the window)\n"
    "  --divergent     each thread starts at a different sphere (the constant-memory experiment)\n"
    "  --repeats R     timed kernel launches after a warm-up (default 20)\n"
    "  --json          also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    SceneRun run = read_scene_options(args);  // --spheres --seed --scene --dim --output ...
    Report report(args, 20);                  // --repeats --json
    prepare_scene(args, &run);                // the scene and its CPU reference
    report.start(2 * run.image_bytes() + sizeof(Sphere) * run.count(), run.host_bytes());
    describe_run(report, args, &run, "constant", BLOCK_SIDE);

    // End to end, as the original timed it, five times: the first run also
    // pays one-time costs (loading the kernel), so the median is reported. The
    // last run also times the kernel alone.
    CPUBitmap bitmap(run.dim, run.dim);
    bitmap.output_path = run.output;
    bitmap.window_too = run.window;  // --window: the window as well as the file
    std::vector<double> end_to_end_ms;
    TimingStats kernel_only, other_order;
    for (int i = 0; i < 5; i++) {
        TimingStats* also_kernel = (i == 4) ? &kernel_only : nullptr;
        end_to_end_ms.push_back(render_end_to_end(run.spheres, bitmap, run.divergent, also_kernel,
                                                  report.repeats(),
                                                  i == 4 ? &other_order : nullptr));
    }
    report_times(report, run, summarize(end_to_end_ms), kernel_only);
    check_broadcast_lesson(report, run, kernel_only, other_order);

    bitmap.display_and_exit();
    return image_verdict(report, run, bitmap);  // the image against the CPU reference
}
#endif
