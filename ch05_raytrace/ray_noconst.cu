// ray_noconst.cu -- a ray tracer with its spheres in GLOBAL memory (chapter 5, step 1 of 2).
//
// One thread per pixel of a DIM x DIM image. Each thread shoots a ray from
// its pixel straight down the z axis, asks every sphere whether the ray hits
// it, keeps the nearest hit, and colours the pixel with that sphere's colour,
// darker towards the rim. The spheres are in an ordinary cudaMalloc'd array
// passed to the kernel; ray.cu is this same program with the spheres in
// constant memory instead, so the two can be compared fairly.
//
// Standalone build, from this folder:
//   nvcc -std=c++17 -O2 -o ray_noconst ray_noconst.cu
// Run:
//   ./ray_noconst                         20 random spheres, 1024 x 1024, seed 1
//   ./ray_noconst --spheres 200 --seed 7  another reproducible scene
//   ./ray_noconst --scene scenes/three_spheres.txt --output three.ppm
//   ./ray_noconst --help                  every option
// The image opens in a window when built with freeglut and a display is
// there (ESC closes it); otherwise, or with --output, it is written to a file:
// .ppm, or .png when built with libpng (the CMake build uses it if installed).

#include <cstdio>
#include <string>
#include <vector>
#include "../common/args.h"
#include "../common/cpu_bitmap.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"
#include "../common/report.h"
#include "../common/timer.h"
#include "scene.h"

const int BLOCK_SIDE = 16;  // 16 x 16 = 256 threads per block, as in the book

// The kernel: pixel (x, y) is thread (x, y) of a 2D grid. The spheres come in
// as a pointer to global memory.
__global__ void kernel(const Sphere* s, int count, unsigned char* ptr, int dim, bool divergent) {
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    // The grid is rounded up to whole blocks, so threads past the image's
    // edge must do nothing (the book's DIM was always a multiple of 16).
    if (x >= dim || y >= dim) return;
    int offset = x + y * dim;

    // Put the z axis through the centre of the image.
    float ox = (float)(x - dim / 2);
    float oy = (float)(y - dim / 2);

    // --divergent (the chapter's experiment, not the book): each thread starts
    // its loop at a different sphere, so the 32 threads of a warp read 32
    // different spheres at the same moment. The image is the same.
    int first = (divergent && count > 0) ? (threadIdx.x + threadIdx.y * blockDim.x) % count : 0;

    float r = 0, g = 0, b = 0;  // black where nothing is hit
    float maxz = -INF;
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
    ptr[offset * 4 + 0] = (unsigned char)(int)(r * 255);
    ptr[offset * 4 + 1] = (unsigned char)(int)(g * 255);
    ptr[offset * 4 + 2] = (unsigned char)(int)(b * 255);
    ptr[offset * 4 + 3] = 255;
}

// The launch shared by main() below and by tests/ch05_raytrace: enough
// 16 x 16 blocks to cover the image, rounding up.
void render_noconst(const Sphere* dev_spheres, int count, unsigned char* dev_bitmap, int dim,
                    bool divergent = false) {
    dim3 blocks((dim + BLOCK_SIDE - 1) / BLOCK_SIDE, (dim + BLOCK_SIDE - 1) / BLOCK_SIDE);
    dim3 threads(BLOCK_SIDE, BLOCK_SIDE);
    kernel<<<blocks, threads>>>(dev_spheres, count, dev_bitmap, dim, divergent);
    CHECK_LAUNCH();
}

// What the document timed, in one piece: allocate the image and the spheres
// on the GPU, copy the spheres there, render, copy the image back. Returns
// the milliseconds it took; the image ends up in `bitmap`.
double render_end_to_end_noconst(const std::vector<Sphere>& spheres, CPUBitmap& bitmap, bool divergent) {
    int count = (int)spheres.size();
    HostTimer timer;
    unsigned char* dev_bitmap;
    Sphere* s;
    HANDLE_ERROR(cudaMalloc((void**)&dev_bitmap, bitmap.image_size()));
    // Poison: 0x7F is grey with alpha 127, which no pixel of the kernel has, so
    // a pixel it missed shows. (0xFF would not do: alpha 255 is a real pixel's.)
    HANDLE_ERROR(cudaMemset(dev_bitmap, 0x7F, bitmap.image_size()));
    HANDLE_ERROR(cudaMalloc((void**)&s, sizeof(Sphere) * count + 1));
    HANDLE_ERROR(cudaMemcpy(s, spheres.data(), sizeof(Sphere) * count, cudaMemcpyHostToDevice));
    render_noconst(s, count, dev_bitmap, bitmap.x, divergent);
    HANDLE_ERROR(cudaMemcpy(bitmap.get_ptr(), dev_bitmap, bitmap.image_size(), cudaMemcpyDeviceToHost));
    double ms = timer.stop_ms();
    HANDLE_ERROR(cudaFree(s));
    HANDLE_ERROR(cudaFree(dev_bitmap));
    return ms;
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: ray_noconst [--spheres N] [--seed S] [--scene FILE] [--dim D] [--output FILE]\n"
    "                   [--divergent] [--repeats R] [--json]\n"
    "  --spheres N     random spheres, 0..2048 (default 20)\n"
    "  --seed S        which random scene (default 1); the same seed gives the same image\n"
    "  --scene FILE    read the spheres from FILE instead: one per line, x y z radius r g b,\n"
    "                  '#' starts a comment (not together with --spheres or --seed)\n"
    "  --dim D         the image is D x D pixels, 1..16384 (default 1024)\n"
    "  --output FILE   write the image to FILE (.png or .ppm) instead of opening a window\n"
    "  --divergent     each thread starts at a different sphere (the constant-memory experiment)\n"
    "  --repeats R     timed kernel launches after a warm-up (default 20)\n"
    "  --json          also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, "ray_noconst", USAGE);
    // The scene comes from a file or is drawn at random, never both. given()
    // asks whether an option is on the command line at all: an empty value
    // (--spheres '') is refused by text() and integer(), never taken as absent.
    if (args.given("--scene") && (args.given("--spheres") || args.given("--seed")))
        args.fail("--scene takes its spheres from the file; leave out --spheres and --seed");
    bool from_file = args.given("--scene");
    std::string scene_path = args.text("--scene", "");
    long long random_count = args.integer("--spheres", 20, 0, LLONG_MAX);  // checked below
    long long seed = args.integer("--seed", 1, 0, 1LL << 62);
    int dim = (int)args.integer("--dim", 1024, 1, 16384);
    std::string output = args.text("--output", "");
    bool divergent = args.flag("--divergent");
    int repeats = (int)args.integer("--repeats", 20, 1, 100000);
    bool json = args.flag("--json");
    args.done();
    if (random_count > MAX_SPHERES)
        args.fail("--spheres " + std::to_string(random_count) + " is too many: at most " +
                  std::to_string(MAX_SPHERES) +
                  " (ray.cu keeps them in 64 KB of constant memory, 28 bytes each)");
    // The image file is checked now, not after the GPU work: a name that
    // cannot be written is a usage error.
    std::string why;
    if (args.given("--output") && !CPUBitmap::check_output_path(output, &why))
        args.fail("--output " + output + ": " + why);

    // The scene. Bad input is refused here, before any GPU is needed.
    std::vector<Sphere> spheres;
    if (from_file) {
        std::string error;
        if (!load_scene_file(scene_path, &spheres, &error)) {
            std::fprintf(stderr, "ray_noconst: error: %s\n", error.c_str());
            return EXIT_CODE_USAGE;
        }
    } else {
        spheres = random_scene((uint64_t)seed, (int)random_count);
    }
    int count = (int)spheres.size();
    size_t image_bytes = (size_t)dim * dim * 4;
    // On the host: the image, and the CPU reference's image and unsure map.
    check_fits_on_host(args, 2 * image_bytes + image_bytes / 4);

    // The CPU reference, computed without Sphere::hit, and before the GPU:
    // a scene that cannot be checked is refused like any other bad input.
    HostTimer cpu_timer;
    ReferenceImage reference = render_reference(spheres, dim);
    double cpu_ms = cpu_timer.stop_ms();
    if (reference.unsure_count > max_unsure_pixels(dim)) {
        std::fprintf(stderr, "ray_noconst: error: %lld of %lld pixels are too close to call in "
                             "float (at most %lld may be), so the image could not be checked; "
                             "do two spheres lie in the same place?\n",
                     reference.unsure_count, (long long)dim * dim, max_unsure_pixels(dim));
        return EXIT_CODE_USAGE;
    }

    DeviceInfo dev = require_device("ray_noconst");
    check_fits_on_device(args, 2 * image_bytes + sizeof(Sphere) * count);
    print_device(dev);
    std::printf("ray_noconst: %d spheres in global memory (%s), %d x %d pixels, %d x %d threads per block%s\n",
                count, from_file ? scene_path.c_str() : ("seed " + std::to_string(seed)).c_str(),
                dim, dim, BLOCK_SIDE, BLOCK_SIDE, divergent ? ", divergent reads" : "");

    // End to end, as the document timed it, five times: the first run also
    // pays one-time costs (loading the kernel), so the median is reported.
    CPUBitmap bitmap(dim, dim);
    bitmap.output_path = output;
    std::vector<double> end_to_end_samples;
    for (int run = 0; run < 5; run++)
        end_to_end_samples.push_back(render_end_to_end_noconst(spheres, bitmap, divergent));
    TimingStats end_to_end = summarize(end_to_end_samples);

    // The check: the GPU's image against the CPU reference.
    long long first_bad;
    long long bad = count_bad_pixels(bitmap.get_ptr(), reference, dim, &first_bad);

    // Kernel only: the spheres and the image stay on the GPU; only the
    // launch is timed, many times.
    unsigned char* dev_bitmap;
    Sphere* s;
    HANDLE_ERROR(cudaMalloc((void**)&dev_bitmap, image_bytes));
    HANDLE_ERROR(cudaMalloc((void**)&s, sizeof(Sphere) * count + 1));
    HANDLE_ERROR(cudaMemcpy(s, spheres.data(), sizeof(Sphere) * count, cudaMemcpyHostToDevice));
    TimingStats kernel_only = time_gpu([&] { render_noconst(s, count, dev_bitmap, dim, divergent); }, repeats);
    HANDLE_ERROR(cudaFree(s));
    HANDLE_ERROR(cudaFree(dev_bitmap));

    std::printf("  end to end (malloc + copies + kernel), the document's 6.76 ms on a Tesla C2075:\n");
    print_timing("end to end", end_to_end, NAN, NAN);
    print_timing("kernel only", kernel_only, NAN, NAN);
    std::printf("  CPU reference: %.1f ms; %lld of %lld pixels too close to call in float (skipped)\n", cpu_ms,
                reference.unsure_count, (long long)dim * dim);

    const char* result = bad ? "FAIL" : "PASS";
    JsonRecord size, launch;
    size.add("dim", dim).add("spheres", count);
    size.add("scene", from_file ? scene_path.c_str() : "random");
    if (!from_file) size.add("seed", seed);
    launch.add("blocks_x", (dim + BLOCK_SIDE - 1) / BLOCK_SIDE).add("blocks_y", (dim + BLOCK_SIDE - 1) / BLOCK_SIDE)
          .add("threads", BLOCK_SIDE * BLOCK_SIDE);
    print_json(json, measurement("ray_noconst", divergent ? "global-divergent" : "global", dev, kernel_only, NAN,
                                 NAN, result)
                         .add("size", size).add("launch", launch).add("end_to_end_ms", end_to_end.median_ms)
                         .add("end_to_end_min_ms", end_to_end.min_ms).add("end_to_end_max_ms", end_to_end.max_ms)
                         .add("cpu_ms", cpu_ms));

    bitmap.display_and_exit();

    char detail[200];
    if (bad)
        std::snprintf(detail, sizeof detail, "%lld pixels differ from the CPU reference, first at (%lld, %lld)", bad,
                      first_bad % dim, first_bad / dim);
    else
        std::snprintf(detail, sizeof detail, "all %lld pixels match the CPU reference within 1 step",
                      (long long)dim * dim - reference.unsure_count);
    return verdict(bad == 0, detail);
}
#endif
