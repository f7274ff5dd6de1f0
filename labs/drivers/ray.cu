// The grading driver of labs ch05.1 and ch05.2 (labs/drivers/driver.h):
// render_end_to_end(spheres, bitmap, divergent), which copies the spheres to constant memory
// (ch05.2) and launches the kernel (ch05.1 inside it).
//
// The program's own cudaMalloc and cudaFree become the driver's guarded memory (driver.h).
#include "../common/cpu_bitmap.h"
#include "../common/handle_error.h"
#include "scene.h"

// What this driver calls of ray.cu, declared as the program declares it, not included
// (driver.h: a driver of its own).
struct TimingStats;  // timer.h's: only its address is passed
double render_end_to_end(const std::vector<Sphere>& spheres, CPUBitmap& bitmap, bool divergent,
                         TimingStats* kernel_only = nullptr, int repeats = 0,
                         TimingStats* other_order = nullptr);
#include "lab_driver.h"

// A random scene of `count` spheres in a dim x dim image; the image, both ways of visiting
// the spheres (--divergent starts each thread at another sphere: the same image). `front`:
// sphere `front - 1` is moved in front of all the others, over the middle of the image, so that
// a loop that skips or never uploads that sphere shows.
void render_once(Driver& d, const std::string& name, int dim, int count, int front = 0) {
    std::vector<Sphere> spheres(count);
    for (Sphere& s : spheres) {
        s.r = (float)d.rng.range(0, 255) / 255, s.g = (float)d.rng.range(0, 255) / 255;
        s.b = (float)d.rng.range(0, 255) / 255;
        s.radius = (float)d.rng.range(2, std::max(3, dim / 3));
        s.x = (float)d.rng.range(-dim / 2, dim / 2), s.y = (float)d.rng.range(-dim / 2, dim / 2);
        s.z = (float)d.rng.range(-dim, dim);
    }
    if (front > 0) {
        Sphere& s = spheres[front - 1];
        s.x = s.y = 0, s.z = 2.0f * dim, s.radius = dim / 3.0f;
    }
    for (int divergent = 0; divergent < 2; divergent++) {
        CPUBitmap bitmap(dim, dim);
        std::memset(bitmap.get_ptr(), 0, bitmap.image_size());
        render_end_to_end(spheres, bitmap, divergent);
        std::vector<unsigned char> image(bitmap.get_ptr(), bitmap.get_ptr() + bitmap.image_size());
        d.record(name + (divergent ? ".divergent" : ""), image);
    }
}

void drive(Driver& d) {
    render_once(d, "dim1-spheres1", 1, 1);
    render_once(d, "dim17-spheres0", 17, 0);
    render_once(d, "dim64-spheres1", 64, 1);
    render_once(d, "dim100-spheres20", 100, 20);
    render_once(d, "dim256-spheres200", 256, 200);
    render_once(d, "dim96-spheres30-first-in-front", 96, 30, 1);
    render_once(d, "dim96-spheres30-last-in-front", 96, 30, 30);
    for (int k = 0; k < 2; k++)
        render_once(d, "random" + std::to_string(k), (int)d.rng.range(2, 300),
                    (int)d.rng.range(2, 300));
}
