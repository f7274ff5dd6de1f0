// A libFuzzer target for the scene-file parser (ch05_raytrace/scene.h).
//
// libFuzzer feeds it millions of byte strings; it parses each one and checks
// what must hold whatever the input: either a scene within every limit, or
// no spheres and one message "fuzz:LINE: ...". Any crash, sanitizer report
// or broken promise (abort) is a bug. Build and run it with
//   tests/ch05_raytrace/fuzz_scene_parser.sh [SECONDS]
// Built without libFuzzer (-DSCENE_FUZZ_REPLAY), it is an ordinary program
// that replays the files named on its command line: the corpus test in ctest.
#define __device__  // scene.h's Sphere::hit is device code; unused here
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "../../ch05_raytrace/scene.h"

static void require(bool ok, const char* what, const std::string& error) {
    if (!ok) {
        std::fprintf(stderr, "scene parser broke a promise: %s (error text: '%s')\n", what,
                     error.c_str());
        std::abort();
    }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<Sphere> spheres;
    std::string error;
    bool ok = parse_scene(text, "fuzz", &spheres, &error);
    if (ok) {
        require(error.empty(), "success leaves the error empty", error);
        require(spheres.size() <= (size_t)MAX_SPHERES, "at most MAX_SPHERES", error);
        for (const Sphere& s : spheres) {
            for (float v : {s.x, s.y, s.z})
                require(std::isfinite(v) && std::fabs(v) <= SCENE_LIMIT, "coordinates in range",
                        error);
            require(std::isfinite(s.radius) && s.radius >= 0.001f && s.radius <= SCENE_LIMIT,
                    "radius in range", error);
            for (float c : {s.r, s.g, s.b}) require(c >= 0 && c <= 1, "colour in range", error);
        }
    } else {
        require(spheres.empty(), "failure leaves no spheres", error);
        // "fuzz:" then a line number that exists, then ": " and a message.
        require(error.compare(0, 5, "fuzz:") == 0, "message starts with the name", error);
        size_t colon = error.find(':', 5);
        require(colon != std::string::npos && colon > 5, "message has a line number", error);
        long line = std::strtol(error.c_str() + 5, nullptr, 10);
        long lines = 1;
        for (char c : text) lines += c == '\n';
        require(line >= 1 && line <= lines, "line number within the input", error);
        require(error.size() > colon + 2 && error[colon + 1] == ' ', "a message follows", error);
        // Words are quoted by their first 20 characters: however long the
        // input, the message stays one short line.
        require(error.size() <= 160, "the message is short", error.substr(0, 200));
    }
    return 0;
}

#ifdef SCENE_FUZZ_REPLAY
int main(int argc, char** argv) {
    int replayed = 0;
    for (int i = 1; i < argc; i++) {
        FILE* f = std::fopen(argv[i], "rb");
        if (!f) {
            std::fprintf(stderr, "cannot open %s\n", argv[i]);
            return 1;
        }
        std::string bytes;
        char chunk[4096];
        size_t got;
        while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0) bytes.append(chunk, got);
        std::fclose(f);
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
        replayed++;
    }
    std::printf("replayed %d inputs: no crash, every promise kept\n", replayed);
    return 0;
}
#endif
