// MM-GPU-SM built with another tile size (-DTILE_WIDTH=8, the handout's exercise):
// the edges must still be right when Width is not a multiple of the tile.
#define TILE_WIDTH 8
#include "../../ch04_matmul/MM-GPU-SM.cu"
#include "matmul_check.h"

class MM_GPU_SM_Tile8 : public GpuTest {};

static void sm(const float* M, const float* N, float* P, int W) {
    launch_matmul_sm(M, N, P, W);
}

TEST_F(MM_GPU_SM_Tile8, Width1) {
    EXPECT_PRODUCT_OK(1, sm);
}
TEST_F(MM_GPU_SM_Tile8, Width7) {
    EXPECT_PRODUCT_OK(7, sm);
}
TEST_F(MM_GPU_SM_Tile8, Width8) {
    EXPECT_PRODUCT_OK(8, sm);
}
TEST_F(MM_GPU_SM_Tile8, Width9) {
    EXPECT_PRODUCT_OK(9, sm);
}
TEST_F(MM_GPU_SM_Tile8, Width33) {
    EXPECT_PRODUCT_OK(33, sm);
}
TEST_F(MM_GPU_SM_Tile8, LargeWidth1000) {
    EXPECT_PRODUCT_OK(1000, sm);
}
TEST_F(MM_GPU_SM_Tile8, LargeWidth1025) {
    EXPECT_PRODUCT_OK(1025, sm);
}
TEST_F(MM_GPU_SM_Tile8, ExactWidth9) {
    EXPECT_PRODUCT_EXACT(9, sm);
}
TEST_F(MM_GPU_SM_Tile8, LargeExactWidth8193) {
    EXPECT_PRODUCT_EXACT(8193, sm);
}
