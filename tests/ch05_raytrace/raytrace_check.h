// What the chapter-5 tests share: a second CPU renderer, written differently
// from both Sphere::hit and scene.h's render_reference, hand-made scenes, and
// the comparison.
//
// zbuffer_render() works sphere by sphere, as a rasteriser does: for each
// sphere it visits only the pixels of its bounding square and keeps, per
// pixel, the nearest depth so far (a z-buffer). render_reference() works
// pixel by pixel. Two algorithms that agree are good evidence that both are
// right; the kernel is then compared with this one.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include "../../ch05_raytrace/scene.h"

struct ZImage {
    std::vector<unsigned char> rgba;  // dim * dim * 4, row 0 at the bottom
    std::vector<unsigned char> unsure;
    long long unsure_count = 0;
};

// Pixels where float may decide differently from double are marked unsure
// (the reasons are those of scene.h's render_reference; the margins here are
// the same on purpose, so the two can be compared pixel for pixel).
inline ZImage zbuffer_render(const std::vector<Sphere>& spheres, int dim) {
    size_t pixels = (size_t)dim * dim;
    std::vector<double> zbuf(pixels, -1e300), zslack(pixels, 0), shade(pixels, 0);
    std::vector<int> owner(pixels, -1);
    ZImage image;
    image.unsure.assign(pixels, 0);
    int half = dim / 2;
    for (size_t i = 0; i < spheres.size(); ++i) {
        const Sphere& s = spheres[i];
        double R = s.radius, R2 = R * R;
        // Pixel px sits at ox = px - half; the disc spans x - R .. x + R.
        int x0 = std::max(0, (int)std::floor(s.x - R) + half - 1);
        int x1 = std::min(dim - 1, (int)std::ceil(s.x + R) + half + 1);
        int y0 = std::max(0, (int)std::floor(s.y - R) + half - 1);
        int y1 = std::min(dim - 1, (int)std::ceil(s.y + R) + half + 1);
        for (int py = y0; py <= y1; ++py) {
            for (int px = x0; px <= x1; ++px) {
                size_t p = (size_t)py * dim + px;
                double u = (px - half) - (double)s.x, v = (py - half) - (double)s.y;
                double h2 = R2 - u * u - v * v;  // squared height of the surface above the disc
                if (std::fabs(h2) <= 1e-5 * R2) image.unsure[p] = 1;
                if (h2 <= 0) continue;
                double h = std::sqrt(h2);
                double depth = s.z + h;
                double slack = 1e-6 * (std::fabs(s.z) + R) + 1e-6 * R2 / h;
                if (owner[p] >= 0 && std::fabs(depth - zbuf[p]) <= slack + zslack[p])
                    image.unsure[p] = 1;
                if (depth > zbuf[p]) {  // strictly nearer: an equal depth keeps the earlier sphere
                    zbuf[p] = depth, zslack[p] = slack, shade[p] = h / R, owner[p] = (int)i;
                }
            }
        }
    }
    image.rgba.assign(pixels * 4, 0);
    for (size_t p = 0; p < pixels; ++p) {
        if (owner[p] >= 0) {
            const Sphere& s = spheres[owner[p]];
            image.rgba[4 * p + 0] = (unsigned char)(s.r * shade[p] * 255);
            image.rgba[4 * p + 1] = (unsigned char)(s.g * shade[p] * 255);
            image.rgba[4 * p + 2] = (unsigned char)(s.b * shade[p] * 255);
        }
        image.rgba[4 * p + 3] = 255;
        image.unsure_count += image.unsure[p];
    }
    return image;
}

// The verdict of one comparison, with enough detail for a failure message.
struct ImageDiff {
    long long bad = 0;         // sure pixels off by more than 1 step, or alpha != 255
    long long off_by_one = 0;  // sure pixels off by exactly 1 step in some channel
    long long unsure = 0;      // not compared
    long long first_bad = -1;
    std::string describe(int dim) const {
        return std::to_string(bad) + " bad pixels" +
               (first_bad >= 0 ? " (first at x=" + std::to_string(first_bad % dim) +
                                     ", y=" + std::to_string(first_bad / dim) + ")"
                               : std::string()) +
               ", " + std::to_string(off_by_one) + " off by one step, " + std::to_string(unsure) +
               " unsure";
    }
};

inline ImageDiff compare_to_zbuffer(const std::vector<unsigned char>& gpu, const ZImage& ref,
                                    int dim) {
    ImageDiff d;
    for (long long p = 0; p < (long long)dim * dim; ++p) {
        if (ref.unsure[p]) {
            d.unsure++;
            continue;
        }
        int worst = gpu[4 * p + 3] == 255 ? 0 : 255;
        for (int c = 0; c < 3; ++c)
            worst = std::max(worst, std::abs((int)gpu[4 * p + c] - (int)ref.rgba[4 * p + c]));
        if (worst == 1) d.off_by_one++;
        if (worst > 1 && d.bad++ == 0) d.first_bad = p;
    }
    return d;
}

inline Sphere make_sphere(float x, float y, float z, float radius, float r, float g, float b) {
    Sphere s;
    s.x = x, s.y = y, s.z = z, s.radius = radius, s.r = r, s.g = g, s.b = b;
    return s;
}

// Hand-made scenes, each aimed at one way a ray tracer goes wrong.
// Two discs overlapping; the one listed SECOND is nearer, so a kernel that
// keeps the first hit (instead of the nearest) paints the overlap wrongly.
inline std::vector<Sphere> overlapping_scene() {
    return {make_sphere(-30, 0, 0, 80, 1, 0, 0), make_sphere(30, 10, 60, 80, 0, 1, 0)};
}
// A small sphere entirely behind a big one (invisible), then one in front.
inline std::vector<Sphere> behind_scene() {
    return {make_sphere(0, 0, 0, 100, 0, 0, 1), make_sphere(10, -5, -300, 40, 1, 1, 0),
            make_sphere(-20, 20, 200, 30, 1, 0, 1)};
}
// Spheres hanging over the edges and corners of a `dim` image.
inline std::vector<Sphere> edge_scene(int dim) {
    float h = dim / 2.0f;
    return {make_sphere(-h, 0, 0, dim / 4.0f, 1, 0.5f, 0),
            make_sphere(h - 1, h - 1, 10, dim / 3.0f, 0, 0.5f, 1),
            make_sphere(0, -h - 5, -10, dim / 5.0f, 0.3f, 1, 0.3f),
            make_sphere(3 * h, 3 * h, 0, 10, 1, 1, 1)};  // wholly outside: must change nothing
}
