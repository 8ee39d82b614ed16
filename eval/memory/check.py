#!/usr/bin/env python3
"""Gates on a `quorum-lab eval-memory` results file (eval/memory/README.md).

Every case must test something (without memory, each dismissed case repeats
its finding and no convention case has it) and memory must do its job at the
level measured on 2026-12-05: no dismissed finding repeated, every
convention applied, every clean control unchanged. Exit 1 with the reasons.
"""

import json
import sys


def problems(r: dict) -> list[str]:
    out = []
    for c in r["cases"]:
        if c["kind"] == "dismissed" and not c["without"]:
            out.append(f"{c['id']}: without memory the finding is not reported, so the case tests nothing")
        if c["kind"] == "dismissed" and c["with"]:
            out.append(f"{c['id']}: a finding the team dismissed was reported again")
        if c["kind"] == "convention" and c["without"]:
            out.append(f"{c['id']}: the convention is found without memory, so the case tests nothing")
        if c["kind"] == "convention" and not c["with"]:
            out.append(f"{c['id']}: the convention from past reviews was not applied")
        if c["kind"] == "clean" and not c["unchanged"]:
            out.append(f"{c['id']}: memory changed a clean control: {c['kept_without']} -> {c['kept_with']}")
    if r["clean_total"] * 3 < len(r["cases"]):
        out.append(f"only {r['clean_total']} of {len(r['cases'])} cases are clean controls (at least a third)")
    return out


def main(path: str) -> int:
    with open(path) as f:
        r = json.load(f)
    found = problems(r)
    for p in found:
        print(f"FAIL {p}")
    print(
        f"memory eval: dismissed repeated {r['dismissed_repeated_with']}/{r['dismissed_total']} "
        f"(without memory {r['dismissed_repeated_without']}), conventions applied "
        f"{r['conventions_applied_with']}/{r['conventions_total']} (without {r['conventions_applied_without']}), "
        f"clean unchanged {r['clean_unchanged']}/{r['clean_total']}"
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "eval/memory/results.json"))
