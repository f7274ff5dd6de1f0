// ch04_matmul/tensor_inputs.h -- what a Tensor Core is fed: the input formats
// TF32 and BF16, how much they round, and the conversion of M and N into them.
// Shared by MM-GPU-TC and MM-cuBLAS (--precision), so both multiply the very
// same rounded numbers. Programs that include it are .cu files.
//
// Both formats keep float's 8 exponent bits (the same range, so nothing
// overflows that did not before) and drop mantissa bits:
//   FP32  23 mantissa bits, 4 bytes: the chapter's other programs
//   TF32  10 mantissa bits, stored in a float whose low 13 bits are 0
//   BF16   7 mantissa bits, 2 bytes (__nv_bfloat16): half the memory traffic
// Rounding x to nearest with p mantissa bits moves it by at most u |x|, where
// u = 2^-(p+1) is the format's unit roundoff: 2^-11 for TF32, 2^-8 for BF16.
// The products and their sum are then done in FP32 (the accumulator).
#pragma once

#include <cuda_bf16.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include "../common/args.h"
#include "../common/device_info.h"
#include "../common/handle_error.h"

enum class Precision { fp32, tf32, bf16 };

inline const char* precision_name(Precision p) {
    return p == Precision::tf32 ? "tf32" : p == Precision::bf16 ? "bf16" : "fp32";
}

// How far rounding to the format may move an input, relative to its size.
// FP32: 0, the inputs are used as they are.
inline double unit_roundoff(Precision p) {
    return p == Precision::tf32   ? std::ldexp(1.0, -11)
           : p == Precision::bf16 ? std::ldexp(1.0, -8)
                                  : 0.0;
}

// Bytes of one W x W matrix of inputs as the Tensor Cores read them.
inline size_t input_bytes(Precision p, long long W) {
    return (size_t)W * W * (p == Precision::bf16 ? sizeof(__nv_bfloat16) : sizeof(float));
}

// --precision tf32|bf16 (and fp32 where the program has it).
inline Precision read_precision(Args& args, const char* fallback, bool fp32_allowed) {
    std::string name = args.text("--precision", fallback);
    if (name == "tf32") return Precision::tf32;
    if (name == "bf16") return Precision::bf16;
    if (name == "fp32" && fp32_allowed) return Precision::fp32;
    args.fail(fp32_allowed ? "--precision must be 'fp32', 'tf32' or 'bf16'"
                           : "--precision must be 'tf32' or 'bf16'");
}

// TF32 and BF16 Tensor Cores came with compute capability 8.0 (Ampere). On an
// older GPU the program cannot run its lesson: it says so and exits 77, the
// code for "no usable GPU" (ctest: skipped).
inline void require_tensor_cores(const DeviceInfo& dev, const char* program) {
    if (dev.cc_major >= 8) return;
    std::printf(
        "%s: TF32 and BF16 Tensor Cores need compute capability 8.0 or newer; this GPU "
        "is %s\n",
        program, dev.compute_capability().c_str());
    std::exit(EXIT_CODE_NO_DEVICE);
}

// x rounded to TF32, to nearest with ties away from zero, as the GPU's own
// cvt.rna.tf32.f32 (wmma::__float_to_tf32) does -- but in integer arithmetic,
// so that it works on every GPU and on the CPU, where the tests emulate it:
// adding half of TF32's last place (bit 12) and clearing the 13 bits below
// TF32's 10 rounds the magnitude to nearest. Infinity and NaN are left alone.
__host__ __device__ inline float round_to_tf32(float x) {
    unsigned bits;
    std::memcpy(&bits, &x, sizeof bits);
    if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;
    std::memcpy(&x, &bits, sizeof bits);
    return x;
}

// The conversions: one thread per element, grid-stride. Done once per
// product, before the multiplication and outside its timing: a library
// caller keeps its weights in BF16 anyway, and rounds to TF32 only once.
__global__ void convert_to_tf32(const float* in, float* out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = round_to_tf32(in[i]);
}

__global__ void convert_to_bf16(const float* in, __nv_bfloat16* out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = __float2bfloat16_rn(in[i]);  // to nearest, ties to even
}

// dev_in (n floats) converted into dev_out: n floats (TF32) or n bf16 values.
inline void convert_inputs(Precision p, const float* dev_in, void* dev_out, size_t n) {
    int blocks = (int)std::min<size_t>((n + 255) / 256, 4096);
    if (p == Precision::tf32)
        convert_to_tf32<<<blocks, 256>>>(dev_in, (float*)dev_out, n);
    else
        convert_to_bf16<<<blocks, 256>>>(dev_in, (__nv_bfloat16*)dev_out, n);
    CHECK_LAUNCH();
}
