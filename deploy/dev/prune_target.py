#!/usr/bin/env python3
"""Keeps the shared build cache (CARGO_TARGET_DIR) from filling the disk.

Every change to a crate links a new test binary (~100 MB each here: ONNX
Runtime, qdrant-edge and tokenizers are in most of them) beside the old one,
and cargo never removes the old: after a few weeks of sessions the cache held
72 GB and the disk ran out mid-build. This keeps the newest binary of each
name in `debug/deps` and `release/deps` (an older one is only a stale copy;
cargo rebuilds anything it finds missing, so pruning can cost time, never
correctness) and drops the incremental state once it passes a limit.

Usage: prune_target.py TARGET_DIR [--incremental-limit-gb N]
"""

import argparse
import os
import shutil
import sys


def prune_binaries(deps: str) -> tuple[int, int]:
    newest: dict[str, list[str]] = {}
    for name in os.listdir(deps):
        path = os.path.join(deps, name)
        # Test and bench binaries: executable, no extension, `name-hash`.
        if "." in name or "-" not in name or not os.path.isfile(path) or not os.access(path, os.X_OK):
            continue
        newest.setdefault(name.rsplit("-", 1)[0], []).append(path)
    removed = freed = 0
    for paths in newest.values():
        paths.sort(key=os.path.getmtime, reverse=True)
        for stale in paths[1:]:
            freed += os.path.getsize(stale)
            os.remove(stale)
            if os.path.exists(stale + ".d"):
                os.remove(stale + ".d")
            removed += 1
    return removed, freed


def size_of(path: str) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("target")
    ap.add_argument("--incremental-limit-gb", type=float, default=8.0)
    args = ap.parse_args()
    if not os.path.isdir(args.target):
        return 0
    removed = freed = 0
    for profile in ("debug", "release"):
        deps = os.path.join(args.target, profile, "deps")
        if os.path.isdir(deps):
            r, f = prune_binaries(deps)
            removed += r
            freed += f
        incremental = os.path.join(args.target, profile, "incremental")
        if os.path.isdir(incremental):
            size = size_of(incremental)
            if size > args.incremental_limit_gb * 1e9:
                shutil.rmtree(incremental, ignore_errors=True)
                freed += size
                print(f"prune: dropped {profile}/incremental ({size / 1e9:.1f} GB)")
    if removed:
        print(f"prune: removed {removed} stale test binaries ({freed / 1e9:.1f} GB freed in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
