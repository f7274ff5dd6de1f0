// What a kernel past the lint could do in its warm-up against a launcher whose stream went on from
// launch to launch (main at 9281c45): recover the state from ch02.2's a[0], b[0], predict the next
// launch's inputs. gcc -O2 launcher_stream_predict.c && ./a.out (0.1 s on one core here).
// The same search, on the GPU inside a kernel: truth_cheats.py, add-foretells-the-next-launchs-inputs.
#include <stdio.h>
#include <stdint.h>
#define G 0x9E3779B97F4A7C15ull
static uint64_t mix(uint64_t z) { z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }
static uint64_t inv(uint64_t a) { uint64_t x = a; for (int i = 0; i < 6; i++) x *= 2 - a * x; return x; }
static uint64_t unshift(uint64_t y, int s) { uint64_t x = y; for (int i = 0; i < 64 / s + 1; i++) x = y ^ (x >> s); return x; }
static uint64_t unmix(uint64_t z) { z = unshift(z, 31); z *= inv(0x94D049BB133111EBull); z = unshift(z, 27); z *= inv(0xBF58476D1CE4E5B9ull); return unshift(z, 30); }
static long long range(uint64_t z, long long lo, long long hi) { return lo + (long long)(z % (uint64_t)(hi - lo + 1)); }
int main(void) {
    uint64_t secret = 0x123456789abcdef1ull;  // the launcher's stream state (unknown to the kernel)
    long long lo = -(1LL << 40), hi = 1LL << 40, n = 25165824;
    long long a0 = range(mix(secret + 1 * G), lo, hi), b0 = range(mix(secret + 2 * G), lo, hi);
    uint64_t m = (uint64_t)(hi - lo + 1), r = (uint64_t)(a0 - lo), found = 0, tried = 0;
    for (uint64_t z = r; z >= r; z += m) {  // every 64-bit z with z % m == r (until it wraps)
        tried++;
        uint64_t s = unmix(z) - G;
        if (range(mix(s + 2 * G), lo, hi) == b0) { found = s; printf("state %s after %llu candidates\n", s == secret ? "recovered" : "WRONG", (unsigned long long)tried); break; }
    }
    uint64_t next = found + 2 * (uint64_t)n * G;  // the launcher's skip of 2n draws
    printf("next launch's a[0]: predicted %lld, drawn %lld\n", range(mix(next + G), lo, hi), range(mix(secret + 2 * (uint64_t)n * G + G), lo, hi));
    return 0;
}
