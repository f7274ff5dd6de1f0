// MM-GPU-SM.cu -- tiled matrix multiplication through shared memory (chapter 4, step 3).
// Source: "GPU Programming" (CSInParallel, 2012), chapter 4, MM-GPU-SM.
//
// The global-memory kernel reads every element of M and N Width times from
// global memory. Here each block of TILE_WIDTH x TILE_WIDTH threads computes
// a TILE_WIDTH x TILE_WIDTH tile of P in phases: in each phase the block
// copies one tile of M and one tile of N into __shared__ memory (one element
// per thread), waits, and then every thread takes TILE_WIDTH multiply-adds
// from the fast shared copy. Global traffic drops by a factor TILE_WIDTH.
//
// Unlike the original, any Width works: tiles that stick out past the edge
// of the matrix are filled with zeros, which add nothing to the sum.
//
// Standalone build, from this folder (add -DTILE_WIDTH=16 to try another tile):
//   nvcc -std=c++17 -O2 -o MM-GPU-SM MM-GPU-SM.cu -lcublas
// Run:
//   ./MM-GPU-SM                          the original's run: Width 1024, TILE_WIDTH 32
//   ./MM-GPU-SM --width 1000             a Width the original's kernel gets wrong
//   ./MM-GPU-SM --width 4096 --compare-cublas
//   ./MM-GPU-SM --help                   every option

#include "../common/handle_error.h"
#include "../common/report.h"
#include "cublas_yardstick.h"
#include "matrix.h"

// The step before, for the lesson (matrix.h: check_step_lesson): MM-GPU-GM's
// kernel, from its own file with its main() left out.
#ifdef CUDA_EXAMPLES_NO_MAIN
#include "MM-GPU-GM.cu"
#else
#define CUDA_EXAMPLES_NO_MAIN
#include "MM-GPU-GM.cu"
#undef CUDA_EXAMPLES_NO_MAIN
#endif

// The tile is TILE_WIDTH x TILE_WIDTH elements, and a block is as many
// threads. It is a compile-time constant because the size of a __shared__
// array must be. 32 (the original's blockD): 1024 threads, 2 x 4 KB of shared
// memory a block.
#ifndef TILE_WIDTH
#define TILE_WIDTH 32
#endif

__global__ void matmul_sm(const float* M, const float* N, float* P, int Width) {
    __shared__ float Ms[TILE_WIDTH][TILE_WIDTH];  // this phase's tile of M
    __shared__ float Ns[TILE_WIDTH][TILE_WIDTH];  // this phase's tile of N

    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE_WIDTH + tx;  // my column of P
    int y = blockIdx.y * TILE_WIDTH + ty;  // my row of P

    float sum = 0;
    // Rounded up: the original's Width / blockD drops the last, partial phase.
    int phases = (Width + TILE_WIDTH - 1) / TILE_WIDTH;
    for (int phase = 0; phase < phases; phase++) {
        // LAB ch04.tiles {
        // Each thread copies one element of each tile. Past the edge of the
        // matrix it writes a zero instead: 0 x anything adds nothing to sum.
        int m_col = phase * TILE_WIDTH + tx;  // the column of M I copy
        int n_row = phase * TILE_WIDTH + ty;  // the row of N I copy
        Ms[ty][tx] = (y < Width && m_col < Width) ? M[y * Width + m_col] : 0.0f;
        Ns[ty][tx] = (n_row < Width && x < Width) ? N[n_row * Width + x] : 0.0f;
        // Barrier 1: nobody may read the tiles before everyone has written them.
        __syncthreads();

        for (int k = 0; k < TILE_WIDTH; k++) sum += Ms[ty][k] * Ns[k][tx];
        // Barrier 2: nobody may overwrite the tiles (next phase) while a
        // slower thread of the block is still reading them.
        __syncthreads();
        // LAB }
    }
    // Only now may threads outside the matrix drop out: had they returned
    // early, they would have missed the barriers that the others wait at.
    if (y < Width && x < Width) P[y * Width + x] = sum;
}

// The launch shared by main() below and by tests/ch04_matmul.
void launch_matmul_sm(const float* dev_M, const float* dev_N, float* dev_P, int Width) {
    dim3 threads(TILE_WIDTH, TILE_WIDTH);
    dim3 blocks(ceil_div(Width, TILE_WIDTH), ceil_div(Width, TILE_WIDTH));
    matmul_sm<<<blocks, threads>>>(dev_M, dev_N, dev_P, Width);
    CHECK_LAUNCH();
}

#ifndef CUDA_EXAMPLES_NO_MAIN
const char* USAGE =
    "usage: MM-GPU-SM [--width W] [--data document|random] [--seed S] [--repeats R] [--cpu]\n"
    "                 [--compare-cublas] [--json]\n"
    "  --width W            matrices are W x W floats, 1..32768 (default 1024)\n"
    "  --data KIND          'random': odd multiples of 1/8 in [-1, 1], checked exactly\n"
    "                       (default); 'document': M[y*W+x] = x + y*W, as the original\n"
    "  --seed S             seed of the random data (default 1)\n"
    "  --repeats R          timed kernel launches after a warm-up (default 10)\n"
    "  --cpu                also time the CPU triple loop (MM-CPU) at this Width: slow\n"
    "  --compare-cublas     also time cuBLAS at this Width and print the ratio\n"
    "  --json               also print one JSON record per measurement\n";

int main(int argc, char** argv) {
    Args args(argc, argv, USAGE);
    MatrixRun run = read_matrix_run(args, "random", true);  // --width, --data, --seed, --cpu
    bool compare = args.flag("--compare-cublas");
    Report report(args, 10);
    int W = run.W;
    size_t bytes = run.bytes, guarded = run.guarded_bytes();  // P has a guard float
    // The host's memory is checked already, by read_matrix_run (at most 3/4 of the RAM).
    report.start(2 * bytes + guarded, 0);
    long long grid = ceil_div(W, TILE_WIDTH);  // blocks in x and in y; also the phases
    report_matrix_run(report, run).launch(grid * grid, TILE_WIDTH * TILE_WIDTH);

    float* M = (float*)host_alloc(args, bytes);
    float* N = (float*)host_alloc(args, bytes);
    float* P = (float*)host_alloc(args, guarded);
    fill_inputs(M, N, run);

    // End to end, as the original timed it: allocate, copy in, multiply, copy out.
    HostTimer end_to_end;
    float *dev_M, *dev_N, *dev_P;
    HANDLE_ERROR(cudaMalloc(&dev_M, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_N, bytes));
    HANDLE_ERROR(cudaMalloc(&dev_P, guarded));
    HANDLE_ERROR(cudaMemset(dev_P, 0xFF, guarded));  // poison: an unwritten element reads NaN
    HANDLE_ERROR(cudaMemcpy(dev_M, M, bytes, cudaMemcpyHostToDevice));
    HANDLE_ERROR(cudaMemcpy(dev_N, N, bytes, cudaMemcpyHostToDevice));
    launch_matmul_sm(dev_M, dev_N, dev_P, W);
    HANDLE_ERROR(cudaMemcpy(P, dev_P, guarded, cudaMemcpyDeviceToHost));
    double end_to_end_ms = end_to_end.stop_ms();
    report.note("end to end (malloc + copies + kernel)", "end_to_end_ms", end_to_end_ms);

    CheckResult check = check_product(M, N, P, W);
    check_guard(P, W, &check);  // P[W * W] must still hold the poison

    // Kernel only: the same launch repeated, each timed with events.
    TimingStats kernel = report.compute("tiled", "kernel only", run.flops(),
                                        [&] { launch_matmul_sm(dev_M, dev_N, dev_P, W); });
    // H200, 3 runs at Width 1024: 1.46 (1.45..1.46) times MM-GPU-GM's speed. At least
    // 1.2: room for a busy machine; tiles read from global memory again make 1.0.
    check_step_lesson(
        report, W, kernel, "tiles over one thread per element (MM-GPU-GM): speed-up",
        [&] { launch_matmul_gm(dev_M, dev_N, dev_P, W, 32, false); }, 1.2);
    report_cpu_baseline(report, args, run, M, N, end_to_end_ms, kernel);
    report_cublas_yardstick(report, compare, dev_M, dev_N, dev_P, W, kernel);  // overwrites P

    HANDLE_ERROR(cudaFree(dev_M));
    HANDLE_ERROR(cudaFree(dev_N));
    HANDLE_ERROR(cudaFree(dev_P));
    std::free(M);
    std::free(N);
    std::free(P);
    return report.verdict(check.passed(), "%s", describe(check).c_str());
}
#endif
