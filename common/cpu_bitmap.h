// common/cpu_bitmap.h -- an RGBA image in host memory that can be shown or saved.
//
// The same interface as the book's CPUBitmap:
//   CPUBitmap bitmap(DIM, DIM);            // width x height, 4 bytes per pixel
//   unsigned char* p = bitmap.get_ptr();   // pixel (x, y) starts at p[4*(x + y*width)]
//   bitmap.image_size();                   // bytes: width * height * 4
//   bitmap.display_and_exit();
//
// display_and_exit() opens a freeglut window when the program was built with
// freeglut (CUDA_EXAMPLES_USE_GLUT) and a display is reachable; ESC or closing
// the window returns. Otherwise -- or whenever `output_path` is set, e.g. from
// a program's --output flag -- it writes the image to a file and prints the
// path: PNG or PPM, by the name's ending (a PNG is compressed when built with
// libpng, CUDA_EXAMPLES_USE_PNG, and stored uncompressed otherwise). With
// `window_too` (a program's --window) it writes the file AND opens the window,
// and fails (exit 1, with the reason) when no window can open.
// CUDA_EXAMPLES_WINDOW_SECONDS=N, for tests that watch the window unattended:
// it opens at the screen's corner (0, 0) and closes itself after N seconds.
// CPUBitmap::check_output_path(path, &why) tells beforehand whether it can.
//
// Row 0 is the BOTTOM row, as in OpenGL's glDrawPixels; files are written top
// row first, so a saved image looks exactly like the window.
#pragma once

#include <sys/stat.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef CUDA_EXAMPLES_USE_PNG
#include <png.h>
#endif
#ifdef CUDA_EXAMPLES_USE_GLUT
#include <GL/freeglut.h>
#include <X11/Xlib.h>
#undef None  // Xlib's macro clashes with names in other headers (GoogleTest's, for one)
#endif

struct CPUBitmap {
    unsigned char* pixels;
    int x, y;         // width and height in pixels
    void* dataBlock;  // handed back to bitmapExit
    void (*bitmapExit)(void*) = nullptr;
    std::string output_path;  // if set, always write this file
    bool window_too = false;  // open the window even when output_path is written
    // Called each time the image has been drawn in the window; returning true
    // closes the window. Tests use it to take a screenshot and close the
    // window without a keypress (tests/ch05_raytrace/window_test.cpp).
    bool (*on_drawn)(CPUBitmap*) = nullptr;
    // Where the window opens, in screen pixels; -1 lets the window manager
    // choose. (With no window manager, as under Xvfb, -1 is taken literally
    // and the window hangs one pixel off the screen's top-left corner.)
    int window_x = -1, window_y = -1;
#ifdef CUDA_EXAMPLES_USE_PNG
    std::string default_path = "image.png";
#else
    std::string default_path = "image.ppm";
#endif

    CPUBitmap(int width, int height, void* d = nullptr) : x(width), y(height), dataBlock(d) {
        pixels = new unsigned char[(size_t)width * height * 4]();
    }
    ~CPUBitmap() {
        delete[] pixels;
    }
    CPUBitmap(const CPUBitmap&) = delete;
    CPUBitmap& operator=(const CPUBitmap&) = delete;

    unsigned char* get_ptr() const {
        return pixels;
    }
    long image_size() const {
        return (long)x * y * 4;
    }

    void display_and_exit(void (*e)(void*) = nullptr) {
        bitmapExit = e;
        std::string why_no_window = window_unavailable_reason();
        if (window_too && !why_no_window.empty()) {
            std::fprintf(stderr, "error: cannot open the window (%s)\n", why_no_window.c_str());
            std::exit(1);
        }
        if (!output_path.empty() || !why_no_window.empty()) {
            std::string path = output_path.empty() ? default_path : output_path;
            if (!save(path)) {
                std::fprintf(stderr, "error: cannot write image to %s\n", path.c_str());
                std::exit(1);
            }
            if (output_path.empty()) std::printf("No window (%s): ", why_no_window.c_str());
            std::printf("image written to %s\n", path.c_str());
            std::fflush(stdout);
        }
#ifdef CUDA_EXAMPLES_USE_GLUT
        if (why_no_window.empty() && (output_path.empty() || window_too)) show_window();
#endif
        if (bitmapExit) bitmapExit(dataBlock);
    }

    // Can save() write `path`? A program asks before its GPU work (for its
    // --output), so that a typo costs nothing: the name must end in .ppm, or
    // in .png when built with libpng, and the file must be creatable. An
    // existing file is left as it is; one created to find out is removed.
    // False, with the reason in *why, when it cannot.
    static bool check_output_path(const std::string& path, std::string* why) {
        // The folder first: a name in a folder that is not there is wrong whatever its type.
        size_t slash = path.find_last_of('/');
        if (slash != std::string::npos && slash > 0) {
            std::string folder = path.substr(0, slash);
            struct stat dir;
            if (stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) {
                *why = "no folder " + folder + " to write it in";
                return false;
            }
        }
        if (!ends_with(path, ".png") && !ends_with(path, ".ppm")) {
            *why = "the file name must end in .png or .ppm";
            return false;
        }
        struct stat info;
        bool existed = stat(path.c_str(), &info) == 0;
        FILE* f = std::fopen(path.c_str(), "ab");  // creates it if missing, never truncates
        if (!f) {
            *why = std::string("cannot create the file: ") + std::strerror(errno);
            return false;
        }
        std::fclose(f);
        if (!existed) std::remove(path.c_str());
        return true;
    }

    // Writes .png or .ppm; false on any failure.
    bool save(const std::string& path) const {
        if (ends_with(path, ".png")) {
#ifdef CUDA_EXAMPLES_USE_PNG
            png_image image;
            std::memset(&image, 0, sizeof image);
            image.version = PNG_IMAGE_VERSION;
            image.width = x;
            image.height = y;
            image.format = PNG_FORMAT_RGBA;
            // A negative row stride tells libpng our rows run bottom to top.
            return png_image_write_to_file(&image, path.c_str(), 0, pixels, -x * 4, nullptr) != 0;
#else
            return save_png_uncompressed(path);
#endif
        }
        FILE* f = std::fopen(path.c_str(), "wb");
        if (!f) return false;
        std::fprintf(f, "P6\n%d %d\n255\n", x, y);
        std::vector<unsigned char> row((size_t)x * 3);
        for (int r = y - 1; r >= 0; --r) {  // top row first
            for (int c = 0; c < x; ++c)
                std::memcpy(&row[(size_t)c * 3], &pixels[((size_t)r * x + c) * 4], 3);
            std::fwrite(row.data(), 1, row.size(), f);
        }
        return std::fclose(f) == 0;
    }

    // A PNG without libpng: RGBA, 8 bits a channel, its rows (top first, each after a filter
    // byte of 0) kept in a zlib stream of "stored" deflate blocks, which any PNG reader opens.
    // Larger than libpng's compressed file, and as correct (tests/common: libpng reads it back).
    bool save_png_uncompressed(const std::string& path) const {
        std::vector<unsigned char> rows;
        rows.reserve((size_t)y * ((size_t)x * 4 + 1));
        for (int r = y - 1; r >= 0; --r) {
            rows.push_back(0);
            rows.insert(rows.end(), pixels + (size_t)r * x * 4, pixels + ((size_t)r + 1) * x * 4);
        }
        std::vector<unsigned char> zlib = {0x78, 0x01};  // deflate, 32 KB window, no dictionary
        for (size_t at = 0; at < rows.size();) {
            size_t len = std::min<size_t>(65535, rows.size() - at);
            zlib.push_back(at + len == rows.size() ? 1 : 0);  // the last block, stored
            unsigned char lengths[4] = {(unsigned char)len, (unsigned char)(len >> 8),
                                        (unsigned char)~len, (unsigned char)(~len >> 8)};
            zlib.insert(zlib.end(), lengths, lengths + 4);
            zlib.insert(zlib.end(), rows.begin() + at, rows.begin() + at + len);
            at += len;
        }
        unsigned a = 1, b = 0;  // Adler-32 of the rows
        for (unsigned char v : rows) {
            a = (a + v) % 65521;
            b = (b + a) % 65521;
        }
        put_u32(&zlib, (b << 16) | a);
        std::vector<unsigned char> header;
        put_u32(&header, (unsigned)x);
        put_u32(&header, (unsigned)y);
        const unsigned char rgba8[5] = {8, 6, 0, 0,
                                        0};  // 8 bits, RGBA, deflate, no filter, no interlace
        header.insert(header.end(), rgba8, rgba8 + 5);
        std::vector<unsigned char> file = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
        put_chunk(&file, "IHDR", header);
        put_chunk(&file, "IDAT", zlib);
        put_chunk(&file, "IEND", {});
        FILE* f = std::fopen(path.c_str(), "wb");
        if (!f) return false;
        bool written = std::fwrite(file.data(), 1, file.size(), f) == file.size();
        return std::fclose(f) == 0 && written;
    }

    // Reads a binary PPM (P6, maxval 255) of the same size; alpha becomes 255.
    bool load_ppm(const std::string& path) {
        FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) return false;
        int w = 0, h = 0, maxval = 0;
        bool ok = std::fscanf(f, "P6 %d %d %d", &w, &h, &maxval) == 3 && w == x && h == y &&
                  maxval == 255 && std::fgetc(f) != EOF;
        std::vector<unsigned char> row((size_t)x * 3);
        for (int r = y - 1; ok && r >= 0; --r) {
            ok = std::fread(row.data(), 1, row.size(), f) == row.size();
            for (int c = 0; ok && c < x; ++c) {
                std::memcpy(&pixels[((size_t)r * x + c) * 4], &row[(size_t)c * 3], 3);
                pixels[((size_t)r * x + c) * 4 + 3] = 255;
            }
        }
        std::fclose(f);
        return ok;
    }

private:
    static void put_u32(std::vector<unsigned char>* out, unsigned v) {  // big-endian, as PNG
        for (int shift = 24; shift >= 0; shift -= 8) out->push_back((unsigned char)(v >> shift));
    }
    // One PNG chunk: length, type, data, and the CRC-32 of type and data.
    static void put_chunk(std::vector<unsigned char>* out, const char* type,
                          const std::vector<unsigned char>& data) {
        put_u32(out, (unsigned)data.size());
        size_t start = out->size();
        out->insert(out->end(), type, type + 4);
        out->insert(out->end(), data.begin(), data.end());
        unsigned crc = 0xFFFFFFFFu;
        for (size_t i = start; i < out->size(); i++) {
            crc ^= (*out)[i];
            for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        }
        put_u32(out, crc ^ 0xFFFFFFFFu);
    }
    static bool ends_with(const std::string& s, const char* suffix) {
        size_t n = std::strlen(suffix);
        return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
    }

    // Empty when a window can be opened, else why not.
    static std::string window_unavailable_reason() {
#ifdef CUDA_EXAMPLES_USE_GLUT
        const char* display = std::getenv("DISPLAY");
        if (!display || !*display) return "DISPLAY is not set";
        Display* d = XOpenDisplay(nullptr);
        if (!d) return std::string("cannot open display ") + display;
        XCloseDisplay(d);
        return "";
#else
        return "built without freeglut";
#endif
    }

#ifdef CUDA_EXAMPLES_USE_GLUT
    static CPUBitmap** current() {
        static CPUBitmap* bitmap = nullptr;
        return &bitmap;
    }

    void show_window() {
        *current() = this;
        int argc = 1;
        char name[] = "CPUBitmap";
        char* argv[] = {name, nullptr};
        glutInit(&argc, argv);
        // Let ESC or the window's close button return from glutMainLoop.
        glutSetOption(GLUT_ACTION_ON_WINDOW_CLOSE, GLUT_ACTION_GLUTMAINLOOP_RETURNS);
        glutInitDisplayMode(GLUT_SINGLE | GLUT_RGBA);
        glutInitWindowSize(x, y);
        const char* seconds = std::getenv("CUDA_EXAMPLES_WINDOW_SECONDS");
        if (seconds && std::atoi(seconds) > 0) window_x = window_y = 0;
        glutInitWindowPosition(window_x, window_y);
        glutCreateWindow("bitmap");
        glutKeyboardFunc(on_key);
        glutDisplayFunc(on_draw);
        if (seconds && std::atoi(seconds) > 0)
            glutTimerFunc(1000 * std::atoi(seconds), on_timer, 0);
        glutMainLoop();
    }
    static void on_timer(int) {
        glutLeaveMainLoop();
    }
    static void on_key(unsigned char key, int, int) {
        if (key == 27) glutLeaveMainLoop();  // ESC
    }
    static void on_draw() {
        CPUBitmap* b = *current();
        glClearColor(0, 0, 0, 1);
        glClear(GL_COLOR_BUFFER_BIT);
        glDrawPixels(b->x, b->y, GL_RGBA, GL_UNSIGNED_BYTE, b->pixels);
        glFlush();
        if (b->on_drawn) {
            glFinish();  // the pixels are on the screen before the hook looks
            if (b->on_drawn(b)) glutLeaveMainLoop();
        }
    }
#endif
};
