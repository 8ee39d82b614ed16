"""MCP tool latency on a large real tree, measured through the protocol by
PyPI's `mcp` client (what an editor's agent sees): the cold start of
`quorum mcp --repo` (graph cache cold, then warm; search index warm), and
p50/p99 of `get_callers` and `search_code`.

Run by `make bench-mcp` (release build; Django 5.2's sdist from PyPI).
The graph side runs on the whole tree; the search side on a subtree (the
first index of all of Django takes ~17 min at the in-process model's speed,
see docs/search.md), which the JSON names.
"""

import argparse
import ast
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))], 2)


def symbols(tree: Path, package: str, n: int, seed: int):
    """Qualified names of top-level functions and methods, with their
    docstring's first line (the search queries), sampled with a seed."""
    found = []
    for path in sorted((tree / package).rglob("*.py")):
        if path.name == "__init__.py" or "/tests/" in str(path) or "/migrations/" in str(path):
            continue
        module = ".".join(path.relative_to(tree).with_suffix("").parts)
        try:
            body = ast.parse(path.read_text(encoding="utf-8")).body
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in body:
            items = [(node.name, node)] if isinstance(node, ast.FunctionDef) else []
            if isinstance(node, ast.ClassDef):
                items = [(f"{node.name}.{m.name}", m) for m in node.body if isinstance(m, ast.FunctionDef)]
            for name, fn in items:
                doc = (ast.get_docstring(fn) or "").strip().splitlines()
                found.append((f"{module}.{name}", doc[0] if doc else ""))
    random.Random(seed).shuffle(found)
    return found[:n]


def fetch_django() -> Path:
    """Django 5.2's sdist from PyPI, unpacked once under ~/.cache/quorum/corpora."""
    cache = Path.home() / ".cache/quorum/corpora"
    tree = cache / "Django-5.2"
    if not tree.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        "django==5.2", "-d", str(cache)], check=True)
        subprocess.run(["tar", "-xzf", str(cache / "Django-5.2.tar.gz"), "-C", str(cache)], check=True)
    return tree


def text(result):
    return "".join(c.text for c in result.content if c.type == "text")


async def with_session(quorum, repo, args, work, body):
    """Starts `quorum mcp`, times spawn → initialized, runs `body(session)`;
    returns (seconds to initialized, what body returned)."""
    params = StdioServerParameters(
        command=quorum,
        args=["mcp", "--repo", str(repo), "--name", "bench", *args],
        env={**os.environ, "QUORUM_GRAPH_CACHE": str(work / "graphs"), "QUORUM_INDEX_DIR": str(work / "index")},
    )
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            ready = time.perf_counter() - started
            return ready, await body(s)


async def graph_side(quorum, tree, names, work):
    async def nothing(s):
        return None

    async def callers(s):
        lat, errors = [], 0
        for qname, _ in names:
            t = time.perf_counter()
            r = await s.call_tool("get_callers", {"repo": "bench", "symbol": qname, "hops": 2})
            lat.append((time.perf_counter() - t) * 1000)
            errors += bool(r.is_error)
        return {"calls": len(lat), "tool_errors": errors, "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99)}

    cold, _ = await with_session(quorum, tree, ["--search", "off"], work, nothing)
    warm, latency = await with_session(quorum, tree, ["--search", "off"], work, callers)
    return {"cold_start_graph_cache_cold_s": round(cold, 2), "cold_start_graph_cache_warm_s": round(warm, 2),
            "get_callers": latency}


async def wait_ready(s, timeout):
    t = time.perf_counter()
    while time.perf_counter() - t < timeout:
        r = await s.call_tool("search_code", {"repo": "bench", "query": "x"})
        if not r.is_error:
            return time.perf_counter() - t
        if "still being built" not in text(r):
            raise SystemExit("search is not available: " + text(r))
        await asyncio.sleep(0.5)
    raise SystemExit("the index was not ready in time")


async def search_side(quorum, subtree, queries, work):
    async def first(s):
        return await wait_ready(s, 3600)

    async def searches(s):
        waited = await wait_ready(s, 600)
        lat = []
        for q in queries:
            t = time.perf_counter()
            await s.call_tool("search_code", {"repo": "bench", "query": q, "limit": 5})
            lat.append((time.perf_counter() - t) * 1000)
        return waited, {"calls": len(lat), "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99)}

    start, indexing = await with_session(quorum, subtree, [], work, first)
    ready, (waited, latency) = await with_session(quorum, subtree, [], work, searches)
    return {"first_index_s": round(start + indexing, 1), "cold_start_index_warm_s": round(ready + waited, 2),
            "search_code": latency}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quorum", required=True)
    ap.add_argument("--tree", help="an unpacked Django sdist (default: fetch Django 5.2 from PyPI)")
    ap.add_argument("--search-subtree", default="django/db/models")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--out")
    a = ap.parse_args()
    tree = Path(a.tree) if a.tree else fetch_django()
    names = symbols(tree, "django", a.calls, seed=7)
    queries = [doc for _, doc in names if len(doc.split()) >= 3][:200]
    work = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    subtree = work / "subtree"
    shutil.copytree(tree / a.search_subtree, subtree / a.search_subtree)
    files = sum(1 for _ in tree.rglob("*.py"))
    result = {
        "tree": tree.name,
        "python_files": files,
        "search_subtree": a.search_subtree,
        "search_subtree_python_files": sum(1 for _ in subtree.rglob("*.py")),
        "graph": asyncio.run(graph_side(a.quorum, tree, names, work)),
        "search": asyncio.run(search_side(a.quorum, subtree, queries, work)),
        "cores": os.cpu_count(),
    }
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
