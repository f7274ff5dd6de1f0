"""Chapter 5's blocks (docs/ch05_raytrace.md): compare.py's table (ch05_compare.md)."""
from .core import *  # noqa: F401,F403


def compare_row(name, spheres, reads):
    """The cells (as text) of one row of compare.py's table, or None."""
    path = side_file(name)
    if path is None:
        return None
    with open(path) as f:
        for row in f:
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            if len(cells) >= 7 and cells[0] == str(spheres) and cells[1] == reads:
                return cells
    return None


def compare_value(name, spheres, reads, column):
    """One number of compare.py's table: column 2 kernel global, 3 kernel constant, 4 the
    constant/global ratio, 5 and 6 end to end; the median, before its (min-max)."""
    cells = compare_row(name, spheres, reads)
    return None if cells is None else float(cells[column].split()[0].strip("*"))
