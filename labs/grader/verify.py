"""Reads the grading driver's output files and compares the student's with the reference's,
in the grader's own process (the driver's format: labs/drivers/driver.h)."""
import array
import math
import re

from .fence import safe_read

SIZES = {"i64": ("q", 8), "u32": ("I", 4), "f32": ("f", 4), "u8": ("B", 1)}
MAX_FILE = 512 << 20


class BadOutput(Exception):
    pass


def read_records(path, cap=MAX_FILE):
    """({name: (type, array)}, {name: ms}); BadOutput when the file is not a whole driver file
    of at most cap bytes."""
    data, why = safe_read(path, cap + 1)  # fenced code wrote it: no link, no FIFO, capped
    if data is None:
        raise BadOutput("the driver wrote no output file" if why == "missing" else
                        f"the driver's output is not a regular file ({why})")
    if len(data) > cap:
        raise BadOutput("the driver's output is not a regular file of a sane size")
    recs, times, i, ended = {}, {}, 0, False
    while i < len(data):
        j = data.find(b"\n", i)
        if j < 0:
            raise BadOutput("the output file is cut short")
        head = data[i:j].decode("ascii", "replace").split()
        i = j + 1
        if head == ["end"]:
            ended = True
            break
        if len(head) == 3 and head[0] == "time":
            times[head[1]] = float(head[2])
        elif len(head) == 4 and head[0] == "rec" and head[2] in SIZES:
            code, size = SIZES[head[2]]
            count = int(head[3])
            if i + count * size > len(data):
                raise BadOutput("the output file is cut short")
            a = array.array(code)
            a.frombytes(data[i:i + count * size])
            recs[head[1]] = (head[2], a)
            i += count * size
        else:
            raise BadOutput("the output file is not the driver's")
    if not ended:
        raise BadOutput("the driver stopped before it finished (no 'end')")
    return recs, times


def compare(name, ref, got, tol):
    """None when `got` matches `ref`, else what differs. Integers and bytes: exactly (bytes
    within tol['u8'] if given). Floats: the poison (NaN) exactly where the reference has it,
    and elsewhere a relative error norm ||got - ref|| / ||ref|| of at most tol['f32']."""
    rtype, r = ref
    gtype, g = got
    if name.endswith("inputs-written") and r.tobytes() != g.tobytes():
        return (f"{name}: your code wrote into an input it should only read ({g[0] if len(g) else '?'} "
                "input buffer(s) differ from the driver's copy after the launch)")
    if rtype != gtype or len(r) != len(g):
        return f"{name}: {len(g)} {gtype} values where {len(r)} {rtype} were expected"
    if r.tobytes() == g.tobytes():
        return None  # the same bits (NaN poison included)
    if rtype == "f32":
        bad_nan = [k for k in range(len(r)) if math.isnan(r[k]) != math.isnan(g[k])]
        if bad_nan:
            k = bad_nan[0]
            what = ("an element past the end was written" if math.isnan(r[k]) else
                    "an element was never written (it still holds the poison)")
            return f"{name}: {what} (index {k}; {len(bad_nan)} such)"
        num = den = 0.0
        worst = (0.0, 0)
        for k in range(len(r)):
            if math.isnan(r[k]):
                continue
            if math.isinf(g[k]) or math.isinf(r[k]):
                if g[k] != r[k]:
                    return f"{name}: element {k} is {g[k]}, expected {r[k]}"
                continue
            d = g[k] - r[k]
            num += d * d
            den += r[k] * r[k]
            if abs(d) > worst[0]:
                worst = (abs(d), k)
        err = math.sqrt(num / den) if den > 0 else math.sqrt(num)
        if err > tol.get("f32", 1e-5):
            k = worst[1]
            return (f"{name}: relative error {err:.2e} (allowed {tol.get('f32', 1e-5):.0e}); "
                    f"element {k} is {g[k]:.7g}, expected {r[k]:.7g}")
        return None
    slack = tol.get("u8", 0) if rtype == "u8" else 0
    for k in range(len(r)):
        if abs(g[k] - r[k]) > slack:
            wrong = sum(1 for q in range(len(r)) if abs(g[q] - r[q]) > slack)
            return f"{name}: {wrong} of {len(r)} values wrong; first at index {k}: {g[k]}, expected {r[k]}"
    return None


MIN_TIMED_LAUNCHES = 1  # driver.h's: a timed run times at least these, however slow


def launch_of(name, variant):
    """The timed launch a record of a timed run belongs to (NAME.3, NAME.3.inputs-written and
    the like, after the placement pass's prefix: 3), or None."""
    m = re.fullmatch(r"(?:[^.:]*:)?" + re.escape(variant) + r"\.(\d+)(?:\..*)?", name)
    return int(m.group(1)) if m else None


def compare_files(ref_path, got_path, tol, launches=None):
    """(ok, why): every record of the reference present in the student's file and matching.
    launches: (variant, count) where the grader's own program timed the student's code and
    stopped after `count` timed launches (driver.h: timed_launches): the reference's records of
    later launches are not asked for."""
    ref, _ = read_records(ref_path)
    try:
        got, _ = read_records(got_path)
    except BadOutput as e:
        return False, str(e)
    if launches is not None:
        variant, count = launches
        if count < MIN_TIMED_LAUNCHES:  # driver.h never stops before them
            return False, f"only {count} timed launches of '{variant}' came back, not {MIN_TIMED_LAUNCHES}"
        ref = {n: r for n, r in ref.items() if launch_of(n, variant) is None or launch_of(n, variant) < count}
    for name, rec in ref.items():
        if name not in got:
            return False, f"{name}: no output (the driver stopped before this shape)"
        why = compare(name, rec, got[name], tol)
        if why:
            return False, why
    return True, f"{len(ref)} outputs match the reference"


# A schedule's plan (ch06: labs/drivers/streams.cu's plan run): 4 integers an operation, each
# in 0 .. its limit - 1 (the op: H2D, KERNEL, D2H; the chunk; the stream; synchronous: 0 or 1).
PLAN_FIELDS = ("op", "chunk", "stream", "synchronous")
MAX_PLAN_FILE = 1 << 20  # a plan run's whole output: a few hundred bytes for the drawn shapes


def read_plan(path, name, chunks, streams):
    """(operations, None) or (None, why): the plan that a plan run recorded as `name`, each
    operation (op, chunk, stream, synchronous). Fenced code wrote the file: it is read as every
    output is (no link, no FIFO, capped), and every value is checked here before the grader
    writes the plan for the reference's driver to carry out. At most 3 * chunks operations,
    each field within its range; whether they are the right ones, in an order that keeps the
    answer right, is the reference's own check when it carries them out (schedule.h)."""
    try:
        recs, _ = read_records(path, MAX_PLAN_FILE)
    except BadOutput as e:
        return None, str(e)
    if name not in recs:
        return None, f"the plan run recorded no '{name}'"
    kind, values = recs[name]
    if kind != "i64" or len(values) % len(PLAN_FIELDS):
        return None, (f"'{name}' is {len(values)} {kind} values, not {len(PLAN_FIELDS)} integers "
                      f"({', '.join(PLAN_FIELDS)}) an operation")
    count = len(values) // len(PLAN_FIELDS)
    if count > 3 * chunks:
        return None, f"{count} operations, more than the 3 x {chunks} of {chunks} chunks"
    limits = (3, chunks, streams, 2)
    ops = []
    for k in range(count):
        op = tuple(values[4 * k:4 * k + 4])
        for field, v, limit in zip(PLAN_FIELDS, op, limits):
            if not 0 <= v < limit:
                return None, f"operation {k}: {field} {v} is outside 0..{limit - 1}"
        ops.append(op)
    return ops, None
