// Tests of scripts/ceilings.cu, the tour's yardsticks (among chapter 6's tests
// because two of them are the link's): its result checks pass right results
// and catch wrong ones, so its verdict means something.
#include "../../scripts/ceilings.cu"
#include "gpu_test.h"

class Ceilings : public GpuTest {};

TEST_F(Ceilings, CopyCheckCountsEveryDifferentWord) {
    const size_t words = 100003;
    DeviceArray<unsigned> x(words), y(words);
    x.poison(0x5A);
    y.poison(0x5A);
    EXPECT_EQ(device_words_differ(x.ptr, y.ptr, words * 4), 0ull);
    HANDLE_ERROR(cudaMemset(y.ptr + words - 1, 0, 4));  // the last word
    HANDLE_ERROR(cudaMemset(y.ptr + 17, 0, 8));         // and two in the middle
    EXPECT_EQ(device_words_differ(x.ptr, y.ptr, words * 4), 3ull);
}

TEST_F(Ceilings, SgemmCheckPassesCublasAndCatchesWrongProducts) {
    const int n = 300;  // not a multiple of any tile
    const size_t count = (size_t)n * n;
    DeviceArray<float> a(count), b(count), c(count);
    fill<<<256, 256>>>(a.ptr, count, 1.0f);
    CHECK_LAUNCH();
    fill<<<256, 256>>>(b.ptr, count, 2.0f);
    CHECK_LAUNCH();
    cublasHandle_t handle;
    HANDLE_CUBLAS(cublasCreate(&handle));
    HANDLE_CUBLAS(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
    const float one = 1.0f, zero = 0.0f;

    c.poison();  // NaN: a product never computed fails every entry
    EXPECT_EQ(sgemm_entries_wrong(a.ptr, b.ptr, c.ptr, n, 16), 16);

    HANDLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.ptr, n, b.ptr, n,
                              &zero, c.ptr, n));
    EXPECT_EQ(sgemm_entries_wrong(a.ptr, b.ptr, c.ptr, n, 16), 0);

    // A transposed: another product altogether.
    HANDLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a.ptr, n, b.ptr, n,
                              &zero, c.ptr, n));
    EXPECT_GE(sgemm_entries_wrong(a.ptr, b.ptr, c.ptr, n, 16), 12);

    // The last of the n products left out of every sum: far outside the rounding bound.
    HANDLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n - 1, &one, a.ptr, n, b.ptr,
                              n, &zero, c.ptr, n));
    EXPECT_GE(sgemm_entries_wrong(a.ptr, b.ptr, c.ptr, n, 16), 12);
    HANDLE_CUBLAS(cublasDestroy(handle));
}
