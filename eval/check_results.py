#!/usr/bin/env python3
"""Validates an eval run's results.json against eval/results.schema.json.

Usage: check_results.py RESULTS_DIR_OR_PARENT
Given the `--out` directory, checks the newest run in it.
"""
import json
import pathlib
import sys

import jsonschema

SCHEMA = pathlib.Path(__file__).with_name("results.schema.json")


def newest_results(path: pathlib.Path) -> pathlib.Path:
    if (path / "results.json").is_file():
        return path / "results.json"
    runs = [p for p in path.iterdir() if (p / "results.json").is_file()]
    if not runs:
        sys.exit(f"no results.json under {path}")
    return max(runs, key=lambda p: p.stat().st_mtime) / "results.json"


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = newest_results(pathlib.Path(sys.argv[1]))
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(json.loads(results.read_text())),
        key=lambda e: list(e.absolute_path),
    )
    for e in errors:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        print(f"{results}: {where}: {e.message}", file=sys.stderr)
    if errors:
        return 1
    print(f"{results}: valid against {SCHEMA.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
