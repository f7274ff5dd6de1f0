// Tests of VA-GPU-N1: the program's own kernel and launch, against the CPU.
#include "../../ch02_vector_add/VA-GPU-N1.cu"
#include "vector_add_check.h"

class VA_GPU_N1 : public GpuTest {};

static auto with_blocks(int blocks) {
    return [blocks](const elem_t* a, const elem_t* b, elem_t* c, long long n) {
        launch_add(a, b, c, n, blocks);
    };
}

TEST_F(VA_GPU_N1, OneElement) {
    EXPECT_EQ(count_wrong_vector_add(1, with_blocks(128)), 0);
}
TEST_F(VA_GPU_N1, FewerElementsThanBlocks) {
    EXPECT_EQ(count_wrong_vector_add(5, with_blocks(128)), 0);
}
TEST_F(VA_GPU_N1, NotAMultipleOfTheBlocks) {
    EXPECT_EQ(count_wrong_vector_add(1000, with_blocks(128)), 0);
}
TEST_F(VA_GPU_N1, OddBlockCount) {
    EXPECT_EQ(count_wrong_vector_add(100003, with_blocks(7)), 0);
}
TEST_F(VA_GPU_N1, SingleBlock) {
    EXPECT_EQ(count_wrong_vector_add(3000, with_blocks(1)), 0);
}
TEST_F(VA_GPU_N1, Large) {
    EXPECT_EQ(count_wrong_vector_add(1 << 24, with_blocks(4096)), 0);
}
TEST_F(VA_GPU_N1, DocumentDataLarge) {
    EXPECT_EQ(count_wrong_document_data(1 << 24, with_blocks(4096)), 0);
}
