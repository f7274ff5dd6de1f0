// launcher.cu -- the grader's own timer: it times a student's kernel with none of the student's
// host code in its process (labs/grader/score.py, docs/grader.md).
//
// A timed run of the student's driver would be a process that holds student code, writing its
// own timings: code run at exit could rewrite them. Here the grader's program loads the
// student's kernels as a module (the device code of the student's build, taken from its binary
// by the grader), looks the kernel up by name, draws the inputs from the seed into guarded
// buffers (new ones for every launch), launches it with its own arguments and launch
// configuration, times every launch with its own CUDA events and writes the file itself. Device
// code cannot write host memory or a file, so the timings and digests are the launcher's. The
// reference's kernels run through the same launcher, alternated with the student's: the same
// program on both sides.
//
//   launcher --module FILE --kernel MANGLED --seed S --out FILE --time [--wait] --param N=V...
//
// The kernels it knows, with the launch the course's program makes:
//   add(a, b, c, n)       ch02.2: --param n, threads; blocks: as many as fill the GPU
//   matmul_sm(M, N, P, W) ch04.3: --param W, tile; TILE_WIDTH x TILE_WIDTH threads a block
#include <chrono>

#include "../../common/device_info.h"
#include "../../common/handle_error.h"
#define LAB_NO_DRIVER_MAIN
#include "driver.h"

std::vector<unsigned char> read_file(const std::string& path) {
    std::vector<unsigned char> data;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        std::perror(path.c_str());
        std::exit(EXIT_CODE_USAGE);
    }
    unsigned char buf[1 << 16];
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;)
        data.insert(data.end(), buf, buf + got);
    std::fclose(f);
    return data;
}

// c = a + b on 64-bit integers, as ch02.2's driver draws them, on the GPU (no host vector to
// fill, copy and upload while the gate holds the GPU), and again before every launch, each time
// from a stream of its own (driver.h: redraw_inputs, launch_stream): each launch adds vectors of
// its own, which no earlier launch's could foretell.
void time_add(Driver& d, const void* kernel) {
    long long n = d.param("n");
    int threads = (int)d.param("threads");
    long long *da = d.blank_input<long long>(n), *db = d.blank_input<long long>(n);
    d.redraw_inputs = [&] {
        lab_draw_pairs<<<1024, 256>>>(da, db, n, d.launch_stream(), -(1LL << 40), 1LL << 40);
    };
    d.redraw_inputs();
    HANDLE_ERROR(cudaGetLastError());
    d.seal_input(da, n * sizeof(long long)), d.seal_input(db, n * sizeof(long long));
    long long* dc = d.output<long long>(n + 1);
    int blocks = blocks_to_fill_gpu(kernel, threads);
    void* args[] = {&da, &db, &dc, &n};
    d.timed_launches(
        "kernel", 20, [&] { HANDLE_ERROR(cudaMemset(dc, 0xFF, (n + 1) * sizeof(long long))); },
        [&] { HANDLE_ERROR(cudaLaunchKernel(kernel, blocks, threads, args, 0, 0)); },
        [&](const std::string& name) { d.digest_later(name, dc, (n + 1) * sizeof(long long)); });
}

// P = M x N on W x W floats, odd multiples of 1/8 (as ch04.3's driver draws them), drawn on the
// GPU and again before every launch, as time_add's.
void time_matmul(Driver& d, const void* kernel) {
    int W = (int)d.param("W"), tile = (int)d.param("tile");
    long long count = (long long)W * W;
    float *dM = d.blank_input<float>(count), *dN = d.blank_input<float>(count);
    d.redraw_inputs = [&] { lab_draw_eighths<<<1024, 256>>>(dM, dN, count, d.launch_stream()); };
    d.redraw_inputs();
    HANDLE_ERROR(cudaGetLastError());
    d.seal_input(dM, count * sizeof(float)), d.seal_input(dN, count * sizeof(float));
    float* dP = d.output<float>(count + 1);
    dim3 threads(tile, tile), blocks((W + tile - 1) / tile, (W + tile - 1) / tile);
    void* args[] = {&dM, &dN, &dP, &W};
    d.timed_launches(
        "tiled", 10, [&] { HANDLE_ERROR(cudaMemset(dP, 0xFF, (count + 1) * sizeof(float))); },
        [&] { HANDLE_ERROR(cudaLaunchKernel(kernel, blocks, threads, args, 0, 0)); },
        [&](const std::string& name) { d.digest_later(name, dP, (count + 1) * sizeof(float)); });
}

// Where a timed run's time went, one line on stderr that the grader's trace keeps
// (CUDA_EXAMPLES_LAB_TRACE, docs/grader.md): when main began, when its turn came (--wait: the
// grader's go; otherwise once the module was loaded) and when it was done (seconds since the
// epoch, against the moments the grader started the fenced process, let it go and saw it end),
// then milliseconds to open the GPU, to load the module, to make the inputs (from the go) and to
// run the timed launches.
double ms_between(std::chrono::steady_clock::time_point a,
                  std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

int main(int argc, char** argv) {
    Driver d;
    const char* path = d.parse(argc, argv);
    if (!path || !d.timing() || !d.words.count("--module") || !d.words.count("--kernel")) {
        std::fprintf(stderr,
                     "usage: launcher --module FILE --kernel NAME --seed S --out FILE "
                     "--time --param NAME=V...\n");
        return EXIT_CODE_USAGE;
    }
    d.out = std::fopen(path, "wb");
    if (!d.out) {
        std::perror(path);
        return EXIT_CODE_FAILED;
    }
    double main_at =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto began = std::chrono::steady_clock::now();
    d.memory.init();  // the GPU first: a run that cannot get it exits EXIT_CODE_NO_GPU_NOW
    auto context = std::chrono::steady_clock::now();
    std::vector<unsigned char> image = read_file(d.words["--module"]);
    cudaLibrary_t library;
    HANDLE_ERROR(
        cudaLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const std::string name = d.words["--kernel"];
    cudaKernel_t kernel;
    HANDLE_ERROR(cudaLibraryGetKernel(&kernel, library, name.c_str()));
    auto module = std::chrono::steady_clock::now();
    d.wait_for_go();  // started ahead of its turn: the GPU open, the module loaded, nothing run
    auto go = std::chrono::steady_clock::now();
    if (name.rfind("_Z3add", 0) == 0)
        time_add(d, (const void*)kernel);
    else if (name.rfind("_Z9matmul_sm", 0) == 0)
        time_matmul(d, (const void*)kernel);
    else {
        std::fprintf(stderr, "launcher: no launch known for kernel %s\n", name.c_str());
        return EXIT_CODE_USAGE;
    }
    HANDLE_ERROR(cudaDeviceSynchronize());
    auto timed = std::chrono::steady_clock::now();
    HANDLE_ERROR(cudaLibraryUnload(library));
    std::fprintf(d.out, "end\n");
    int rc = std::fclose(d.out) == 0 ? 0 : 1;
    std::fprintf(stderr,
                 "launcher: main at %.3f, go at %.3f, done at %.3f; ms: context %.1f module %.1f "
                 "inputs %.1f launches %.1f\n",
                 main_at, main_at + ms_between(began, go) / 1000,
                 main_at + ms_between(began, std::chrono::steady_clock::now()) / 1000,
                 ms_between(began, context), ms_between(context, module),
                 ms_between(go, d.launches_began), ms_between(d.launches_began, timed));
    return rc;
}
