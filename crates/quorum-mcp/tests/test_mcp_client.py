"""Quorum's MCP server driven by a real MCP client: PyPI's `mcp` (the
official Python SDK, pinned >=2,<3) starting `quorum mcp` over stdio and
over streamable HTTP, as an editor's agent would. Run by `make mcp-check`
(part of `make test`) with QUORUM_BIN pointing at the built binary."""

import asyncio
import itertools
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

ROOT = Path(__file__).resolve().parents[3]
QUORUM = os.environ.get("QUORUM_BIN", str(ROOT / "target" / "debug" / "quorum"))
REPO = "storefront"


GRAPHS = None


@pytest.fixture(autouse=True)
def graph_cache(tmp_path_factory):
    """Graphs kept between server starts go to a temporary directory."""
    global GRAPHS
    GRAPHS = str(tmp_path_factory.mktemp("graphs"))


def run(scenario, extra_args=(), repo_dir=None):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/root"), "QUORUM_GRAPH_CACHE": GRAPHS}
    if "--index-dir" not in extra_args and "--search" not in extra_args:
        # Only the search test builds an index (in its own directory).
        extra_args = ["--search", "off", *extra_args]
    params = StdioServerParameters(
        command=QUORUM,
        args=["mcp", "--repo", str(repo_dir or ROOT / "storefront-fixture"), "--name", REPO, *extra_args],
        env=env,
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
    assert names == {
        "get_callers", "find_tests", "read_snippet", "search_code", "search_docs",
        "impact", "review_diff", "past_reviews",
    }, names
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


# --- changes: impact and review_diff on a git checkout ----------------------

def git(repo, *args):
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        check=True, capture_output=True,
    )


def case_checkout(tmp_path, case_id):
    """The storefront as a git repository at its base commit, with eval case
    `case_id`'s edits left uncommitted in the working tree."""
    repo = tmp_path / "storefront"
    shutil.copytree(ROOT / "storefront-fixture", repo, ignore=shutil.ignore_patterns("cases", "__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    case = json.loads(next((ROOT / "storefront-fixture" / "cases").glob(case_id + "*.json")).read_text())
    for edit in case["edits"]:
        path = repo / edit["file"]
        text = path.read_text()
        assert edit["find"] in text, edit["file"]
        path.write_text(text.replace(edit["find"], edit["replace"], 1))
    return repo


def test_impact_of_a_signature_change_names_both_callers(tmp_path):
    repo = case_checkout(tmp_path, "05")

    async def scenario(s):
        worktree = await s.call_tool("impact", {"repo": REPO})
        staged_nothing = await s.call_tool("impact", {"repo": REPO, "changes": "staged"})
        bad_range = await s.call_tool("impact", {"repo": REPO, "changes": "main...HEAD"})
        return worktree, staged_nothing, bad_range

    worktree, staged_nothing, bad_range = run(scenario, ["--search", "off"], repo_dir=repo)
    assert not worktree.is_error, text(worktree)
    report = text(worktree)
    assert "compute_tax" in report, report
    # Both callers still pass two arguments (read from the fixture).
    assert "shop.checkout.checkout" in report and "shop.pricing.order_total" in report, report
    assert staged_nothing.is_error and "nothing is staged" in text(staged_nothing), text(staged_nothing)
    assert bad_range.is_error and "three-dot" in text(bad_range), text(bad_range)
    # The working tree and the branch are as the user left them.
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True).stdout
    assert status.strip() == "M shop/pricing.py", status


def test_review_diff_finds_the_sql_injection_of_case_01_from_a_diff(tmp_path):
    repo = case_checkout(tmp_path, "01")
    diff = subprocess.run(["git", "-C", str(repo), "diff"], capture_output=True, text=True, check=True).stdout
    git(repo, "checkout", "--", ".")  # the change now exists only as the diff text

    async def scenario(s):
        reviewed = await s.call_tool("review_diff", {"repo": REPO, "diff": diff})
        stale = await s.call_tool("review_diff", {"repo": REPO, "diff": diff.replace("cursor.execute(", "cursor.run(")})
        return reviewed, stale

    reviewed, stale = run(scenario, ["--search", "off"], repo_dir=repo)
    assert not reviewed.is_error, text(reviewed)
    answer = json.loads(text(reviewed))
    assert answer["change"] == "the given diff"
    hits = [f for f in answer["findings"] if f["location"].startswith("shop/repository.py:71") and f["category"] == "security"]
    assert hits, answer["findings"]
    assert "sql" in (hits[0]["title"] + hits[0]["explanation"]).lower(), hits[0]
    assert stale.is_error and "does not apply" in text(stale), text(stale)


def test_a_symlink_out_of_the_tree_is_never_read(tmp_path):
    repo = tmp_path / "linked"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("def f():\n    return 1\n")
    (repo / "pkg" / "leak.py").symlink_to("/etc/passwd")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")

    async def scenario(s):
        leak = await s.call_tool("read_snippet", {"repo": REPO, "path": "pkg/leak.py", "start": 1, "end": 3})
        fine = await s.call_tool("read_snippet", {"repo": REPO, "path": "pkg/a.py", "start": 1, "end": 2})
        return leak, fine

    leak, fine = run(scenario, ["--search", "off"], repo_dir=repo)
    assert leak.is_error and "root:" not in text(leak), text(leak)
    assert not fine.is_error and "def f" in text(fine), text(fine)


# --- search ---------------------------------------------------------------

def test_search_code_finds_refund_code_by_meaning(tmp_path):
    """The index is built in the background; the search tools say so until
    it is ready, then answer by meaning (the query shares no word with the
    refund code's identifiers)."""

    async def scenario(s):
        deadline = time.monotonic() + 300
        while True:
            r = await s.call_tool("search_code", {"repo": REPO, "query": "give a customer their money back", "limit": 3})
            if not r.is_error or "still being built" not in text(r) or time.monotonic() > deadline:
                break
            await asyncio.sleep(1)
        empty = await s.call_tool("search_code", {"repo": REPO, "query": "  "})
        glob = await s.call_tool("search_code", {"repo": REPO, "query": "refund", "path": "shop/[oops"})
        docs = await s.call_tool("search_docs", {"repo": REPO, "query": "how are SQL statements written", "limit": 2})
        return r, empty, glob, docs

    r, empty, glob, docs = run(scenario, ["--index-dir", str(tmp_path / "index")])
    if r.is_error and "hybrid search is off" in text(r):
        pytest.fail("the embedding model is missing: `make deps` installs it (" + text(r) + ")")
    assert not r.is_error, text(r)
    # The first hit's header and code lines (up to the next hit's header):
    # the refund code, whether the chunk is named after the function
    # (`refund_order`) or after the class a long method was split from
    # (`OrderService`, lines starting at `def refund`).
    lines = text(r).splitlines()
    first = [lines[0]] + [l for l in itertools.takewhile(lambda l: l[:1].isspace(), lines[1:])]
    assert "refund" in first[0].lower() or any("def refund" in l for l in first), text(r)
    assert empty.is_error and "`query` is empty" in text(empty), text(empty)
    assert glob.is_error and "glob" in text(glob), text(glob)
    assert not docs.is_error and ".md" in text(docs), text(docs)


# --- prompts --------------------------------------------------------------

def test_prompts_name_the_tools_that_answer_them():
    async def scenario(s):
        listed = await s.list_prompts()
        what = await s.get_prompt("what-breaks", {"symbol": "shop.pricing.compute_tax"})
        review_as = await s.get_prompt("review-as", {"login": "@alice"})
        return listed, what, review_as

    listed, what, review_as = run(scenario, ["--search", "off"])
    assert {p.name for p in listed.prompts} == {"review-staged", "review-as", "what-breaks"}
    body = what.messages[0].content.text
    assert "get_callers" in body and "find_tests" in body and "shop.pricing.compute_tax" in body, body
    body = review_as.messages[0].content.text
    assert 'as_person="alice"' in body and "past_reviews" in body, body


# --- streamable HTTP ------------------------------------------------------

@pytest.fixture
def http_server():
    proc = subprocess.Popen(
        [QUORUM, "mcp", "--repo", str(ROOT / "storefront-fixture"), "--name", REPO, "--search", "off",
         "--http", "127.0.0.1:0", "--allowed-host", "quorum-mcp.review.svc"],
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/root"), "QUORUM_MCP_TOKEN": "s3cret",
             "QUORUM_GRAPH_CACHE": GRAPHS},
        stderr=subprocess.PIPE, text=True,
    )
    url = None
    deadline = time.monotonic() + 60
    while url is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            break
        m = re.search(r"at (http://[^ ]+/mcp)", line)
        url = m.group(1) if m else None
    assert url, "quorum mcp --http did not say where it listens"
    yield url
    proc.terminate()
    assert proc.wait(timeout=30) == 0, "SIGTERM ends the HTTP server cleanly"


def test_http_clients_need_the_token_and_get_the_same_answers(http_server):
    import httpx2

    async def session(headers):
        async with create_mcp_http_client(headers=headers) as client:
            async with streamable_http_client(http_server, http_client=client) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    tools = await s.list_tools()
                    callers = await s.call_tool("get_callers", {"repo": REPO, "symbol": "shop.auth.hash_password", "hops": 1})
                    return tools, callers

    tools, callers = asyncio.run(session({"Authorization": "Bearer s3cret"}))
    assert {"get_callers", "impact", "review_diff", "search_code"} <= {t.name for t in tools.tools}
    assert not callers.is_error
    assert "shop.auth.set_password" in text(callers), text(callers)

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    no_token = httpx2.post(http_server, json=init, headers=accept)
    assert no_token.status_code == 401 and "bearer token" in no_token.text, no_token.text
    wrong = httpx2.post(http_server, json=init, headers={**accept, "Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    # The SDK's DNS-rebinding guard: only loopback and the configured service name.
    auth = {**accept, "Authorization": "Bearer s3cret"}
    evil = httpx2.post(http_server, json=init, headers={**auth, "Host": "evil.example"})
    assert evil.status_code in (400, 403), (evil.status_code, evil.text)
    service = httpx2.post(http_server, json=init, headers={**auth, "Host": "quorum-mcp.review.svc"})
    assert service.status_code == 200, (service.status_code, service.text)


def test_graph_and_snippet_tools_answer_at_another_ref(tmp_path):
    repo = case_checkout(tmp_path, "05")
    git(repo, "commit", "-qam", "rates injectable")  # HEAD has the new signature

    async def scenario(s):
        now = await s.call_tool("read_snippet", {"repo": REPO, "path": "shop/pricing.py", "start": 56, "end": 56})
        before = await s.call_tool(
            "read_snippet", {"repo": REPO, "path": "shop/pricing.py", "start": 56, "end": 56, "ref": "HEAD~1"})
        callers = await s.call_tool(
            "get_callers", {"repo": REPO, "symbol": "shop.pricing.compute_tax", "hops": 1, "ref": "HEAD~1"})
        bad_ref = await s.call_tool("find_tests", {"repo": REPO, "symbol": "shop.pricing.compute_tax", "ref": "no-such-branch"})
        search = await s.call_tool("search_code", {"repo": REPO, "query": "tax", "ref": "HEAD~1"})
        return now, before, callers, bad_ref, search

    now, before, callers, bad_ref, search = run(scenario, repo_dir=repo)
    assert "rates" in text(now), text(now)
    assert not before.is_error and "rates" not in text(before) and "def compute_tax" in text(before), text(before)
    assert not callers.is_error and "shop.checkout.checkout" in text(callers), text(callers)
    assert bad_ref.is_error and "no-such-branch" in text(bad_ref), text(bad_ref)
    assert search.is_error and "HEAD" in text(search), text(search)
