// tests/ch07_multi_gpu/multi_gpu_test.h -- skipping a test that needs more GPUs than there are.
//
// REQUIRE_GPUS(k) in a test body: with fewer than k GPUs visible the test is skipped and says
// how many it needs and how many there are (a one-GPU machine cannot show a ring of two).
#pragma once

#include <gtest/gtest.h>
#include "gpu_test.h"

#define REQUIRE_GPUS(k)                                                             \
    do {                                                                            \
        int visible_ = visible_gpus();                                              \
        if (visible_ < (k))                                                         \
            GTEST_SKIP() << "needs " << (k) << " GPUs, " << visible_ << " visible"; \
    } while (0)
