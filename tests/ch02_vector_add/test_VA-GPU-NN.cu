// Tests of VA-GPU-NN: the program's own kernel and launch, against the CPU.
#include "../../ch02_vector_add/VA-GPU-NN.cu"
#include "vector_add_check.h"

class VA_GPU_NN : public GpuTest {};

static auto grid(int blocks, int threads) {
    return [blocks, threads](const elem_t* a, const elem_t* b, elem_t* c, long long n) {
        launch_add(a, b, c, n, blocks, threads);
    };
}

TEST_F(VA_GPU_NN, OneElement) {
    EXPECT_EQ(count_wrong_vector_add(1, grid(128, 128)), 0);
}
TEST_F(VA_GPU_NN, FewerElementsThanThreads) {
    EXPECT_EQ(count_wrong_vector_add(1000, grid(128, 128)), 0);
}
TEST_F(VA_GPU_NN, NotAMultipleOfTheBlockSize) {
    EXPECT_EQ(count_wrong_vector_add(100003, grid(128, 128)), 0);
}
TEST_F(VA_GPU_NN, ExactlyOneElementPerThread) {
    EXPECT_EQ(count_wrong_vector_add(128 * 128, grid(128, 128)), 0);
}
// Non-square grids: the original's blockIdx.x * numBlock indexing breaks here.
TEST_F(VA_GPU_NN, NonSquare64x256) {
    EXPECT_EQ(count_wrong_vector_add(1000003, grid(64, 256)), 0);
}
TEST_F(VA_GPU_NN, NonSquare256x64) {
    EXPECT_EQ(count_wrong_vector_add(1000003, grid(256, 64)), 0);
}
TEST_F(VA_GPU_NN, OddGrid3x37) {
    EXPECT_EQ(count_wrong_vector_add(9999, grid(3, 37)), 0);
}
TEST_F(VA_GPU_NN, OneBlockOf1024) {
    EXPECT_EQ(count_wrong_vector_add(5000, grid(1, 1024)), 0);
}
TEST_F(VA_GPU_NN, Large) {
    EXPECT_EQ(count_wrong_vector_add(1 << 24, grid(128, 128)), 0);
}
TEST_F(VA_GPU_NN, LargeAutoGrid) {
    EXPECT_EQ(count_wrong_vector_add(1 << 24, grid(blocks_to_fill_gpu(add, 256), 256)), 0);
}
TEST_F(VA_GPU_NN, DocumentDataLarge) {
    EXPECT_EQ(count_wrong_document_data(1 << 24, grid(128, 128)), 0);
}

// The checker must be able to fail: the original's indexing,
// tid = threadIdx.x + blockIdx.x * numBlock, on a 64 x 256 grid leaves
// elements unwritten (still poisoned), and count_wrong_vector_add sees them.
__global__ void add_with_document_indexing(const elem_t* a, const elem_t* b, elem_t* c,
                                           long long n) {
    long long i =
        threadIdx.x + (long long)blockIdx.x * gridDim.x;  // the bug: gridDim, not blockDim
    while (i < n) {
        c[i] = a[i] + b[i];
        i += (long long)gridDim.x * blockDim.x;
    }
}

TEST_F(VA_GPU_NN, CheckerCatchesTheDocumentsIndexingBug) {
    auto buggy = [](const elem_t* a, const elem_t* b, elem_t* c, long long n) {
        add_with_document_indexing<<<64, 256>>>(a, b, c, n);
        CHECK_LAUNCH();
    };
    EXPECT_GT(count_wrong_vector_add(100000, buggy), 0);
    // ... while the square 128 x 128 grid of the original hides it.
    auto square = [](const elem_t* a, const elem_t* b, elem_t* c, long long n) {
        add_with_document_indexing<<<128, 128>>>(a, b, c, n);
        CHECK_LAUNCH();
    };
    EXPECT_EQ(count_wrong_vector_add(100000, square), 0);
}

// ... and a kernel that runs one past the end (i <= n) writes the guard
// element c[n]: every element is right, and the checker still counts one.
__global__ void add_one_past_the_end(const elem_t* a, const elem_t* b, elem_t* c, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += stride)
        c[i] = a[i] + b[i];  // the bug: <= n, where < n is right
}

TEST_F(VA_GPU_NN, CheckerCatchesAWritePastTheEnd) {
    auto buggy = [](const elem_t* a, const elem_t* b, elem_t* c, long long n) {
        add_one_past_the_end<<<128, 128>>>(a, b, c, n);
        CHECK_LAUNCH();
    };
    EXPECT_EQ(count_wrong_vector_add(100000, buggy), 1);
    EXPECT_EQ(count_wrong_document_data(5, buggy), 1);
}
