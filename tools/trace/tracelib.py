"""Traces of the real kernels: read them, count what they show, check the lessons they prove.

A trace is the CSV file that tools/trace/trace.cuh writes (gzip-compressed when committed): one
row per memory access of one launch, with the block, the thread (and its warp and lane), the
source line of the access, the step the trace patch gave it, the array, global or shared, read
or write, the element's index, its byte address and its size. Nothing here needs a GPU.

A warp's request: the accesses of one warp's lanes at the same line, step and array, and the
same occurrence (a thread's n-th access at that line and step: the n-th round of an inner loop).
Its sectors: the distinct 32-byte pieces of memory its addresses fall into (global memory moves
in 32-byte sectors). Its bank conflicts (shared memory): a shared word is 4 bytes in bank
(address / 4) % 32; lanes reading the same word share it, and the request takes as many passes
as the most distinct words that fall into one bank (1: no conflict).
"""
import csv
import gzip
import hashlib
import io
import zlib
from collections import defaultdict
from pathlib import Path

SECTOR = 32
BANKS = 32


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode()


def load(path):
    """The trace's rows as dicts with ints where the column is a number."""
    rows = []
    for r in csv.DictReader(io.StringIO(read_text(path))):
        for k in ("block_x", "block_y", "thread_x", "thread_y", "warp", "lane", "line", "step",
                  "index", "byte", "size"):
            r[k] = int(r[k])
        for k in ("device", "owner", "phase"):  # traces of several GPUs (trace_end_devices)
            if k in r:
                r[k] = int(r[k])
        rows.append(r)
    number_occurrences(rows)
    return rows


def number_occurrences(rows):
    """Adds 'round': the thread's n-th access at this line, step and array (rows are in each
    thread's own order)."""
    seen = defaultdict(int)
    for r in rows:
        key = (r["block_x"], r["block_y"], r["thread_x"], r["thread_y"], r["line"], r["step"],
               r["array"], r["rw"])
        r["round"] = seen[key]
        seen[key] += 1


def digest(path):
    """sha256 of the trace's text (gzip's own header left out: a recompressed trace is the same)."""
    return hashlib.sha256(read_text(path).encode()).hexdigest()


def block_of(r):
    return (r["block_x"], r["block_y"])


def requests(rows, array=None, space=None):
    """{(block, warp, line, step, round, array, rw): [rows]}: the warps' requests."""
    out = defaultdict(list)
    for r in rows:
        if (array is None or r["array"] == array) and (space is None or r["space"] == space):
            key = (block_of(r), r["warp"], r["line"], r["step"], r["round"], r["array"], r["rw"])
            out[key].append(r)
    return out


def sectors(request):
    """The 32-byte sectors a request's addresses fall into (an element may span two)."""
    s = set()
    for r in request:
        first, last = r["byte"] // SECTOR, (r["byte"] + r["size"] - 1) // SECTOR
        s.update(range(first, last + 1))
    return sorted(s)


def bank_ways(request):
    """The request's passes through shared memory: the most distinct 4-byte words in one bank."""
    words = defaultdict(set)
    for r in request:
        for w in range(r["byte"] // 4, (r["byte"] + r["size"] - 1) // 4 + 1):
            words[w % BANKS].add(w)
    return max((len(w) for w in words.values()), default=0)


# ---- the checks ------------------------------------------------------------------------------
# Each returns (passed, one line saying what it found).

def check_written_once(rows, array, count, sample=1):
    """Every element 0 .. count-1 of ARRAY written exactly once, and nothing outside (of a
    trace recorded with TRACE_SAMPLE=S: every S-th element)."""
    writes = defaultdict(int)
    for r in rows:
        if r["array"] == array and r["rw"] == "W":
            writes[r["index"]] += 1
    wanted = range(0, count, sample)
    never = [i for i in wanted if writes[i] == 0]
    twice = [i for i in wanted if writes[i] > 1]
    outside = [i for i in writes if not 0 <= i < count or i % sample]
    ok = not never and not twice and not outside
    every = f" (every {sample}th)" if sample > 1 else ""
    what = (f"{array}: {len(wanted) - len(never)} of {len(wanted)} elements{every} written, "
            f"{len(twice)} more than once, {len(outside)} outside")
    if never:
        what += f"; first never written: {never[0]}"
    if twice:
        what += f"; first written twice: {twice[0]}"
    return ok, what


def sectors_per_request(rows, array):
    """{sectors: number of full-warp requests} for ARRAY (requests of all 32 lanes only: a
    partial warp at a matrix's edge says nothing about the pattern)."""
    hist = defaultdict(int)
    for req in requests(rows, array).values():
        if len(req) == 32:
            hist[len(sectors(req))] += 1
    return dict(hist)


def check_sectors(rows, array, expected):
    """Every full-warp request of ARRAY falls into EXPECTED sectors."""
    hist = sectors_per_request(rows, array)
    ok = bool(hist) and set(hist) == {expected}
    found = ", ".join(f"{n} requests of {s} sectors" for s, n in sorted(hist.items())) or "none"
    return ok, f"{array}: {found} (expected: every one {expected})"


def ways_per_step(rows, array):
    """{step: the worst request's passes} over ARRAY's shared-memory requests."""
    worst = defaultdict(int)
    for (_, _, _, step, _, _, _), req in requests(rows, array, "shared").items():
        worst[step] = max(worst[step], bank_ways(req))
    return dict(sorted(worst.items()))


def check_no_bank_conflicts(rows, array):
    ways = ways_per_step(rows, array)
    ok = bool(ways) and all(w == 1 for w in ways.values())
    steps = ", ".join(f"step {s}: {w}-way" for s, w in ways.items())
    return ok, f"{array}: {steps}"


def busy(rows, array, rw="W"):
    """{step: (lanes, warps)} that access ARRAY at that step, over all blocks."""
    lanes, warps = defaultdict(set), defaultdict(set)
    for r in rows:
        if r["array"] == array and r["rw"] == rw:
            lanes[r["step"]].add((block_of(r), r["thread_x"], r["thread_y"]))
            warps[r["step"]].add((block_of(r), r["warp"]))
    return {s: (len(lanes[s]), len(warps[s])) for s in sorted(lanes)}


def check_packed_warps(rows, array):
    """At every step after the load (step 0) the busy threads fill as few warps as they can:
    ceil(busy threads / 32) per block (the sequential tree's lesson)."""
    by_block = defaultdict(lambda: defaultdict(set))
    for r in rows:
        if r["array"] == array and r["rw"] == "W" and r["step"] > 0:
            by_block[(block_of(r), r["step"])][r["warp"]].add(r["lane"])
    bad = []
    for (block, step), warps in sorted(by_block.items()):
        threads = sum(len(l) for l in warps.values())
        if len(warps) != -(-threads // 32):
            bad.append(f"step {step}: {threads} threads in {len(warps)} warps")
    ok = bool(by_block) and not bad
    return ok, f"{array}: " + ("busy threads packed into the fewest warps at every step"
                               if ok else "; ".join(bad[:3]))


def check_elements_per_request(rows, array, expected):
    """Every full-warp request of ARRAY reads EXPECTED different elements."""
    hist = defaultdict(int)
    for req in requests(rows, array).values():
        if len(req) == 32:
            hist[len({r["index"] for r in req})] += 1
    ok = bool(hist) and set(hist) == {expected}
    found = ", ".join(f"{n} requests of {k} elements" for k, n in sorted(hist.items())) or "none"
    return ok, f"{array}: {found} (expected: every one {expected})"


CHUNK = 16  # bytes: the unit the 128-byte swizzle moves


def swizzle_places(rows, array, row_bytes=128):
    """The slice ARRAY as the TMA unit laid it out (trace patch MM-GPU-WGMMA): [(row, chunk,
    slot, place)] for each recorded element: its row of the slice and 16-byte chunk in that row
    (from the index, row * K + k, K = ROW_BYTES / size), and where it lies: the row slot and the
    chunk slot of its byte counted from the slice's start (the lowest byte recorded)."""
    mine = [r for r in rows if r["array"] == array and r["index"] >= 0]
    if not mine:
        return []
    base = min(r["byte"] for r in rows if r["array"] == array)
    out = []
    for r in mine:
        row, k = divmod(r["index"], row_bytes // r["size"])
        offset = r["byte"] - base
        out.append((row, k * r["size"] // CHUNK, offset // row_bytes,
                    offset % row_bytes // CHUNK))
    return out


def check_swizzle(rows, array, row_bytes=128):
    """The documented 128-byte swizzle (CUTLASS's Swizzle<3,4,3>): row r of the slice lies in
    row slot r, and its 16-byte chunk c in chunk slot c XOR (r mod 8), so that each 8-row
    group's chunks fill every slot once and the same chunk of 8 rows falls into 8 different
    groups of 4 banks. And the slice starts on 1024 bytes (the swizzle reads the address)."""
    places = swizzle_places(rows, array, row_bytes)
    if not places:
        return False, f"{array}: no element recorded"
    base = min(r["byte"] for r in rows if r["array"] == array)
    wrong = [p for p in places if p[2] != p[0] or p[3] != p[1] ^ (p[0] % 8)]
    ok = not wrong and base % 1024 == 0
    what = (f"{array}: {len(places) - len(wrong)} of {len(places)} elements at chunk XOR "
            f"(row mod 8), the slice at shared byte {base} ({'' if base % 1024 == 0 else 'not '}"
            "a multiple of 1024)")
    if wrong:
        row, chunk, slot, place = wrong[0]
        what += (f"; first elsewhere: row {row} chunk {chunk} in row slot {slot} chunk slot "
                 f"{place}, not {chunk ^ (row % 8)}")
    return ok, what


def shuffle_rounds(rows, array):
    """{(block, warp): [(step, offset, {lane: the lane whose value it received})]} of the
    shuffles recorded as ARRAY (TRACE_LANE), in step order; offset: from - lane of the lanes
    that received another lane's value (None when every lane kept its own)."""
    got = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if r["array"] == array and r["space"] == "register":
            got[(block_of(r), r["warp"])][r["step"]][r["lane"]] = r["index"]
    out = {}
    for key, steps in got.items():
        out[key] = []
        for step in sorted(steps):
            moved = {f - l for l, f in steps[step].items() if f != l}
            out[key].append((step, moved.pop() if len(moved) == 1 else None, steps[step]))
    return out


def check_shuffle(rows, array):
    """Every warp_sum of the trace (its rounds: the steps until the offset grows again) is the
    tree the handout draws: offsets 16, 8, 4, 2, 1, lane l receiving lane l + offset's value
    (its own where l + offset >= 32), and the lanes whose value reaches lane 0 halving from
    32 to 1: 32 before round 0, 16 before round 1, ... (from the trace, round by round)."""
    bad, sums = [], 0
    for (block, warp), rounds in sorted(shuffle_rounds(rows, array).items()):
        calls, call = [], []
        for step, offset, sources in rounds:
            if call and (offset is None or call[-1][1] is None or offset > call[-1][1]):
                calls.append(call)
                call = []
            call.append((step, offset, sources))
        calls.append(call)
        for call in calls:
            sums += 1
            offsets = [o for _, o, _ in call]
            wrong = [(s, l, f) for s, o, src in call for l, f in src.items()
                     if o is None or f != (l + o if l + o < 32 else l)]
            needed, reach = {0}, []
            for _, _, src in reversed(call):  # the lanes whose value ends in lane 0
                needed = needed | {src[l] for l in needed if l in src}
                reach.append(len(needed))
            reach = reach[::-1] + [1]
            if offsets != [16, 8, 4, 2, 1] or wrong or reach != [32, 16, 8, 4, 2, 1]:
                bad.append(f"block {block[0]} warp {warp} steps {call[0][0]}-{call[-1][0]}: "
                           f"offsets {offsets}, lanes reaching lane 0 {reach}"
                           + (f", lane {wrong[0][1]} got lane {wrong[0][2]}'s value" if wrong
                              else ""))
    ok = sums > 0 and not bad
    return ok, (f"{array}: {sums} warp sums, each offsets 16, 8, 4, 2, 1 and 32, 16, 8, 4, 2, 1 "
                "lanes reaching lane 0" if ok else f"{array}: " + "; ".join(bad[:2]))


PHASES = ("reduce-scatter", "all-gather")


def ring_steps(rows, array="data"):
    """The ring's data flow, from a trace of several GPUs (trace patch ring_allreduce): K (the
    GPUs), and [(phase, step, {gpu: {element: owner GPU read}}, {gpu: elements written})] in
    the order the steps ran. A GPU's element written in a step takes the element of the same
    index it read from another GPU in that step (add_into: mine[i] += theirs[i]; the copy:
    dst[i] = src[i])."""
    k = max([r["device"] + 1 for r in rows] + [r["owner"] + 1 for r in rows], default=0)
    steps = defaultdict(lambda: (defaultdict(dict), defaultdict(set)))
    for r in rows:
        if r["array"] != array:
            continue
        reads, writes = steps[(r["phase"], r["step"])]
        if r["rw"] == "W" and r["owner"] == r["device"]:
            writes[r["device"]].add(r["index"])
        elif r["rw"] == "R" and r["owner"] != r["device"]:
            reads[r["device"]][r["index"]] = r["owner"]
    return k, [(p, s, dict(steps[(p, s)][0]), dict(steps[(p, s)][1])) for p, s in sorted(steps)]


def ring_states(rows, n, array="data"):
    """[(phase, step, state)]: before the first step (phase None), then after each step, the
    GPUs whose inputs each element of each GPU holds the sum of, state[g][i] = frozenset, from
    the trace's reads and writes alone (steps are ordered: each reads the state after the last)."""
    k, steps = ring_steps(rows, array)
    state = [[frozenset([g]) for _ in range(n)] for g in range(k)]
    out = [(None, None, state)]
    for phase, step, reads, writes in steps:
        new = [list(s) for s in state]
        for g, elements in writes.items():
            for i in elements:
                src = reads.get(g, {}).get(i)
                got = state[src][i] if src is not None else frozenset()
                new[g][i] = got if phase == 1 else state[g][i] | got
        state = new
        out.append((phase, step, state))
    return out


def ring_chunks(rows, array="data"):
    """{(phase, step, gpu): (first, last) element it wrote}; the chunks' bounds: each step's
    written ranges, sorted."""
    _, steps = ring_steps(rows, array)
    return {(p, s, g): (min(w), max(w)) for p, s, _, writes in steps for g, w in writes.items()
            if w}


def check_ring(rows, n, array="data"):
    """The ring all-reduce, from the trace: K GPUs, K-1 steps of each phase; at every step each
    GPU reads only its left neighbour's memory (GPU g-1) and writes one chunk of its own, each
    element it writes taken from the same element it read; step s on GPU g touches chunk
    (g - s + c) mod K, one constant c for the reduce-scatter and c - 1 for the all-gather
    (each GPU sends on the chunk it finished the step before), whatever the program's own
    indexing; after the reduce-scatter every chunk is the sum of all K GPUs on exactly one GPU;
    in the all-gather every element is written once on every GPU but the one that finished it;
    after it every element on every GPU is the sum of all K."""
    k, steps = ring_steps(rows, array)
    bad = []
    if k < 2:
        return False, f"{array}: {k} GPU(s) in the trace: a ring needs two"
    counts = [sum(1 for p, *_ in steps if p == phase) for phase in (0, 1)]
    if counts != [k - 1, k - 1]:
        bad.append(f"{counts[0]} reduce-scatter and {counts[1]} all-gather steps, not {k - 1} each")
    # the chunks: the ranges the reduce-scatter's first step writes, one a GPU
    chunk_of = {}
    first = sorted(w for p, s, _, writes in steps if (p, s) == (0, 0) for w in
                   (sorted(v) for v in writes.values()))
    for c, elements in enumerate(first):
        for i in elements:
            chunk_of[i] = c
    offsets = defaultdict(set)
    for phase, step, reads, writes in steps:
        for g, elements in sorted(writes.items()):
            chunks = {chunk_of.get(i) for i in elements}
            sources = {reads.get(g, {}).get(i) for i in elements}
            if len(chunks) != 1 or None in chunks:
                bad.append(f"{PHASES[phase]} step {step}: GPU {g} writes elements of "
                           f"{len(chunks)} chunks")
                continue
            if sources != {(g - 1) % k}:
                bad.append(f"{PHASES[phase]} step {step}: GPU {g} reads GPU(s) "
                           f"{sorted(x for x in sources if x is not None)}"
                           + (" and nothing for some" if None in sources else "")
                           + f", not its left neighbour {(g - 1) % k}")
            offsets[phase].add((chunks.pop() - g + step) % k)
    if len(offsets[0]) > 1 or len(offsets[1]) > 1:
        bad.append(f"chunk - (g - s) mod K not one constant: reduce-scatter {sorted(offsets[0])}, "
                   f"all-gather {sorted(offsets[1])}")
    elif offsets[0] and offsets[1] and offsets[1] != {(min(offsets[0]) + 1) % k}:
        bad.append(f"the all-gather sends chunk (g - s + {min(offsets[1])}), not the one the "
                   f"reduce-scatter finished, (g - s + {(min(offsets[0]) + 1) % k})")
    states = ring_states(rows, n, array)
    everyone = frozenset(range(k))
    after_rs = next((st for p, s, st in reversed(states) if p == 0), None)
    if after_rs is not None:
        for c in range(len(first)):
            holders = [g for g in range(k) if all(after_rs[g][i] == everyone for i in first[c])]
            if len(holders) != 1:
                bad.append(f"after the reduce-scatter chunk {c} is the full sum on "
                           f"{len(holders)} GPUs")
    per_step, ag_writes = defaultdict(int), defaultdict(int)  # from the rows: every write
    for r in rows:
        if r["array"] == array and r["rw"] == "W":
            per_step[(r["phase"], r["step"], r["device"], r["index"])] += 1
            ag_writes[(r["device"], r["index"])] += r["phase"] == 1
    twice = sorted(key for key, v in per_step.items() if v > 1)
    if twice:
        p, s, g, i = twice[0]
        bad.append(f"{PHASES[p]} step {s}: GPU {g} writes element {i} {per_step[twice[0]]} times")
    twice = sorted(key for key, v in ag_writes.items() if v > 1)
    if twice:
        bad.append(f"all-gather: GPU {twice[0][0]} writes element {twice[0][1]} "
                   f"{ag_writes[twice[0]]} times")
    final = states[-1][2]
    wrong = [(g, i) for g in range(k) for i in range(n) if final[g][i] != everyone]
    if wrong:
        g, i = wrong[0]
        bad.append(f"{len(wrong)} of {k * n} elements not the sum of all {k} GPUs at the end; "
                   f"first GPU {g} element {i}: the sum of GPU(s) {sorted(final[g][i])}")
    ok = not bad
    rs = min(offsets[0]) if offsets[0] else None
    what = (f"{array}: {k} GPUs, {n} floats, {len(first)} chunk{'s' * (len(first) != 1)} with "
            "data; "
            + (f"step s on GPU g: chunk (g - s + {rs}) mod {k} in the reduce-scatter, "
               f"(g - s + {(rs + 1) % k}) mod {k} in the all-gather, read from GPU g - 1; every "
               f"chunk the full sum on one GPU after the reduce-scatter, every element on every "
               f"GPU after the all-gather" if ok else "; ".join(bad[:3])))
    return ok, what


CHECKS = {"ring": check_ring, "shuffle": check_shuffle, "swizzle": check_swizzle, "elements_per_request": check_elements_per_request, "written_once": check_written_once, "sectors": check_sectors,
          "no_bank_conflicts": check_no_bank_conflicts, "packed_warps": check_packed_warps}


# ---- the pictures and their traces ------------------------------------------------------------
# A picture keeps the sha256 of each trace it was drawn from in its PNG Description field
# ("drawn by scripts/trace_kernel.py from traces: NAME=SHA256 ..."); scripts/docs.py check fails
# when a trace changed without its picture.


def png_texts(path):
    """The PNG's tEXt fields, {key: value}."""
    data = Path(path).read_bytes()
    texts, at = {}, 8
    while at + 8 <= len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        kind = data[at + 4:at + 8]
        body = data[at + 8:at + 8 + length]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            texts[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            texts[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        at += 12 + length
    return texts


def stamp(names, folder):
    return " ".join(f"{n}={digest(Path(folder) / (n + '.csv.gz'))}" for n in names)


def stale_pictures(folder, pictures):
    """The pictures whose traces changed since they were drawn (or that are missing)."""
    folder = Path(folder)
    stale = []
    for p in pictures:
        png = folder / p["png"]
        missing = [n for n in p["traces"] if not (folder / f"{n}.csv.gz").exists()]
        if missing:
            stale.append(f"{p['png']}: no trace {', '.join(missing)}")
        elif not png.exists():
            stale.append(f"{p['png']}: missing (scripts/trace_kernel.py draw)")
        elif png_texts(png).get("Description", "").split("traces: ")[-1] != stamp(p["traces"], folder):
            stale.append(f"{p['png']}: its traces changed since it was drawn (scripts/trace_kernel.py draw)")
    return stale
