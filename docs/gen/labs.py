"""The labs' handouts (labs/ch0N.md, which lab.py make puts into every student kit): what the
grader checks, generated from labs/labs.json (points, tolerances, the ranges the sanitizer's and
the speed gate's shapes are drawn from) and from the grading drivers (labs/drivers/: the cases
the tests run, the inputs they draw, what they record), so that the handouts cannot drift from
what the grader does."""
import json
import os
import re
import textwrap

import cog  # provided by cogapp while it runs a generator

from .core import ROOT

# The driver's random inputs (labs/drivers/driver.h, Rng), in words. A driver that draws its
# inputs another way fails the generation: say here what it draws.
INPUTS = [
    (r"rng\.eighth\(\)", "odd multiples of 1/8 from -7/8 to 7/8"),
    (r"rng\.unit\(\)", "random floats from -1 to 1"),
    (r"rng\.range\(-\(1LL << 40\), 1LL << 40\)", "random 64-bit integers from -2^40 to 2^40"),
    (r"\(word_t\)d\.rng\.next\(\)", "random words"),
    (r"s\.radius = \(float\)d\.rng\.range", "random scenes: each sphere's colour, radius and "
                                          "position drawn from the seed"),
]


def _folder():
    """labs/ (DOCS_LABS: another copy of it, for the test that plants a drift)."""
    return os.environ.get("DOCS_LABS", os.path.join(ROOT, "labs"))


def _labs():
    with open(os.path.join(_folder(), "labs.json")) as f:
        return json.load(f)


def _driver(task):
    path = os.path.join(_folder(), "drivers", task["file"])
    with open(path) as f:
        return path, f.read()


def driver_about(text):
    """The driver's own words on what it records: its first comment block after its last include
    (ray.cu's and streams.cu's include their program between definitions of their own)."""
    lines, out = text.split("\n"), []
    last = max((i for i, l in enumerate(lines) if l.startswith("#include")), default=len(lines))
    for line in lines[last + 1:]:
        s = line.strip()
        if s.startswith("//"):
            out.append(s[2:].strip())
        elif out or (s and not s.startswith("//")):
            m = re.search(r"//\s*(.*)$", line) if not out else None
            if m:
                out.append(m.group(1))
            break
    return " ".join(out)


def driver_cases(text):
    """[(case name, note)]: the fixed cases the driver's test run calls, in order, and its
    random case."""
    out = []
    for m in re.finditer(r'\b\w+_once\(d, "([^"]+)"(?: \+ g)?,[^\n]*?(?://\s*(.*))?$', text, re.M):
        if m.group(1) not in [c for c, _ in out]:
            out.append((m.group(1), (m.group(2) or "").strip()))
    return out


def driver_inputs(path, text):
    found = [words for pattern, words in INPUTS if re.search(pattern, text)]
    if not found:
        raise SystemExit(f"docs/gen/labs.py: {os.path.relpath(path, ROOT)} draws inputs that "
                         "INPUTS does not describe: say what it draws")
    return "; ".join(found)


def _points(n):
    return f"{n} point{'s' if n != 1 else ''}"


def _ranges(shapes):
    return ", ".join(f"{k} from {lo} to {hi}" for k, (lo, hi) in shapes.items())


def _compared(task, short=False):
    tol = task.get("tolerance", {})
    if "f32" in tol:
        return (f"each float output within a relative error norm of {tol['f32']:g} of the "
                "reference's" + ("" if short else " (a sum in another order rounds differently)"))
    if "u8" in tol:
        return f"each byte within {tol['u8']} of the reference's"
    return "every value equal to the reference's"


def _out(text, indent=""):
    """A paragraph or a list item, wrapped to 100 columns (the kit's README fits in 100)."""
    cog.outl(textwrap.fill(text, 100, subsequent_indent=indent, break_long_words=False,
                           break_on_hyphens=False))


def lab_grading(chapter):
    """The 'How it is graded' section of labs/<chapter>.md."""
    lab = next(l for l in _labs()["labs"] if l["chapter"] == chapter)
    cog.outl("## How it is graded\n")
    _out("The grader builds each task with the course's grading driver (`labs/drivers/` in the "
         "course repository): the driver owns `main`, calls your code on the cases below with "
         "inputs drawn from a seed picked when you are graded, and records your code's outputs; "
         "the grader compares them with the reference's. Nothing your program prints counts. The "
         "sanitizers and the speed gate count only once the outputs match.")
    cog.outl("")
    for task in lab["tasks"]:
        path, text = _driver(task)
        pts = task["points"]
        _out(f"**{task['id']}** ({_points(sum(pts.values()))}), graded by "
             f"`labs/drivers/{task['file']}`:")
        cog.outl("")
        cases = ", ".join(c + (f" ({n})" if n else "") for c, n in driver_cases(text))
        _out(f"- outputs ({_points(pts['tests'])}): {driver_about(text)} Cases: {cases}. "
             f"Inputs: {driver_inputs(path, text)}. Compared: {_compared(task)}.", "  ")
        san = task.get("sanitize", {})
        for tool in san.get("tools", []):
            _out(f"- {tool} ({_points(pts[tool])}): `compute-sanitizer --tool {tool}` on the "
                 f"same command as the outputs' run (the same cases, a seed of its own), its "
                 f"outputs compared too.", "  ")
        if "perf" in task and task["perf"].get("plan"):  # the schedule decides, course code times
            p = task["perf"]
            _out(f"- speed ({_points(pts['perf'])}): the {p['what']} must reach at least "
                 f"{100 * p['min_ratio']:.0f}% of the reference's, at one shape drawn at grade time, "
                 f"{_ranges(p['shapes'])}. Your schedule runs once at that shape, only to record its "
                 "order of operations; the reference's build of the driver carries out that order "
                 "(each operation checked by run_op, as in your runs) and the reference's own, in "
                 "turn, and times both with its CUDA events.", "  ")
        elif "perf" in task:
            p = task["perf"]
            _out(f"- speed ({_points(pts['perf'])}): the {p['what']} must reach at least "
                 f"{100 * p['min_ratio']:.0f}% of the reference's, "
                 + ("timed by the grader's own launcher (your kernel loaded from your build as a "
                    "module, CUDA events; yours and the reference's in turn)" if p.get("launcher")
                    else "timed in the same run (CUDA events, yours and the reference's in turn)")
                 + f", at one shape drawn at "
                 f"grade time, {_ranges(p['shapes'])}.", "  ")
        cog.outl("")


def lab_checks_table():
    """docs/instructors.md's table of what each task checks, from the same sources."""
    cog.outl("| task | region(s) | outputs compared: the driver's cases | sanitizers "
             "| speed gate | points |")
    cog.outl("|---|---|---|---|---|---|")
    for lab in _labs()["labs"]:
        for task in lab["tasks"]:
            _, text = _driver(task)
            pts = task["points"]
            cases = ", ".join(c for c, _ in driver_cases(text))
            san = task.get("sanitize", {})
            tools = (f"{', '.join(san['tools'])}: the tests' cases, a seed of their own"
                     if san.get("tools") else "—")
            gate = "—"
            if "perf" in task:
                p = task["perf"]
                gate = (f"≥ {100 * p['min_ratio']:.0f}% of the reference's {p['what']}, at "
                        f"{_ranges(p['shapes'])}")
            regions = ", ".join(f"`{r}`" for r in task["regions"])
            cog.outl(f"| {task['id']} | `{task['file']}` {regions} | {cases} ({_compared(task, short=True)}) "
                     f"| {tools} | {gate} | {' + '.join(str(v) for v in pts.values())} |")
