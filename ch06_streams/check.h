// check.h -- the CPU's side of streams.cu (chapter 6, part 2): the input words,
// the check of what the kernel made of them, and the poisoned guard words.
//
// The kernel applies a linear congruential random number generator,
// x -> a*x + c (mod 2^32), `steps` times to each word. Applying it twice gives
// x -> (a*a)*x + (a*c + c): again a*x + c, with new constants. So `steps`
// applications are one affine map whose constants the CPU works out once, and
// then every word costs one multiply-add however long the kernel ran. Unsigned
// arithmetic wraps mod 2^32 on the CPU exactly as on the GPU.
#pragma once

#include <cstdint>
#include <vector>
#include "../common/handle_error.h"

typedef uint32_t word_t;
const word_t LCG_A = 1664525u;     // the multiplier and increment of
const word_t LCG_C = 1013904223u;  // Numerical Recipes' generator

struct AffineMap {
    word_t a, c;
};

AffineMap lcg_power(int steps) {
    AffineMap m = {1, 0};  // the identity: zero steps
    for (int s = 0; s < steps; s++) m = {LCG_A * m.a, LCG_A * m.c + LCG_C};
    return m;
}

// The input words: any values will do, as long as they are not all alike.
void fill_input(word_t* in, long long n) {
    for (long long i = 0; i < n; i++) in[i] = (word_t)(i * 2654435761ull + 12345u);
}

// How many of the n result words differ from `steps` generator steps of their input.
long long count_wrong(const word_t* in, const word_t* out, long long n, int steps) {
    AffineMap m = lcg_power(steps);
    long long wrong = 0;
    for (long long i = 0; i < n; i++) wrong += (out[i] != (word_t)(m.a * in[i] + m.c));
    return wrong;
}

// The poison: what cudaMemset(..., 0xFF, ...) leaves in a word. Every device
// buffer is poisoned before a checked run, so that a chunk a mode forgets shows
// up as wrong words.
const word_t POISON = 0xFFFFFFFFu;

void poison(const std::vector<word_t*>& dev_buffers, long long words) {
    for (word_t* buffer : dev_buffers)
        HANDLE_ERROR(cudaMemset(buffer, 0xFF, words * sizeof(word_t)));
}

// Each device buffer has a guard word past the largest chunk, at index `guard`.
// After a poisoned run: in how many buffers it no longer holds the poison. A
// kernel whose bound is i <= n, or a copy one word too long, writes there while
// every result word can be right.
long long guards_written(const std::vector<word_t*>& dev_buffers, long long guard) {
    long long written = 0;
    for (const word_t* buffer : dev_buffers) {
        word_t word = 0;
        HANDLE_ERROR(cudaMemcpy(&word, buffer + guard, sizeof(word_t), cudaMemcpyDeviceToHost));
        written += (word != POISON);
    }
    return written;
}
