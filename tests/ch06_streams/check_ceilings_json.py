#!/usr/bin/env python3
"""Runs `ceilings --quick --json` and checks its records the way scripts/tour.py reads them.

    check_ceilings_json.py PATH_TO_CEILINGS

Every record must be one JSON object with no key given twice (a repeated key is silently
resolved by json.loads, last one wins); the link copies must not be judged against the DRAM
peak; every measurement must say PASS and the program exit 0; and tour.py's own
parse_records() and ceiling_values() must find the four ceilings. Exit 77 (no GPU) is passed on.
"""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path


def no_repeated_keys(pairs):
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(f"key(s) given twice: {', '.join(repeated)}")
    return dict(pairs)


def main():
    result = subprocess.run([sys.argv[1], "--quick", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=900)
    print(result.stdout)
    if result.returncode == 77:
        return 77
    errors, records = [], {}
    lines = [line for line in result.stdout.splitlines() if line.startswith('{"schema"')]
    for line in lines:
        try:
            record = json.loads(line, object_pairs_hook=no_repeated_keys)
        except ValueError as e:
            errors.append(f"{e}: {line[:100]}")
            continue
        records[record.get("variant")] = record
    for variant in ("device", "d2d-copy", "h2d-pinned", "d2h-pinned", "sgemm-fp32"):
        if variant not in records:
            errors.append(f"no record of variant {variant}")
    for variant in ("h2d-pinned", "d2h-pinned"):
        record = records.get(variant, {})
        if record.get("peak") is not None or record.get("pct_peak") is not None:
            errors.append(f"{variant}: a link rate judged against {record.get('peak')!r}")
    for variant in ("d2d-copy", "h2d-pinned", "d2h-pinned", "sgemm-fp32"):
        verdict = records.get(variant, {}).get("verdict")
        if verdict != "PASS":
            errors.append(f"{variant}: verdict {verdict!r}")
    if result.returncode != 0:
        errors.append(f"exit code {result.returncode}")

    # The reader that matters: the tour's own.
    spec = importlib.util.spec_from_file_location(
        "tour", Path(__file__).resolve().parents[2] / "scripts" / "tour.py")
    tour = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tour)
    ceilings = tour.ceiling_values(tour.parse_records(result.stdout))
    for key in ("dram", "fp32", "h2d", "d2h"):
        if not ceilings.get(key):
            errors.append(f"tour.py finds no {key!r} ceiling")

    for e in errors:
        print(f"check_ceilings_json: {e}")
    print(f"check_ceilings_json: {len(lines)} records, {'FAILED' if errors else 'all right'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
