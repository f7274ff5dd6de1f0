#!/usr/bin/env python3
"""The progress tables at the top of chapters 3, 4 and 6 say what the run says (no GPU needed):

    python3 tests/docs/test_ladders.py

The tables are written by docs/gen/ladders.py (`g.ladder(NAME)`) from docs/gen/ladders.json,
the results run (docs/runs/h200/results.json) and side/wgmma-steps.log. This test reads the
tables as committed in the handouts and checks them against the run with its own lookups, its
own reader of the log and its own arithmetic (it imports the generator only to run it):

1. each ladder is in its handout once; its rows are the ladder's steps in order, each with its
   phrase; the steps follow programs.json's order (programs, then a program's records in the
   results run, or MM-GPU-WGMMA's step numbers);
2. every number is recomputed here: a rate as bytes over the median time, a share of cuBLAS as
   cuBLAS's time over the kernel's (same flops), a share of the copy against the run's measured
   ceiling, the ideal pipelined time from the three stages timed alone (timeline.h's formula),
   each matched at the printed rounding and the inputs' own;
3. a doctored run fails 2: the copy ceiling, one kernel's time, cuBLAS's time at one precision,
   one stage of streams, the ideal time the program recorded, one line of the log; so does a
   share edited by hand in a handout. Run on a doctored run, the generator writes a table that
   differs from the handout and that 2 accepts against that run;
4. a ladder out of programs.json's order stops the generator and fails 1.
Copies go to a temporary folder; the tree is never changed.
"""
import copy
import json
import os
import re
import shutil
import sys
import tempfile
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "docs", "runs", "h200")
LADDERS = os.path.join(ROOT, "docs", "gen", "ladders.json")
MISSING = "—"
failures = []


def load(path):
    with open(path) as f:
        return json.load(f)


# ---- the tables as the handouts have them ----------------------------------------------------
def blocks(text):
    """{name: [lines]} of every g.ladder(NAME) block of a handout's text."""
    out = {}
    for m in re.finditer(r'\[\[\[cog g\.ladder\("([^"]+)"\) \]\]\] -->\n(.*?)<!-- \[\[\[end\]\]\]',
                         text, re.S):
        out.setdefault(m.group(1), []).append(m.group(2).rstrip("\n").split("\n"))
    return out


def table(lines):
    """(header cells, row cells, the lines after the table)."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in lines if line.startswith("|")]
    return rows[0], rows[2:], [line for line in lines if line and not line.startswith("|")]


# ---- the run, read here on its own ---------------------------------------------------------
def records(data):
    return [r for e in data["runs"] for r in e["records"]]


def find(data, program, variant=None, width=None, precision=None):
    for r in records(data):
        size = r.get("size") or {}
        if r["program"] == program and (variant is None or r.get("variant") == variant) and \
                (width is None or size.get("width") == width) and \
                (precision is None or size.get("precision", "fp32") == precision):
            return r
    return None


def wgmma_log(path):
    """{(precision, width): {"cublas": ms, 1: ms, ...}} from the log's printed lines."""
    runs, key = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("$ MM-GPU-WGMMA"):
                words = line.split()
                p = words[words.index("--precision") + 1] if "--precision" in words else "bf16"
                w = int(words[words.index("--width") + 1]) if "--width" in words else 1024
                key = (p, w)
                runs[key] = {}
                continue
            m = re.match(r"\s+(cuBLAS \(yardstick\)|step (\d), kernel only)\s+median\s+(\S+) ms",
                         line)
            if m and key:
                runs[key]["cublas" if m.group(2) is None else int(m.group(2))] = m.group(3)
    return runs


def value(x):
    """(number, its uncertainty): a printed number's half-unit of rounding; a recorded one's
    (results.json keeps about 6 significant digits)."""
    if isinstance(x, str):
        d = len(x.split(".")[1]) if "." in x else 0
        return float(x), 0.5 * 10 ** -d
    return float(x), 1e-5 * abs(float(x))


def ratio(a, b, scale=100.0):
    """a / b · scale with its uncertainty from the inputs' rounding."""
    (x, dx), (y, dy) = value(a), value(b)
    r = x / y * scale
    return r, r * (dx / x + dy / y)


def expect_cell(where, printed, expected):
    """printed: the table's cell; expected: None (missing), or (number, uncertainty)."""
    if expected is None:
        if printed != MISSING:
            failures.append(f"{where}: {printed!r}, but the run has no such measurement")
        return
    if printed == MISSING:
        failures.append(f"{where}: missing, but the run has {expected[0]:.6g}")
        return
    shown, half = value(printed)
    if abs(shown - expected[0]) > half + expected[1] + 1e-9:
        failures.append(f"{where}: printed {printed}, the run gives {expected[0]:.6g}")


def stage_ideal(data):
    """streams' ideal pipelined time from its three stages timed alone (timeline.h)."""
    st = {v: find(data, "streams", "stage-" + v) for v in ("h2d", "kernel", "d2h")}
    if None in st.values():
        return None
    t = {v: r["time_ms"]["median"] for v, r in st.items()}
    mode = next(r for r in records(data) if r["program"] == "streams" and "copy_engines" in r)
    engines, chunks = mode["copy_engines"], st["h2d"]["size"]["chunks"]
    total = sum(t.values())
    if engines <= 0:
        return total
    neck = max(t["h2d"] + t["d2h"], t["kernel"]) if engines == 1 else max(t.values())
    return neck + (total - neck) / chunks


def label(step):
    if "step" in step:
        return f"{step['program']} step {step['step']}"
    return step["program"]


def check_order(name, steps, data, manifest):
    """1: the steps follow programs.json's order, then the records' (or the step numbers)."""
    programs = [p["name"] for p in manifest["programs"]]
    places = []
    for s in steps:
        if s["program"] not in programs:
            failures.append(f"{name}: {s['program']} is not in programs.json")
            return
        inner = s.get("step")
        if inner is None:
            inner = next((i for i, r in enumerate(records(data)) if r["program"] == s["program"]
                          and r.get("variant") == s.get("variant", r.get("variant"))), -1)
        places.append((programs.index(s["program"]), inner))
    for a, b, s in zip(places, places[1:], steps[1:]):
        if b < a:
            failures.append(f"{name}: {label(s)} comes before the step above it in programs.json "
                            "(or in its program's records)")


def verify(name, spec, lines, data, log):
    """2: every cell of ladder NAME's table (lines) against the run (data, the parsed log)."""
    head, rows, notes = table(lines)
    steps = spec["steps"]
    extra = 0 if spec["kind"] in ("bandwidth", "matmul") else 1
    if len(rows) != len(steps) + extra:
        failures.append(f"{name}: {len(rows)} rows for {len(steps)} steps")
        return
    for i, (row, s) in enumerate(zip(rows, steps)):
        if not row[0].startswith(label(s)) or (s.get("variant") and spec["kind"] != "matmul"
                                               and f"[{s['variant']}]" not in row[0]):
            failures.append(f"{name} row {i + 1}: {row[0]!r} is not step {label(s)}")
        if row[1] != s["changed"]:
            failures.append(f"{name} row {i + 1}: its phrase is not the ladder's")
    where = lambda i, col: f"{name}, {rows[i][0]}, {head[col]}"  # noqa: E731
    if spec["kind"] == "bandwidth":
        dram = data["ceilings"]["dram"]
        m = re.search(r"\((\S+) GB/s\)", head[4])
        expect_cell(f"{name} header", m.group(1) if m else MISSING, value(dram))
        for i, s in enumerate(steps):
            r = find(data, s["program"], s["variant"])
            ms = r and r["time_ms"]["median"]
            rate = r and r["size"]["bytes_moved"] / (ms * 1e-3) / 1e9
            expect_cell(where(i, 2), rows[i][2], r and value(ms))
            expect_cell(where(i, 3), rows[i][3], r and (rate, 2e-5 * rate))
            expect_cell(where(i, 4), rows[i][4], r and ratio(rate, dram))
    elif spec["kind"] == "matmul":
        lib = spec["yardstick"]
        for i, s in enumerate(steps):
            for j, w in enumerate(spec["widths"]):
                r = find(data, s["program"], s.get("variant"), w, spec["precision"])
                y = find(data, lib["program"], lib.get("variant"), w, spec["precision"])
                if r and y and r["size"]["flops"] != y["size"]["flops"]:
                    failures.append(f"{name}: {s['program']} and the yardstick at W = {w} count "
                                    "different flops")
                expect_cell(where(i, 2 + 2 * j), rows[i][2 + 2 * j],
                            r and value(r["time_ms"]["median"]))
                expect_cell(where(i, 3 + 2 * j), rows[i][3 + 2 * j], r and y and ratio(
                    y["time_ms"]["median"], r["time_ms"]["median"]))
    elif spec["kind"] == "tensor":
        w, lib = spec["width"], spec["yardstick"]
        for j, p in enumerate(spec["precisions"]):
            y = find(data, lib["program"], None, w, p)
            run = log.get((p, w), {})
            for i, s in enumerate(steps):
                if "step" in s:
                    ms, base = run.get(s["step"]), run.get("cublas")
                    expect_cell(where(i, 2 + 2 * j), rows[i][2 + 2 * j], ms and value(ms))
                    expect_cell(where(i, 3 + 2 * j), rows[i][3 + 2 * j],
                                ms and base and ratio(base, ms))
                else:
                    r = find(data, s["program"], None, w, p)
                    expect_cell(where(i, 2 + 2 * j), rows[i][2 + 2 * j],
                                r and value(r["time_ms"]["median"]))
                    expect_cell(where(i, 3 + 2 * j), rows[i][3 + 2 * j], r and y and ratio(
                        y["time_ms"]["median"], r["time_ms"]["median"]))
            expect_cell(where(len(steps), 2 + 2 * j), rows[-1][2 + 2 * j],
                        y and value(y["time_ms"]["median"]))
            expect_cell(where(len(steps), 3 + 2 * j), rows[-1][3 + 2 * j], y and (100.0, 0.0))
            m = re.search(p.upper() + r" (\S+) ms", " ".join(notes))
            expect_cell(f"{name} note, the log's cuBLAS in {p.upper()}", m.group(1) if m else
                        MISSING, run.get("cublas") and value(run["cublas"]))
    elif spec["kind"] == "schedule":
        ideal = stage_ideal(data)
        for i, s in enumerate(steps):
            r = find(data, s["program"], s["variant"])
            if r and ideal and abs(r.get("ideal_ms", 0) / ideal - 1) > 1e-4:
                failures.append(f"{name}: {s['variant']} records an ideal time of "
                                f"{r.get('ideal_ms')} ms, its stages give {ideal:.6g} ms")
            expect_cell(where(i, 2), rows[i][2], r and value(r["time_ms"]["median"]))
            expect_cell(where(i, 3), rows[i][3], r and ideal and
                        (100 * ideal / r["time_ms"]["median"], 1e-3))
        expect_cell(where(len(steps), 2), rows[-1][2], ideal and (ideal, 1e-4 * ideal))


def verify_all(texts, results, ladders, manifest):
    """1 and 2 over every ladder: texts {handout: its text}, results a folder of the run."""
    data = load(os.path.join(results, "results.json"))
    log_path = os.path.join(results, "side", "wgmma-steps.log")
    log = wgmma_log(log_path) if os.path.exists(log_path) else {}
    for name, spec in ladders.items():
        found = blocks(texts[spec["handout"]]).get(name, [])
        if len(found) != 1:
            failures.append(f"{name}: {len(found)} blocks in {spec['handout']}, not 1")
            continue
        check_order(name, spec["steps"], data, manifest)
        verify(name, spec, found[0], data, log)


# ---- the generator, run here on another run ------------------------------------------------
COG_OUT = []
FAKE_COG = types.ModuleType("cog")  # what cogapp provides while it runs a generator
FAKE_COG.outl = lambda s="": COG_OUT.extend(str(s).split("\n"))

def generate(results, ladders_path=LADDERS):
    """{name: [lines]} that docs/gen/ladders.py writes from this results folder, or the
    SystemExit message it stopped with."""
    out = COG_OUT
    sys.modules.setdefault("cog", FAKE_COG)  # the generator's modules keep the first one
    if os.path.join(ROOT, "docs") not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, "docs"))
    from gen import ch04, core, ladders
    os.environ["DOCS_RESULTS"] = results
    for cached in (core.results, core.repeats, core.manifest, ch04.wgmma_runs, ladders.ladders):
        cached.cache_clear()
    ladders.LADDERS = ladders_path
    tables = {}
    try:
        for name in ladders.ladders():
            del out[:]
            ladders.ladder(name)
            tables[name] = list(out)
    except SystemExit as e:
        return str(e)
    finally:
        ladders.LADDERS = LADDERS
        ladders.ladders.cache_clear()
    return tables


def expect_failures(what, run):
    """Runs run(); passes when it added failures (which are then dropped)."""
    before = len(failures)
    run()
    caught = failures[before:]
    del failures[before:]
    if caught:
        print(f"ok: {what}: caught ({caught[0]})")
    else:
        failures.append(f"{what}: not caught")


def main():
    spec = load(LADDERS)["ladders"]
    manifest = load(os.path.join(ROOT, "programs.json"))
    texts = {}
    for s in spec.values():
        with open(os.path.join(ROOT, s["handout"])) as f:
            texts[s["handout"]] = f.read()
    verify_all(texts, RESULTS, spec, manifest)
    if failures:
        print("\n".join(failures))
        return 1
    print(f"ok: {len(spec)} ladders, every row in order and every number the run's")

    generated = generate(RESULTS)
    for name, s in spec.items():
        if generated.get(name) != blocks(texts[s["handout"]])[name][0]:
            failures.append(f"{name}: the generator writes another table than the handout's "
                            "(run scripts/docs.py update)")

    def doctor(tmp, change_json=None, change_log=None):
        results = os.path.join(tmp, "results")
        shutil.rmtree(results, ignore_errors=True)
        os.makedirs(os.path.join(results, "side"))
        data = load(os.path.join(RESULTS, "results.json"))
        if change_json:
            change_json(data)
        with open(os.path.join(results, "results.json"), "w") as f:
            json.dump(data, f)
        with open(os.path.join(RESULTS, "side", "wgmma-steps.log")) as f:
            log = f.read()
        with open(os.path.join(results, "side", "wgmma-steps.log"), "w") as f:
            f.write(change_log(log) if change_log else log)
        return results

    def scale(program, variant=None, width=None, precision=None, factor=1.25):
        def change(data):
            r = find(data, program, variant, width, precision)
            r["time_ms"]["median"] *= factor
            for k in ("gbps", "gflops"):
                if r.get(k):
                    r[k] /= factor
        return change

    def set_ceiling(data):
        data["ceilings"]["dram"] *= 1.1

    def set_ideal(data):
        for r in records(data):
            if r["program"] == "streams" and "ideal_ms" in r:
                r["ideal_ms"] *= 0.9

    def log_step2(text):
        return re.sub(r"(step 2, kernel only\s+median\s+)0\.2212 ms", r"\g<1>0.2654 ms", text,
                      count=1).replace("621333 GFLOP/s", "517861 GFLOP/s", 1)

    cases = [  # (what, change of results.json, change of the log, the generator reads it)
        ("the device-to-device copy's ceiling ×1.1", set_ceiling, None, True),
        ("Dot-SM --blocks uncapped's time ×1.25", scale("Dot-SM", "uncapped"), None, True),
        ("MM-GPU-RT's time at W = 4096 ×1.25", scale("MM-GPU-RT", None, 4096), None, True),
        ("cuBLAS's BF16 time ×1.25", scale("MM-cuBLAS", None, 4096, "bf16"), None, True),
        ("streams' kernel stage ×1.25", scale("streams", "stage-kernel"), None, False),
        ("the ideal time streams recorded ×0.9", set_ideal, None, False),
        ("step 2's BF16 line of side/wgmma-steps.log", None, log_step2, True),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for what, change_json, change_log, read in cases:
            if change_log and change_log(open(os.path.join(RESULTS, "side",
                                                           "wgmma-steps.log")).read()) == \
                    open(os.path.join(RESULTS, "side", "wgmma-steps.log")).read():
                failures.append(f"{what}: the test's edit no longer applies to the log")
                continue
            results = doctor(tmp, change_json, change_log)
            expect_failures(f"doctored run ({what})",
                            lambda: verify_all(texts, results, spec, manifest))
            if not read:
                continue
            tables = generate(results)
            doctored = dict(texts)
            for name, s in spec.items():
                doctored[s["handout"]] = doctored[s["handout"]].replace(
                    "\n".join(blocks(texts[s["handout"]])[name][0]), "\n".join(tables[name]))
            if doctored == texts:
                failures.append(f"{what}: the generator wrote the same tables")
                continue
            before = len(failures)
            verify_all(doctored, results, spec, manifest)
            if len(failures) == before:
                print(f"ok: {what}: the generator's new tables agree with the doctored run")

        # a share typed by hand into a handout
        hand = dict(texts)
        path = spec["ch04"]["handout"]
        lines = blocks(texts[path])["ch04"][0]
        row = next(line for line in lines if line.startswith("| MM-GPU-RT"))
        cells = row.split(" | ")
        cells[3] = f"{float(cells[3]) + 0.3:.1f}"
        hand[path] = texts[path].replace(row, " | ".join(cells))
        expect_failures("a share of cuBLAS edited by hand in docs/ch04_matmul.md",
                        lambda: verify_all(hand, RESULTS, spec, manifest))

        # 4. out of programs.json's order
        for what, name, i in (("Dot-SM-Warp before Dot-SM --blocks uncapped", "ch03", 2),
                              ("MM-GPU-WGMMA's step 3 before step 2", "ch04-tc", 2)):
            swapped = copy.deepcopy(load(LADDERS))
            steps = swapped["ladders"][name]["steps"]
            steps[i], steps[i + 1] = steps[i + 1], steps[i]
            path = os.path.join(tmp, "ladders.json")
            with open(path, "w") as f:
                json.dump(swapped, f)
            said = generate(RESULTS, path)
            if isinstance(said, str) and "order" in said:
                print(f"ok: {what}: the generator stops ({said})")
            else:
                failures.append(f"{what}: the generator wrote the tables")
            expect_failures(f"{what}: the order check",
                            lambda: check_order(name, steps, load(os.path.join(
                                RESULTS, "results.json")), manifest))
    if failures:
        print("\n".join(failures))
        return 1
    print("test_ladders: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
