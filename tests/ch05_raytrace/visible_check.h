// What the visible_spheres tests share (the GPU tests and the CPU test of the
// program's own checker): a coverage map built ball by ball -- each ball marks
// the pixels of its disc -- which is a different route from both Ball::hit and
// the program's pixel-by-pixel visible_on_cpu. Include after visible_spheres.cu.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

// 1 = covered, 0 = not, 2 = within a hair of a rim (float may go either way).
inline std::vector<unsigned char> coverage(const std::vector<Ball>& scene, int dim) {
    std::vector<unsigned char> covered((size_t)dim * dim, 0), rim((size_t)dim * dim, 0);
    int half = dim / 2;
    for (const Ball& b : scene) {
        double R2 = (double)b.radius * b.radius;
        int x0 = std::max(0, (int)std::floor(b.x - b.radius) + half - 1);
        int x1 = std::min(dim - 1, (int)std::ceil(b.x + b.radius) + half + 1);
        int y0 = std::max(0, (int)std::floor(b.y - b.radius) + half - 1);
        int y1 = std::min(dim - 1, (int)std::ceil(b.y + b.radius) + half + 1);
        for (int py = y0; py <= y1; py++)
            for (int px = x0; px <= x1; px++) {
                double u = px - half - (double)b.x, v = py - half - (double)b.y;
                double h2 = R2 - u * u - v * v;
                if (std::fabs(h2) <= 1e-5 * R2)
                    rim[(size_t)py * dim + px] = 1;
                else if (h2 > 0)
                    covered[(size_t)py * dim + px] = 1;
            }
    }
    for (size_t i = 0; i < covered.size(); i++)
        if (!covered[i] && rim[i]) covered[i] = 2;
    return covered;
}
