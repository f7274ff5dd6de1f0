// The window path of CPUBitmap, tested for real: a bitmap filled on the CPU
// (a ray-traced scene plus corner marks that reveal a flipped or shifted
// image) is shown in a freeglut window; once it is drawn, `xwd` takes a
// screenshot of that window from the X server, the window closes itself, and
// the screenshot must equal the bitmap pixel for pixel.
//
// Run by window_test.sh under its own Xvfb server:  window_test OUTDIR
// Exit: 0 the screenshot matches, 1 it does not (or no window appeared).
#define __device__  // scene.h's Sphere::hit is device code; unused here
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "common/cpu_bitmap.h"
#include "raytrace_check.h"

static std::string out_dir;
static int attempts = 0;
static long long mismatches = -1;

// The screenshot, read from xwd's format: a big-endian header, the window
// name, a colour table, then rows of pixels, top row first.
struct Screenshot {
    int width = 0, height = 0;       // of the pixels below
    int window_x = 0, window_y = 0;  // where the captured window is on the screen
    int window_width = 0, window_height = 0;
    std::vector<unsigned char> rgb;  // top row first
    std::string error;
};

static uint32_t be32(const unsigned char* p) {
    return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}
static int shift_of(uint32_t mask) {
    int s = 0;
    while (mask && !(mask & 1)) mask >>= 1, s++;
    return s;
}

static Screenshot read_xwd(const std::string& path) {
    Screenshot shot;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        shot.error = "no screenshot file " + path;
        return shot;
    }
    std::vector<unsigned char> data;
    unsigned char chunk[65536];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0)
        data.insert(data.end(), chunk, chunk + got);
    std::fclose(f);
    if (data.size() < 100) {
        shot.error = "screenshot too short";
        return shot;
    }
    const unsigned char* h = data.data();
    uint32_t header_size = be32(h), format = be32(h + 8), width = be32(h + 16),
             height = be32(h + 20);
    uint32_t byte_order = be32(h + 28), bits_per_pixel = be32(h + 44),
             bytes_per_line = be32(h + 48);
    uint32_t red_mask = be32(h + 56), green_mask = be32(h + 60), blue_mask = be32(h + 64),
             ncolors = be32(h + 76);
    shot.window_width = (int)be32(h + 80), shot.window_height = (int)be32(h + 84);
    shot.window_x = (int)be32(h + 88), shot.window_y = (int)be32(h + 92);
    if (format != 2 || (bits_per_pixel != 32 && bits_per_pixel != 24)) {
        shot.error = "unexpected xwd format " + std::to_string(format) + " / " +
                     std::to_string(bits_per_pixel) + " bpp";
        return shot;
    }
    size_t offset = (size_t)header_size + (size_t)ncolors * 12;
    if (offset + (size_t)bytes_per_line * height > data.size()) {
        shot.error = "screenshot truncated";
        return shot;
    }
    shot.width = (int)width, shot.height = (int)height;
    shot.rgb.resize((size_t)width * height * 3);
    for (uint32_t row = 0; row < height; row++)
        for (uint32_t col = 0; col < width; col++) {
            int bytes = (int)bits_per_pixel / 8;  // 4, or 3 when packed
            const unsigned char* p =
                &data[offset + (size_t)row * bytes_per_line + (size_t)bytes * col];
            uint32_t v = 0;
            for (int i = 0; i < bytes; i++)  // byte_order 0: least significant byte first
                v |= (uint32_t)p[i] << (8 * (byte_order == 0 ? i : bytes - 1 - i));
            unsigned char* o = &shot.rgb[((size_t)row * width + col) * 3];
            o[0] = (unsigned char)((v & red_mask) >> shift_of(red_mask));
            o[1] = (unsigned char)((v & green_mask) >> shift_of(green_mask));
            o[2] = (unsigned char)((v & blue_mask) >> shift_of(blue_mask));
        }
    return shot;
}

static bool run_xwd(const std::string& args, Screenshot* shot) {
    std::string path = out_dir + "/screen.xwd";
    std::string command = "xwd -silent " + args + " -out '" + path + "'";
    if (std::system(command.c_str()) != 0) {
        std::fprintf(stderr, "window_test: '%s' failed\n", command.c_str());
        return false;
    }
    *shot = read_xwd(path);
    if (!shot->error.empty()) std::fprintf(stderr, "window_test: %s\n", shot->error.c_str());
    return shot->error.empty();
}

// The hook CPUBitmap calls once the image is drawn: screenshot, compare,
// and close the window (or ask for another draw, a few times, in case the
// first one reached the screen late).
static bool screenshot_and_compare(CPUBitmap* bitmap) {
    attempts++;
    // Where is the window (named "bitmap" by CPUBitmap) on the screen? Then
    // take the whole screen and cut that rectangle out: what a user would see.
    Screenshot window, screen;
    if (!run_xwd("-name bitmap", &window) || !run_xwd("-root", &screen)) return true;
    if (window.window_width != bitmap->x || window.window_height != bitmap->y) {
        std::fprintf(stderr, "window_test: the window is %d x %d, the bitmap %d x %d\n",
                     window.window_width, window.window_height, bitmap->x, bitmap->y);
        return true;
    }
    if (window.window_x < 0 || window.window_y < 0 || window.window_x + bitmap->x > screen.width ||
        window.window_y + bitmap->y > screen.height) {
        std::fprintf(stderr, "window_test: the window is not wholly on the screen\n");
        return true;
    }
    // Row 0 of the bitmap is the bottom of the window: screen row
    // window_y + (height - 1 - y) must equal bitmap row y.
    mismatches = 0;
    for (int y = 0; y < bitmap->y; y++)
        for (int x = 0; x < bitmap->x; x++) {
            const unsigned char* want = bitmap->get_ptr() + 4 * ((size_t)y * bitmap->x + x);
            size_t row = (size_t)window.window_y + (bitmap->y - 1 - y),
                   col = (size_t)window.window_x + x;
            const unsigned char* got = &screen.rgb[3 * (row * screen.width + col)];
            if (want[0] != got[0] || want[1] != got[1] || want[2] != got[2]) {
                if (mismatches++ == 0)
                    std::fprintf(stderr,
                                 "window_test: first difference at (%d, %d): "
                                 "bitmap %d %d %d, screen %d %d %d\n",
                                 x, y, want[0], want[1], want[2], got[0], got[1], got[2]);
            }
        }
    if (mismatches > 0 && attempts < 5) {
        glutPostRedisplay();
        return false;
    }
    return true;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: window_test OUTDIR   (run it through window_test.sh)\n");
        return 2;
    }
    out_dir = argv[1];
    // 320 x 240, not square, so a swapped width and height shows. The top
    // 240 rows of a 320 x 320 ray-traced scene, rendered on the CPU.
    const int W = 320, H = 240;
    ZImage scene = zbuffer_render(random_scene(5, 20), W);
    CPUBitmap bitmap(W, H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 4; c++)
                bitmap.get_ptr()[4 * (y * W + x) + c] = scene.rgba[4 * ((y + W - H) * W + x) + c];
    // Marks: pure red in the bottom-left corner (row 0), pure green in the
    // top-right one, so a flip either way is caught even in a dark scene.
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 10; x++) {
            unsigned char* bl = bitmap.get_ptr() + 4 * (y * W + x);
            bl[0] = 255, bl[1] = 0, bl[2] = 0;
            unsigned char* tr = bitmap.get_ptr() + 4 * ((H - 1 - y) * W + (W - 1 - x));
            tr[0] = 0, tr[1] = 255, tr[2] = 0;
        }
    bitmap.default_path = out_dir + "/no_window.ppm";  // written only if no window opens
    bitmap.on_drawn = screenshot_and_compare;
    bitmap.window_x = bitmap.window_y = 0;  // no window manager here to place it
    bitmap.display_and_exit();

    if (attempts == 0) {
        std::fprintf(stderr, "window_test: FAIL: the window was never drawn\n");
        return 1;
    }
    if (mismatches != 0) {
        std::fprintf(stderr, "window_test: FAIL: %lld of %d pixels differ after %d attempts\n",
                     mismatches, W * H, attempts);
        return 1;
    }
    std::printf("window_test: PASS: the %d x %d window shows the bitmap exactly (attempt %d)\n", W,
                H, attempts);
    return 0;
}
