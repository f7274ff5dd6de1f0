"""README.md's blocks: an excerpt of the tour and the table of chapters."""
import cog  # provided by cogapp while it runs a generator

from .core import *  # noqa: F401,F403


def tour_excerpt(every=6):
    """An excerpt of the tour's printed progress and summary, from the results run."""
    data = results()
    runs = data["runs"]
    lines = []
    for i, e in enumerate(runs, 1):
        if i % every == 4 or i == len(runs):
            name = f"ch{e['chapter']:02d} {e['program']} {' '.join(shown_args(e))}".strip()
            lines.append(f"[{i:2d}/{len(runs)}] {name:<52} {e['seconds']:6.1f} s  {e['status']}")
    lines.append("...")
    c = data.get("ceilings") or {}
    if c.get("dram"):
        lines.append(f"measured ceilings: device-to-device copy {c['dram']:.0f} GB/s, cuBLAS FP32 "
                     f"{c.get('fp32', 0):.0f} GFLOP/s, pinned host->device {c.get('h2d', 0):.1f} "
                     f"GB/s, device->host {c.get('d2h', 0):.1f} GB/s")
    last = {}
    for r in data.get("summary", []):
        last[r["chapter"]] = r
    for ch in sorted(last):
        r = last[ch]
        name = r["program"] + (f" [{r['variant']}]" if r.get("variant") else "")
        lines.append(f"{ch:<3} {name:<30} kernel {fmt(r.get('kernel_ms'), '.4g'):>8} ms  "
                     f"{(fmt(r.get('rate'), '.5g') + ' ' + r.get('unit', '')).strip():>16}  "
                     f"{r.get('check', '')}")
    code(lines)


def chapters_table():
    """The README's table of chapters, from programs.json (programs, key ideas, handout)."""
    m = manifest()
    cog.outl("| chapter | programs | what it teaches | handout |")
    cog.outl("| --- | --- | --- | --- |")
    for c in m["chapters"]:
        names = ", ".join(p["name"] for p in m["programs"] if p["chapter"] == c["chapter"])
        cog.outl(f"| {c['chapter']} {c['title']} | {names} | {c['ideas']} | "
                 f"[{c['handout']}]({c['handout']}) |")
