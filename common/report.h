// common/report.h -- how every program reports what it measured.
//
// A program prints a readable report and ends with one verdict line:
//   Verdict: PASS (GPU result matches the CPU reference: ...)
// With --json it also prints one JSON object per measurement, each on its own
// line starting with {"schema":1, so a script (scripts/tour.py) can pick them
// out of the output. Every record has the same core fields:
//   schema, program, variant, device, cc, size{...}, launch{...},
//   time_ms{median,min,max,repeats}, gbps, gflops, pct_peak, peak, verdict
// plus any extra fields the program adds. null means "does not apply".
//
// Two more checks than the answer's:
//  * Every rate is compared with the physical ceiling of what it uses
//    (DeviceInfo::peak: DRAM, FP32, the Tensor Cores, the host link). A rate
//    above it by more than CEILING_MARGIN is impossible: the timing or the count
//    of bytes or flops is wrong. It prints "impossible measurement: ..." and the
//    run fails (exit 1).
//  * A program that teaches an effect checks it, from ratios measured in the
//    same run (report.lesson): after the verdict, one line
//      Lesson: shown (...)                  the effect happened
//      Lesson: MISSED (...)                 it did not: exit 1, whatever the answer
//      Lesson: not shown on this GPU (...)  this GPU cannot show it (one copy
//                                           engine, ...): not a failure
//      Lesson: not checked (...)            this run is too small to show it
//      Lesson: not enforced (...)           CUDA_EXAMPLES_LESSONS=report: the run
//                                           shares the GPU with other tests
//    and the same in every JSON record's "lesson" field.
//    A lesson is a timing, so it means something only when the program has the
//    GPU to itself. ctest runs the lesson tests one at a time (RUN_SERIAL) and
//    sets CUDA_EXAMPLES_LESSONS=report for the runs that share the GPU: there a
//    missed lesson is printed as "not enforced" and does not fail the run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "args.h"
#include "device_info.h"
#include "timer.h"

class JsonRecord {
public:
    JsonRecord& add(const std::string& key, const std::string& value) {
        return raw(key, quote(value));
    }
    JsonRecord& add(const std::string& key, const char* value) { return raw(key, quote(value)); }
    JsonRecord& add(const std::string& key, long long value) {
        return raw(key, std::to_string(value));
    }
    JsonRecord& add(const std::string& key, int value) { return raw(key, std::to_string(value)); }
    JsonRecord& add(const std::string& key, bool value) {
        return raw(key, value ? "true" : "false");
    }
    JsonRecord& add(const std::string& key, double value) {
        if (!std::isfinite(value)) return raw(key, "null");
        char text[64];
        std::snprintf(text, sizeof text, "%.6g", value);
        return raw(key, text);
    }
    JsonRecord& add(const std::string& key, const JsonRecord& object) {
        return raw(key, object.str());
    }
    JsonRecord& null(const std::string& key) { return raw(key, "null"); }
    JsonRecord& raw(const std::string& key, const std::string& json_value) {
        body_ += (body_.empty() ? "" : ",") + quote(key) + ":" + json_value;
        return *this;
    }
    std::string str() const { return "{" + body_ + "}"; }
    // Appends every field of `other` (a record's extra fields).
    JsonRecord& merge(const JsonRecord& other) {
        if (!other.body_.empty()) body_ += (body_.empty() ? "" : ",") + other.body_;
        return *this;
    }

    static std::string quote(const std::string& s) {
        std::string out = "\"";
        for (unsigned char c : s) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += (char)c;
            } else if (c == '\n')
                out += "\\n";
            else if (c < 0x20) {
                char u[8];
                std::snprintf(u, sizeof u, "\\u%04x", c);
                out += u;
            } else
                out += (char)c;
        }
        return out + "\"";
    }

private:
    std::string body_;
};

// The fields every measurement shares, measured against a limit the caller
// names: pct_peak = pct_of_limit and peak = limit (NAN / nullptr: null). Used
// directly where the limit is not the device's, e.g. chapter 6's PCIe link
// (which CUDA does not report) or a stream schedule's ideal overlap.
inline JsonRecord measurement_against(const char* program, const char* variant,
                                      const DeviceInfo& dev, const TimingStats& t, double gbps,
                                      double gflops, double pct_of_limit, const char* limit,
                                      const char* verdict) {
    JsonRecord time;
    time.add("median", t.median_ms)
        .add("min", t.min_ms)
        .add("max", t.max_ms)
        .add("repeats", t.repeats);
    JsonRecord r;
    r.add("schema", 1).add("program", program).add("variant", variant).add("device", dev.name);
    if (dev.cc_major == 0)
        r.null("cc");  // a CPU (Report::start_on_cpu)
    else
        r.add("cc", dev.compute_capability());
    r.add("time_ms", time).add("gbps", gbps).add("gflops", gflops);
    if (std::isfinite(pct_of_limit) && limit) {
        r.add("pct_peak", pct_of_limit).add("peak", limit);
    } else {
        r.null("pct_peak").null("peak");
    }
    return r.add("verdict", verdict);
}

// The usual case: a rate measured against the device's theoretical peak,
// "dram" (memory bandwidth) for GB/s or "fp32" (FP32 rate) for GFLOP/s.
// A rate that does not apply is passed as NAN.
inline JsonRecord measurement(const char* program, const char* variant, const DeviceInfo& dev,
                              const TimingStats& t, double gbps, double gflops,
                              const char* verdict) {
    if (std::isfinite(gbps))
        return measurement_against(program, variant, dev, t, gbps, gflops,
                                   100.0 * gbps / dev.peak_bandwidth_gbs(), "dram", verdict);
    if (std::isfinite(gflops))
        return measurement_against(program, variant, dev, t, gbps, gflops,
                                   100.0 * gflops / dev.peak_fp32_gflops(), "fp32", verdict);
    return measurement_against(program, variant, dev, t, gbps, gflops, NAN, nullptr, verdict);
}

inline void print_json(bool enabled, const JsonRecord& record) {
    if (enabled) std::printf("%s\n", record.str().c_str());
}

// One readable line: label, median (min..max) and, when given, a rate.
inline void print_timing(const char* label, const TimingStats& t, double gbps, double gflops,
                         double pct_of_limit, const char* limit) {
    std::printf("  %-34s median %9.4f ms  (min %.4f, max %.4f, %d run%s)", label, t.median_ms,
                t.min_ms, t.max_ms, t.repeats, t.repeats == 1 ? "" : "s");
    if (std::isfinite(gbps)) std::printf("  %8.1f GB/s", gbps);
    // Whole GFLOP/s for a GPU; a CPU loop's rate is below 1, so it keeps two decimals.
    if (std::isfinite(gflops))
        std::printf(gflops >= 10 ? "  %8.0f GFLOP/s" : "  %8.2f GFLOP/s", gflops);
    if (std::isfinite(pct_of_limit) && limit) std::printf(" = %5.1f%% of %s", pct_of_limit, limit);
    std::printf("\n");
}

// How far above its physical peak a measured rate may be before it is called
// impossible: 5%. A correct rate never is above it (the peaks are the hardware's
// maxima: the boost clock, every lane busy), so the margin only absorbs the
// events' resolution (about half a microsecond) on the shortest timed runs.
const double CEILING_MARGIN = 0.05;

// Data that fits in the L2 cache can be read again from there, faster than from
// DRAM, and CUDA does not report the L2's bandwidth: a "dram" rate whose bytes
// are below 4 times the L2 is compared with 4 times the DRAM peak instead (a
// stated multiple: Hopper's and Ampere's L2 serve 2 to 3 times their DRAM's rate).
const double L2_RESIDENT_FACTOR = 4.0;

// The last line of every report. Returns the program's exit code.
inline int verdict(bool pass, const std::string& detail) {
    std::printf("Verdict: %s (%s)\n", pass ? "PASS" : "FAIL", detail.c_str());
    std::fflush(stdout);
    return pass ? EXIT_CODE_OK : EXIT_CODE_FAILED;
}

// ---------------------------------------------------------------------------
// Report: everything a program's main() needs to report a run, in one object,
// so that main() keeps to its lesson (allocate, copy, launch, copy back, check).
//
//   Report report(args, 20);                  // reads --repeats and --json, refuses
//                                             // unknown options (exit 2)
//   report.start(3 * bytes, 3 * bytes);       // the GPU (exit 77 without one), do the
//                                             // buffers fit on it and on the host (exit 2)
//   report.size("n", n).launch(blocks, threads);
//   report.bandwidth("kernel", "kernel only", 3.0 * bytes, [&] { add<<<...>>>(...); });
//   return report.verdict(wrong == 0, "%lld wrong", wrong);  // JSON, then "Verdict: ..."
//
// Each measurement prints one readable line at once; with --json, one record
// per measurement (the fields at the top of this file) is printed before the
// verdict, when the verdict that every record carries is known.
class Report {
public:
    Report(Args& args, int default_repeats) : args_(args) {
        repeats_ = (int)args.integer("--repeats", default_repeats, 1, 100000);
        json_ = args.flag("--json");
        args.done();
    }

    // Finds the GPU (with none: the reason, and exit 77), checks that the run's
    // buffers fit in its free memory and in the host's (else exit 2), and
    // prints what the GPU is. Call it after every option has been read.
    const DeviceInfo& start(size_t device_bytes, size_t host_bytes) {
        check_fits_on_host(args_, host_bytes);  // first: it needs no GPU
        dev_ = require_device(args_.program());
        check_fits_on_device(args_, device_bytes);
        print_device(dev_);
        return dev_;
    }
    // A device described by hand, not looked for: how the tests check the
    // ceilings (DeviceInfo::peak) and the lesson lines without a GPU.
    void start_on_device(const DeviceInfo& described) {
        dev_ = described;
        described_ = true;  // no GPU to probe: a link peak it lacks stays unknown
    }
    // The same for a program that runs on the CPU only (MM-CPU): no GPU is
    // looked for; its records name the CPU and have no compute capability.
    void start_on_cpu(const char* cpu, size_t host_bytes) {
        check_fits_on_host(args_, host_bytes);
        dev_.name = cpu;
        std::printf("Device: %s\n", cpu);
    }

    // What this run is: sizes and launch shape, stored in every JSON record.
    // Printed once, before the first figure: "VA-GPU-11: n = 1048576; 1 x 1 threads".
    Report& size(const char* key, long long value) {
        size_.add(key, value);
        setup_ += (setup_.empty() ? "" : ", ") + std::string(key) + " = " + std::to_string(value);
        return *this;
    }
    Report& size(const char* key, const std::string& value) {
        size_.add(key, value);
        if (std::string(key) == "precision") precision_ = value;  // a flops rate's ceiling
        setup_ += (setup_.empty() ? "" : ", ") + std::string(key) + " = " + value;
        return *this;
    }
    Report& launch(long long blocks, long long threads) {
        launch_ = JsonRecord();
        launch_.add("blocks", blocks).add("threads", threads);
        launch_text_ =
            "; " + std::to_string(blocks) + " blocks x " + std::to_string(threads) + " threads";
        return *this;
    }

    int repeats() const { return repeats_; }
    const DeviceInfo& device() const { return dev_; }

    // Times `work` (`repeats` runs after a warm-up, CUDA events, common/timer.h)
    // and reports its median with min and max, as bytes moved per second
    // against the GPU's memory bandwidth...
    template <typename Work>
    TimingStats bandwidth(const char* variant, const char* label, double bytes_moved, Work work,
                          int warmups = 2) {
        return measure(variant, label, bytes_moved, NAN, work, warmups);
    }
    // ...or as floating-point operations per second against its FP32 peak.
    template <typename Work>
    TimingStats compute(const char* variant, const char* label, double flops, Work work,
                        int warmups = 2) {
        return measure(variant, label, NAN, flops, work, warmups);
    }

    // A measurement the program took itself, against a limit it names
    // ("pcie", "ideal-overlap"; NAN and nullptr when there is none).
    // `resource` names what the rate uses, for its ceiling (DeviceInfo::peak);
    // by default the limit, when that is one ("dram", "pcie"...); `units` is how
    // many of it the rate may use at once (K GPUs: K times one GPU's DRAM).
    void record(const char* variant, const char* label, const TimingStats& t, double gbps,
                double gflops, double pct_of_limit, const char* limit,
                const char* resource = nullptr, double units = 1) {
        print_setup();
        print_timing(label, t, gbps, gflops, pct_of_limit, limit);
        records_.push_back(
            {variant, t, gbps, gflops, pct_of_limit, limit ? limit : "", extra_, {}});
        extra_ = JsonRecord();
        // A flops rate that names neither a resource nor a limit is bounded by the peak of
        // the precision the run declared (size "precision": "tf32", "bf16", "fp32").
        if (!resource && !limit && std::isfinite(gflops) && !precision_.empty())
            resource = precision_.c_str();
        check_ceiling(label, std::isfinite(gbps) ? gbps : gflops, resource ? resource : limit,
                      units, std::isfinite(gbps) ? gbps * t.median_ms * 1e6 : NAN);
    }

    // A time below the least the work could take (a stream schedule's floor, from its
    // stages' own times) is as impossible as a rate above a peak: says so, and the verdict
    // fails. The same margin as a ceiling's (CEILING_MARGIN). Unlike a peak, the floor is a
    // measurement too: on a GPU shared with other tests (CUDA_EXAMPLES_LESSONS=report) a stage
    // timed while a neighbour ran is slower than it can be, and the floor with it (an H200's
    // planted-bugs pass: breadth-first 24.6 ms, its stages' ideal 32.9 ms). There it is
    // reported and does not fail, as a lesson; a run of its own enforces it.
    void time_floor(const char* label, double ms, double floor_ms) {
        if (!std::isfinite(floor_ms) || !(ms < floor_ms * (1 - CEILING_MARGIN))) return;
        char text[300];
        std::snprintf(text, sizeof text,
                      "%s: %.4g ms is below its floor %.4g ms by %.0f%% (more than %.0f%%): the "
                      "timing leaves work out",
                      label, ms, floor_ms, 100 * (1 - ms / floor_ms), 100 * CEILING_MARGIN);
        if (!lessons_enforced()) {
            std::printf(
                "floor not enforced (CUDA_EXAMPLES_LESSONS=report, the GPU is shared): %s\n", text);
            return;
        }
        std::printf("impossible measurement: %s\n", text);
        if (impossible_.empty()) impossible_ = std::string("impossible measurement: ") + text;
    }

    // The lesson: an effect the program teaches, as a ratio measured in this
    // run (a speed-up, a time over another) that must be at least `at_least`.
    // Call it once per ratio; the verdict prints the Lesson line. The threshold
    // is set where the program calls it, with the measurements it came from.
    void lesson(const std::string& what, double ratio, double at_least) {
        lessons_.push_back({what, ratio, at_least, ratio >= at_least});  // NaN: missed
    }
    // ...or a ratio that must stay at most `at_most` (an effect that must NOT happen).
    void lesson_at_most(const std::string& what, double ratio, double at_most) {
        lessons_.push_back({what, ratio, -at_most, ratio <= at_most});
    }
    // The GPU cannot show the effect (one copy engine, one GPU): says why, no failure.
    void lesson_not_shown(const std::string& why) {
        lesson_note_ = "not shown on this GPU: " + why;
    }
    // This run is too small (or not set up) to show it: says why, no failure.
    void lesson_not_checked(const std::string& why) { lesson_note_ = "not checked: " + why; }

    // A single figure ("end to end", "CPU"): printed, and added to the record
    // of the last measurement (or of the next, when there is none yet).
    void note(const char* label, const char* key, double ms) {
        print_setup();
        std::printf("  %-34s %9.3f ms\n", label, ms);
        extra(key, ms);
    }
    // Any other field for that record (JSON only).
    template <typename Value>
    void extra(const char* key, Value value) {
        (records_.empty() ? extra_ : records_.back().extra).add(key, value);
    }
    // A "ceiling" field names the resource that bounds the last record ("pcie": its
    // copies cross the host link): its rate is checked against that peak as well.
    void extra(const char* key, const char* value) {
        (records_.empty() ? extra_ : records_.back().extra).add(key, value);
        if (std::string(key) != "ceiling" || records_.empty()) return;
        const Measured& m = records_.back();
        bool bytes = std::isfinite(m.gbps);
        check_ceiling(m.variant.c_str(), bytes ? m.gbps : m.gflops, value, 1,
                      bytes ? m.gbps * m.t.median_ms * 1e6 : NAN);
    }
    // The same with a value already written as JSON (an array, say).
    void extra_json(const char* key, const std::string& json_value) {
        (records_.empty() ? extra_ : records_.back().extra).raw(key, json_value);
    }
    // A size of the last measurement alone (a sweep over sizes): it replaces
    // the run's size() in that record.
    void size_of_last(const char* key, long long value) {
        if (!records_.empty()) records_.back().size.add(key, value);
    }

    // Prints the JSON records (with --json), then the verdict line; returns
    // the exit code: 0 for PASS, 1 for FAIL. The detail is printf-style:
    //   return report.verdict(wrong == 0, "%lld of %lld wrong", wrong, n);
    int verdict(bool pass, const char* format, ...) __attribute__((format(printf, 3, 4))) {
        char detail[400];
        va_list values;
        va_start(values, format);
        std::vsnprintf(detail, sizeof detail, format, values);
        va_end(values);
        return verdict_text(pass, detail);
    }
    int verdict_text(bool pass, const std::string& detail) {
        bool lesson_missed = false;
        std::string lesson_line = lesson_summary(&lesson_missed);
        pass = pass && impossible_.empty();
        for (const Measured& m : records_) {
            JsonRecord r = measurement_against(
                args_.program(), m.variant.c_str(), dev_, m.t, m.gbps, m.gflops, m.pct,
                m.limit.empty() ? nullptr : m.limit.c_str(), pass ? "PASS" : "FAIL");
            r.add("size", m.size.str() == "{}" ? size_ : m.size);
            if (launch_.str() == "{}")
                r.null("launch");
            else
                r.add("launch", launch_);
            if (!lesson_line.empty()) r.raw("lesson", lesson_json(lesson_missed));
            if (clock_marks_on())
                r.add("clock_first_pair", m.t.first_pair).add("clock_device", m.t.clock_device);
            print_json(json_, r.merge(m.extra));
        }
        std::string why = impossible_.empty() ? detail : detail + "; but " + impossible_;
        int code = ::verdict(pass, why);
        if (!lesson_line.empty()) std::printf("Lesson: %s\n", lesson_line.c_str());
        std::fflush(stdout);
        return lesson_missed && code == EXIT_CODE_OK ? EXIT_CODE_FAILED : code;
    }

private:
    struct LessonCheck {
        std::string what;
        double ratio, threshold;  // threshold < 0: at most -threshold
        bool shown;
    };
    static std::string lesson_text(const LessonCheck& c) {
        char text[300];
        std::snprintf(text, sizeof text, "%s %.2f, %s %.2f", c.what.c_str(), c.ratio,
                      c.threshold < 0 ? "at most" : "at least", std::fabs(c.threshold));
        return text;
    }
    // The Lesson line's text ("" when the program checks none); *missed when a check failed.
    std::string lesson_summary(bool* missed) const {
        std::string shown, failed;
        for (const LessonCheck& c : lessons_)
            (c.shown ? shown : failed) +=
                (c.shown ? shown : failed).empty() ? lesson_text(c) : "; " + lesson_text(c);
        *missed = !failed.empty();
        if (*missed && !lessons_enforced()) {
            *missed = false;
            return "not enforced (CUDA_EXAMPLES_LESSONS=report, the GPU is shared: " + failed + ")";
        }
        if (*missed) return "MISSED (" + failed + (shown.empty() ? "" : "; shown: " + shown) + ")";
        if (!lesson_note_.empty()) {
            std::string note = lesson_note_.substr(0, lesson_note_.find(':'));
            std::string rest = lesson_note_.substr(lesson_note_.find(':') + 2);
            return note + " (" + rest + (shown.empty() ? "" : "; shown: " + shown) + ")";
        }
        return shown.empty() ? "" : "shown (" + shown + ")";
    }
    // Timings shared with other tests (CUDA_EXAMPLES_LESSONS=report) cannot fail a lesson.
    static bool lessons_enforced() {
        const char* mode = std::getenv("CUDA_EXAMPLES_LESSONS");
        return mode == nullptr || std::string(mode) != "report";
    }
    std::string lesson_json(bool missed) const {
        bool failed = false;
        for (const LessonCheck& c : lessons_) failed = failed || !c.shown;
        std::string status = missed   ? "MISSED"
                             : failed ? "not enforced"
                             : !lesson_note_.empty()
                                 ? lesson_note_.substr(0, lesson_note_.find(':'))
                                 : "shown";
        std::string checks = "[";
        for (const LessonCheck& c : lessons_) {
            JsonRecord one;
            one.add("what", c.what).add("ratio", c.ratio);
            one.add("threshold", std::fabs(c.threshold)).add("kind", c.threshold < 0 ? "<=" : ">=");
            checks += (checks.size() > 1 ? "," : "") + one.add("shown", c.shown).str();
        }
        JsonRecord r;
        r.add("status", status).raw("checks", checks + "]");
        if (!lesson_note_.empty()) r.add("note", lesson_note_);
        return r.str();
    }

    // A rate above the ceiling of what it uses is impossible: says so, and the
    // verdict fails. `bytes` (NAN for flops) tells a DRAM rate whose data may sit in L2.
    void check_ceiling(const char* label, double rate, const char* resource, double units,
                       double bytes) {
        if (!resource || !std::isfinite(rate) || dev_.cc_major == 0) return;
        std::string what = resource;
        double peak = dev_.peak(what) * units;
        if ((what == "pcie" || what == "pcie-duplex") && !std::isfinite(peak)) {
            // No link peak known (DeviceInfo::pcie_source says why): the suite's own
            // probe, the fastest pinned copy of 64 MiB either way, measured once here.
            // Nothing crosses the link faster than a pinned copy does (its DMA is the
            // link's best case), so a rate above it by more than the margin is wrong.
            double probed = described_ ? NAN : probe_link_gbs();
            if (std::isfinite(probed)) {
                peak = probed * (what == "pcie-duplex" ? 2 : 1) * units;
                what += " (probed: fastest pinned copy)";
            } else {
                peak = dev_.peak_bandwidth_gbs() * units;
                what = "dram (no link peak known)";
            }
        }
        if (what == "dram" && std::isfinite(bytes) && bytes < 4.0 * dev_.l2_bytes * units) {
            peak *= L2_RESIDENT_FACTOR;
            what = "4 x dram (the data fits in L2)";
        }
        if (!std::isfinite(peak) || rate <= peak * (1 + CEILING_MARGIN)) return;
        char text[400];
        std::snprintf(text, sizeof text,
                      "%s: %.4g %s is above the %s peak %.4g by %.0f%% (more than %.0f%%): the "
                      "timing or the count of bytes or flops is wrong",
                      label, rate, std::isfinite(bytes) ? "GB/s" : "GFLOP/s", what.c_str(), peak,
                      100 * (rate / peak - 1), 100 * CEILING_MARGIN);
        std::printf("impossible measurement: %s\n", text);
        if (impossible_.empty()) impossible_ = std::string("impossible measurement: ") + text;
    }

    // The host link's best rate per direction, measured: pinned copies of 64 MiB,
    // 3 each way after one warm-up, the fastest (GB/s). NAN when it cannot run.
    static double probe_link_gbs() {
        static double probed = -1;
        if (probed >= 0 || probed != probed) return probed;
        const size_t bytes = 64 << 20;
        void *host = nullptr, *device = nullptr;
        probed = NAN;
        if (cudaMallocHost(&host, bytes) != cudaSuccess ||
            cudaMalloc(&device, bytes) != cudaSuccess) {
            cudaGetLastError();
            if (host) cudaFreeHost(host);
            return probed;
        }
        double best_ms = INFINITY;
        GpuTimer timer;
        for (int way = 0; way < 2; way++)
            for (int i = 0; i < 4; i++) {
                timer.start();
                HANDLE_ERROR(way ? cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost)
                                 : cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice));
                double ms = timer.stop();
                if (i > 0) best_ms = std::min(best_ms, ms);
            }
        HANDLE_ERROR(cudaFree(device));
        HANDLE_ERROR(cudaFreeHost(host));
        probed = bytes / (best_ms * 1e6);
        return probed;
    }

    template <typename Work>
    TimingStats measure(const char* variant, const char* label, double bytes, double flops,
                        Work work, int warmups) {
        TimingStats t = time_gpu(work, repeats_, warmups);
        double gbps = bytes / (t.median_ms * 1e6), gflops = flops / (t.median_ms * 1e6);
        if (std::isfinite(gbps))
            record(variant, label, t, gbps, NAN, 100.0 * gbps / dev_.peak_bandwidth_gbs(), "dram");
        else
            record(variant, label, t, NAN, gflops, 100.0 * gflops / dev_.peak_fp32_gflops(),
                   "fp32");
        return t;
    }

    void print_setup() {
        if (setup_printed_ || (setup_.empty() && launch_text_.empty())) return;
        std::printf("%s: %s%s\n", args_.program(), setup_.c_str(), launch_text_.c_str());
        setup_printed_ = true;
    }

    struct Measured {
        std::string variant;
        TimingStats t;
        double gbps, gflops, pct;
        std::string limit;
        JsonRecord extra, size;
    };

    Args& args_;
    DeviceInfo dev_;
    int repeats_ = 1;
    bool json_ = false, described_ = false;
    JsonRecord size_, launch_, extra_;
    std::string setup_, launch_text_;
    bool setup_printed_ = false;
    std::vector<Measured> records_;
    std::vector<LessonCheck> lessons_;
    std::string lesson_note_, impossible_, precision_;
};
