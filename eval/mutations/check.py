#!/usr/bin/env python3
"""Gate on `quorum-lab mutate --json` results against eval/mutations/baseline.json:
per package and class, at least the baseline's hits and at most its control
findings (a control is the mutation with every call site updated: a finding
there is a false positive, or a call the harness could not update). Run by
`make mutate-check` (part of `make test`): seeded, 40 sites per class.

usage: check.py BASELINE NAME=RESULT.json [NAME=RESULT.json ...]"""

import json
import sys


def problems(baseline: dict, name: str, result: dict) -> list[str]:
    want = baseline["packages"].get(name)
    if want is None:
        return [f"{name}: no baseline"]
    out = []
    got = {c["class"]: c for c in result["classes"]}
    for cls, b in want.items():
        c = got.get(cls)
        if c is None:
            out.append(f"{name} {cls}: not run")
            continue
        if c["hits"] < b["min_hits"]:
            out.append(f"{name} {cls}: {c['hits']} hits of {c['constructed']}, the baseline is {b['min_hits']} (missed: {c['missed'][:5]})")
        if c["control_findings"] > b["max_control_findings"]:
            out.append(f"{name} {cls}: {c['control_findings']} controls drew a finding, the baseline is {b['max_control_findings']} ({c['false_positives'][:3]})")
    return out


def main(argv: list[str]) -> int:
    baseline = json.load(open(argv[0]))
    found = []
    for arg in argv[1:]:
        name, path = arg.split("=", 1)
        result = json.load(open(path))
        found += problems(baseline, name, result)
        for c in result["classes"]:
            print(f"{name} {c['class']}: recall {c['recall']:.2f} ({c['hits']}/{c['constructed']}), controls with a finding {c['control_findings']}/{c['controls']}")
    for p in found:
        print(f"FAIL {p}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
