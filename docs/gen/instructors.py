"""docs/grader.md's blocks: the labs' self-test tables (side/lab-selftest.log)."""
import functools
import os
import re

import cog  # provided by cogapp while it runs a generator

from .core import *  # noqa: F401,F403


# ---- the labs' self-test (docs/grader.md) ----------------------------------------------
def _lab_output(lines):
    """What `lab.py selftest` printed for its labs: {lab: {table, verdict}}, from each
    '### Lab chNN' table (its '|' rows) and the 'lab.py selftest: PASS|FAIL' line after it."""
    labs, lab = {}, None
    for line in lines:
        m = re.match(r"### Lab (\S+)", line)
        if m:
            lab = labs.setdefault(m.group(1), {"table": [], "verdict": None, "seconds": None})
        elif lab is not None and line.startswith("|"):
            lab["table"].append(line)
        elif lab is not None and re.match(r"lab\.py selftest: (\w+)", line):
            lab["verdict"] = line.split(": ", 1)[1].split()[0]
    return labs


@functools.lru_cache(maxsize=None)
def lab_selftest(name="side/lab-selftest.log"):
    """`ctest -L lab -V` output kept in the results run: {lab: (table lines, verdict, seconds)},
    each test's lines (ctest's 'N: ' prefix taken off) read as `lab.py selftest` printed them,
    and ctest's status and time."""
    path = side_file(name)
    if path is None:
        return {}
    lines = open(path, errors="replace").read().splitlines()
    streams = {}
    for line in lines:
        m = re.match(r"(\d+): (.*)$", line)
        if m:
            streams.setdefault(m.group(1), []).append(m.group(2))
    labs = {}
    for stream in streams.values():
        labs.update(_lab_output(stream))
    for line in lines:
        m = re.search(r"Test #(\d+): lab\.selftest\.(\S+) \.+\s+(\w+)\s+([\d.]+) sec", line)
        if m and m.group(2) in labs:
            labs[m.group(2)]["seconds"] = float(m.group(4))
            labs[m.group(2)]["ctest"] = m.group(3)
    return labs


@functools.lru_cache(maxsize=None)
def lab_selftest_alone(name):
    """A later `lab.py selftest --labs chNN` run kept on its own (its output as printed, no
    ctest prefix; its first line '# lab.py selftest --labs chNN at <commit> ...'): as
    lab_selftest, with the commit and lab.py's own 'graded in N s' time."""
    path = side_file(name)
    if path is None:
        return {}
    lines = open(path, errors="replace").read().splitlines()
    commit = re.search(r" at ([0-9a-f]{7,40})\b", lines[0]) if lines else None
    labs = _lab_output(lines)
    for lab in labs.values():
        lab["commit"] = commit.group(1) if commit else None
    for line in lines:
        m = re.match(r"(ch\d+): \d+ submissions graded in ([\d.]+) s", line)
        if m and m.group(1) in labs:
            labs[m.group(1)]["seconds"] = float(m.group(2))
    return labs


def lab_tables(name="side/lab-selftest.log", later=("side/lab-selftest-ch02-2471fdf.log",)):
    """One score table per lab, as `lab.py selftest` printed it in the kept ctest run; where a
    later run of one lab's self-test is kept (LATER: with the cheats added since), its table."""
    labs = lab_selftest(name)
    newer = {}
    for one in later:
        for lab, t in lab_selftest_alone(one).items():
            if t["table"]:
                newer[lab] = t
    if not labs and not newer:
        cog.outl(f"({name}: {NOT_RUN}; `ctest -L lab -V` makes it on a GPU.)")
        return
    for lab in sorted(set(labs) | set(newer)):
        if lab in newer:
            t = newer[lab]
            cog.outl(f"**Lab {lab}** (`lab.py selftest --labs {lab}` alone at {t['commit']}: "
                     f"{t['verdict'] or NOT_RUN}"
                     + (f", {t['seconds']:.0f} s" if t.get("seconds") else "") + ")")
        else:
            t = labs[lab]
            cog.outl(f"**Lab {lab}** (`lab.selftest.{lab}`: {t.get('ctest') or NOT_RUN}"
                     + (f", {t['seconds']:.0f} s" if t.get("seconds") else "") + ")")
        cog.outl("")
        for row in t["table"]:
            cog.outl(row)
        cog.outl("")


# ---- exercises that run (tests/exercises/, their record exercises.json) --------------------
def exercise(name, indent="   "):
    """The measured part of an exercise's answer: what ran on the GPU (the record
    exercises.json in the results folder, written by tests/exercises/exercise.py run) and each
    claim of tests/exercises/<name>.exercise as it came out. A claim that is false on the
    record, a record older than the exercise file, or a patch that no longer applies raises:
    the docs check fails (tests/exercises/README.md)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "exercises"))
    import exercise as ex  # the exercises' own reader and checker
    try:
        lines = ex.answer_lines(name, os.path.join(results_dir(), "side", "exercises.json"))
    except ex.mutant.MutantError as err:
        raise SystemExit(f"docs: exercise {name}: {err}")
    for line in lines:
        cog.outl(indent + line)


# ---- the trace exercises (traces/exercises/: each handout command, run on a GPU) -----------
def _trace_run(name):
    """A trace exercise's record: (the command, its exit, the lines it printed, the trace's rows
    or None), from traces/exercises/NAME.log (first line '# GPU', then '$ command', the
    output, 'exit N') and NAME.csv.gz."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tools", "trace"))
    import tracelib  # the traces' own reader
    folder = os.path.join(results_dir(), "traces", "exercises")
    path = os.path.join(folder, name + ".log")
    if not os.path.exists(path):
        raise SystemExit(f"docs: trace exercise {name}: no record {path}")
    lines = open(path).read().splitlines()
    gpu = lines[0].lstrip("# ")
    command = lines[1][2:]
    code = int(lines[-1].split()[1])
    csv_path = os.path.join(folder, name + ".csv.gz")
    rows = tracelib.load(csv_path) if os.path.exists(csv_path) else None
    return gpu, command, code, lines[2:-1], rows


def _summary_lines(output):
    """The trace summary the command printed (one line per array) and the program's verdict."""
    keep = [l.strip() for l in output if re.match(r"  \S+\s+(global|shared|constant|register) ", l)]
    verdict = [l for l in output if l.startswith("Verdict:")]
    return verdict + keep


def _fmt_list(values):
    return ", ".join(str(v) for v in values) if values else "none"


def _facts(name, rows, tl):
    """What the answer states about the picture, computed from the trace."""
    from collections import Counter
    if name in ("ch02.6", "ch02.6p"):
        writes = [r for r in rows if r["array"] == "c" and r["rw"] == "W"]
        n = 24
        count = Counter(r["index"] for r in writes)
        facts = [f"{len({(r['block_x'], r['thread_x']) for r in writes})} threads wrote c in "
                 f"{max(r['step'] for r in writes) + 1} pass(es)"]
        if name == "ch02.6":
            w = next(r for r in writes if r["index"] == 13)
            facts.append(f"c[13]: block {w['block_x']}, thread {w['thread_x']}, pass {w['step']}")
        else:
            facts.append("written twice: " + _fmt_list([f"c[{i}]" for i in range(n)
                                                        if count[i] > 1]))
            facts.append("never written: " + _fmt_list([f"c[{i}]" for i in range(n)
                                                        if count[i] == 0]))
        return facts
    if name in ("ch03.10i", "ch03.10s"):
        busy = tl.busy(rows, "cache")
        ways = tl.ways_per_step(rows, "cache")
        steps = [f"step {s}: {t} thread{'s' if t > 1 else ''} in {w} warp{'s' if w > 1 else ''}"
                 for s, (t, w) in busy.items() if s > 0]
        worst = max(w for s, w in ways.items() if s > 0)
        return ["; ".join(steps), f"bank passes per request: at most {worst}"]
    if name == "ch03.10h":
        last = max(r["block_x"] for r in rows)
        mine = [r for r in rows if r["block_x"] == last]
        loaded, zero, read = {}, [], {}
        for r in mine:  # each thread's own order: a read of in, then the slot it fills
            if r["array"] == "in":
                read[r["thread_x"]] = r["index"]
            elif r["array"] == "temp" and r["rw"] == "W":
                g = read.pop(r["thread_x"], None)
                (zero.append(r["index"]) if g is None else loaded.__setitem__(r["index"], g))
        runs = []
        for slot in sorted(loaded):
            if runs and slot == runs[-1][1] + 1 and loaded[slot] == loaded[runs[-1][1]] + 1:
                runs[-1][1] = slot
            else:
                runs.append([slot, slot])
        held = "; ".join(f"temp[{a}..{b}] hold in[{loaded[a]}..{loaded[b]}]" for a, b in runs)
        out = sorted(r["thread_x"] for r in mine if r["array"] == "out")
        return [f"block {last}: {held}; temp[{min(zero)}..{max(zero)}] hold 0 "
                f"({len(zero)} slots)", f"threads {out[0]}-{out[-1]} write an output"]
    if name in ("ch04.7", "ch04.7b"):
        facts = []
        for array in ("M", "N"):
            hist = tl.sectors_per_request(rows, array)
            facts.append(f"{array}: every full-warp request {_fmt_list(sorted(hist))} sector(s)"
                         f" ({sum(hist.values())} requests)")
        return facts
    if name == "ch04.7t":
        mine = [r for r in rows if (r["block_x"], r["block_y"]) == (0, 0)]
        facts = []
        for phase in sorted({r["step"] for r in mine if r["array"] in ("M", "N")}):
            part = []
            for array in ("M", "N"):
                idx = [r["index"] for r in mine if r["array"] == array and r["step"] == phase]
                ys, xs = sorted({i // 40 for i in idx}), sorted({i % 40 for i in idx})
                part.append(f"{array} rows {ys[0]}-{ys[-1]}, columns {xs[0]}-{xs[-1]}")
            facts.append(f"phase {phase}: " + "; ".join(part))
        return facts
    if name in ("ch05.7", "ch05.7b"):
        reqs = tl.requests([r for r in rows if r["block_x"] == 0 and r["block_y"] == 0
                            and r["warp"] == 0], "s")
        first = min(reqs, key=lambda k: k[3])
        lanes = sorted(reqs[first], key=lambda r: r["lane"])
        per = sorted({len({r["index"] for r in q}) for q in tl.requests(rows, "s").values()})
        return [f"warp 0 at step 0: lanes 0-7 read spheres "
                f"{_fmt_list([r['index'] for r in lanes[:8]])}",
                f"different addresses per warp request: {_fmt_list(per)}"]
    if name == "ch07.7":  # the ring: which GPU writes which elements, read from which GPU
        k, steps = tl.ring_steps(rows)
        facts = []
        for phase, step, reads, writes in steps:
            done = [f"GPU {g} writes data[{min(w)}-{max(w)}] ({len(w)} floats) read from GPU "
                    f"{_fmt_list(sorted({reads.get(g, {}).get(i) for i in w} - {None}))}"
                    for g, w in sorted(writes.items()) if w]
            idle = [g for g in range(k) if not writes.get(g)]
            facts.append(f"{tl.PHASES[phase]} step {step}: " + "; ".join(done)
                         + (f"; GPU {_fmt_list(idle)} writes nothing" if idle else ""))
        return facts + [tl.check_ring(rows, max(r["index"] for r in rows
                                                 if r["array"] == "data") + 1)[1]]
    if name == "ch04tc.7":
        places = {(row, chunk): (slot, place) for row, chunk, slot, place
                  in tl.swizzle_places(rows, "A")}
        slot, place = places[(5, 3)]
        at_640 = next(c for (r, c), (s, p) in places.items() if (s, p) == (5, 0))
        return [f"chunk 3 of row 5 at bytes {128 * slot + 16 * place}-"
                f"{128 * slot + 16 * place + 15} (banks {4 * place}-{4 * place + 3})",
                f"bytes 640-655 hold chunk {at_640} of row 5",
                tl.check_swizzle(rows, "A")[1]]
    return []


def trace_exercise(*names, indent="   "):
    """Each command of a trace exercise as it ran (the record in traces/exercises/), what it
    printed (the verdict and the trace's summary), and the facts the answer states, computed
    from the trace it wrote."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tools", "trace"))
    import tracelib as tl
    handouts = {"ch02": "ch02_vector_add.md", "ch03": "ch03_dot_product.md",
                "ch04": "ch04_matmul.md", "ch04tc": "ch04_tensor_cores.md",
                "ch05": "ch05_raytrace.md", "ch07": "ch07_multi_gpu.md"}
    for name in names:
        gpu, command, code, output, rows = _trace_run(name)
        handout = os.path.join(ROOT, "docs", handouts[name.split(".")[0]])
        if command not in open(handout).read():  # the handout's command changed: run it again
            raise SystemExit(f"docs: trace exercise {name}: `{command}` (traces/exercises/"
                             f"{name}.log) is no longer in {handout}; run the new command on a "
                             "GPU and keep its output and trace there")
        cog.outl(f"{indent}- On an {gpu}, `{command}`: exit {code}.")
        # (MM-GPU-WGMMA: the trace's reads are the read-back of the slice, not the kernel's
        # own; the script now prints the swizzle check in their place, given below)
        for line in _summary_lines(output)[:1 if name.startswith("ch04tc") else None]:
            cog.outl(f"{indent}  `{line}`")
        if rows is not None:
            cog.outl(f"{indent}  From its trace: " + "; ".join(_facts(name, rows, tl)) + ".")
