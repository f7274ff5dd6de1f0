// Tests of VA-GPU-11: the program's own kernel and launch, against the CPU.
#include "../../ch02_vector_add/VA-GPU-11.cu"
#include "vector_add_check.h"

class VA_GPU_11 : public GpuTest {};

static void launch(const elem_t* a, const elem_t* b, elem_t* c, long long n) {
    launch_add(a, b, c, n);
}

TEST_F(VA_GPU_11, OneElement) {
    EXPECT_EQ(count_wrong_vector_add(1, launch), 0);
}
TEST_F(VA_GPU_11, OddSize) {
    EXPECT_EQ(count_wrong_vector_add(4099, launch), 0);
}
TEST_F(VA_GPU_11, DocumentDataLarge) {
    EXPECT_EQ(count_wrong_document_data(1 << 20, launch), 0);
}
