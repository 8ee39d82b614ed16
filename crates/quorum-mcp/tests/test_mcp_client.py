"""Quorum's MCP server driven by a real MCP client: PyPI's `mcp` (the
official Python SDK, pinned >=2,<3) starting `quorum mcp` over stdio, as an
editor's agent would. Run by `make mcp-check` (part of `make test`) with
QUORUM_BIN pointing at the built binary."""

import asyncio
import json
import os
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[3]
QUORUM = os.environ.get("QUORUM_BIN", str(ROOT / "target" / "debug" / "quorum"))
REPO = "storefront"


def run(scenario, extra_args=()):
    params = StdioServerParameters(
        command=QUORUM,
        args=["mcp", "--repo", str(ROOT / "storefront-fixture"), "--name", REPO, *extra_args],
        env={"PATH": os.environ.get("PATH", "")},
    )

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await scenario(session)

    return asyncio.run(go())


def text(result):
    return "".join(c.text for c in result.content if c.type == "text")


def test_tools_are_listed_with_schemas_and_the_list_stays_small():
    async def scenario(s):
        return await s.list_tools()

    tools = run(scenario)
    names = {t.name for t in tools.tools}
    assert {"get_callers", "find_tests", "read_snippet"} <= names, names
    for t in tools.tools:
        assert t.description, t.name
        assert "repo" in t.input_schema["properties"], t.name
    size = len(tools.model_dump_json(by_alias=True, exclude_none=True))
    assert size < 8 * 1024, f"tools/list is {size} bytes; it eats the agent's context"


def test_callers_tests_and_a_snippet_of_the_storefront():
    async def scenario(s):
        callers = await s.call_tool("get_callers", {"repo": REPO, "symbol": "shop.auth.hash_password", "hops": 1})
        tests = await s.call_tool("find_tests", {"repo": REPO, "symbol": "shop.auth.hash_password"})
        snippet = await s.call_tool("read_snippet", {"repo": REPO, "path": "shop/auth.py", "start": 50, "end": 52})
        return callers, tests, snippet

    callers, tests, snippet = run(scenario)
    assert not callers.is_error, text(callers)
    answer = json.loads(text(callers))
    assert answer["symbol"] == "shop.auth.hash_password"
    caller_names = {c["qname"] for c in answer["callers"]}
    # Read from the fixture itself: set_password and verify_password hash.
    assert {"shop.auth.set_password", "shop.auth.verify_password"} <= caller_names, caller_names
    assert not tests.is_error, text(tests)
    assert any(t.startswith("tests/") or "test" in t for t in json.loads(text(tests))), text(tests)
    assert not snippet.is_error, text(snippet)
    assert "50" in text(snippet) and "def hash_password" in text(snippet), text(snippet)


def test_bad_input_is_a_tool_error_with_a_message_never_a_crash():
    async def scenario(s):
        out = {}
        out["empty"] = await s.call_tool("get_callers", {"repo": REPO, "symbol": ""})
        out["unknown_symbol"] = await s.call_tool("find_tests", {"repo": REPO, "symbol": "no.such.thing"})
        out["unknown_repo"] = await s.call_tool("get_callers", {"repo": "acme/other", "symbol": "x"})
        out["escape"] = await s.call_tool("read_snippet", {"repo": REPO, "path": "../../etc/passwd", "start": 1, "end": 2})
        out["absolute"] = await s.call_tool("read_snippet", {"repo": REPO, "path": "/etc/passwd", "start": 1, "end": 2})
        out["range"] = await s.call_tool("read_snippet", {"repo": REPO, "path": "shop/auth.py", "start": 5, "end": 2})
        out["hops"] = await s.call_tool("get_callers", {"repo": REPO, "symbol": "shop.auth.hash_password", "hops": 9})
        # The session still answers after every refusal.
        out["after"] = await s.call_tool("find_tests", {"repo": REPO, "symbol": "shop.auth.hash_password"})
        return out

    out = run(scenario)
    expected = {
        "empty": "`symbol` is empty",
        "unknown_symbol": "no symbol `no.such.thing`",
        "unknown_repo": "unknown repo `acme/other`",
        "escape": "not a relative path inside the repository",
        "absolute": "not a relative path inside the repository",
        "range": "line range 5-2 is invalid",
        "hops": "hops must be 1-3",
    }
    for key, needle in expected.items():
        assert out[key].is_error, (key, text(out[key]))
        assert needle in text(out[key]), (key, text(out[key]))
    assert not out["after"].is_error, text(out["after"])


def test_past_reviews_answer_from_review_memory(tmp_path):
    # A state file as `quorum memory ingest` leaves it (only the part read here).
    thread = {
        "id": 101, "pr": 12, "path": "shop/payments.py", "reviewer": "alice", "association": "MEMBER",
        "text": "alice: amounts are integer cents, never float\nbob: done", "plus_one": 2, "minus_one": 0,
        "merged": True, "created_at": "2026-01-02T10:00:00Z", "url": "https://github.com/acme/shop/pull/12#discussion_r101",
    }
    (tmp_path / "acme__shop.json").write_text(json.dumps({"threads": {"101": thread}}))

    async def scenario(s):
        tools = await s.list_tools()
        asked = await s.call_tool("past_reviews", {
            "repo": REPO, "query": "price = float(total)", "file": "shop/orders.py", "as_person": "alice"})
        wrong = await s.call_tool("past_reviews", {"repo": REPO, "query": "x", "group": ["MAINTAINER"]})
        return tools, asked, wrong

    tools, asked, wrong = run(scenario, ["--memory", "acme/shop", "--memory-dir", str(tmp_path)])
    assert "past_reviews" in {t.name for t in tools.tools}
    size = len(tools.model_dump_json(by_alias=True, exclude_none=True))
    assert size < 8 * 1024, f"tools/list is {size} bytes"
    assert not asked.is_error, text(asked)
    hits = json.loads(text(asked))
    assert hits[0]["thread"]["reviewer"] == "alice" and "integer cents" in hits[0]["thread"]["text"], hits
    assert wrong.is_error and "MAINTAINER" in text(wrong), text(wrong)


def test_past_reviews_without_memory_say_how_to_get_it():
    async def scenario(s):
        return await s.call_tool("past_reviews", {"repo": REPO, "query": "float"})

    r = run(scenario)
    assert r.is_error and "--memory OWNER/NAME" in text(r), text(r)
