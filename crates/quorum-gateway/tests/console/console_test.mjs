// The review console in a real browser (make console-check, part of make test):
// Debian's chromium, headless, driven by playwright-core, against `quorum up`
// in draft mode on a local repository. It sees a run go live to `draft`, opens
// it, sees a finding rejected by the critic with its reason, discards it and
// checks the state through the API; approves a second run and sees it
// published; a wrong token shows no data; a PR title full of HTML stays text.
// Screenshots of the runs list and of a run go to docs/.
//
// Environment: QUORUM_BIN (the built binary), CHROMIUM (default /usr/bin/chromium).

import { spawn, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../../..");
const quorum = process.env.QUORUM_BIN || join(root, "target/debug/quorum");
const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
const TOKEN = "console-test-token";
const REPO = "acme/shop";

if (!existsSync(browserPath)) {
  console.error(`FAIL: no browser at ${browserPath}: install Debian's chromium (make console-check does)`);
  process.exit(1);
}

function git(dir, ...args) {
  return execFileSync("git", ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args])
    .toString()
    .trim();
}

function freePort() {
  return new Promise((ok) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, f, ms = 60000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      last = await f();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what} (last: ${last})`);
}

// A repository: the storefront at base, then two changes that build SQL
// from a string. The base commits a review-memory file that suppresses the
// "behaviour changed without a test" note in shop/: the critic rejects that
// finding, with the memory item as its reason.
const work = mkdtempSync(join(tmpdir(), "quorum-console-"));
const repo = join(work, "shop");
cpSync(join(root, "storefront-fixture"), repo, {
  recursive: true,
  filter: (src) => !/[/\\](cases|\.git|__pycache__|\.pytest_cache)([/\\]|$)/.test(src.slice(root.length)),
});
mkdirSync(join(repo, ".quorum"), { recursive: true });
writeFileSync(
  join(repo, ".quorum/memory.yaml"),
  [
    "version: 1",
    "items:",
    "  - kind: suppress",
    "    status: active",
    '    scope: "shop/**"',
    "    rule: untested-change",
    "    text: The storefront is covered by its end-to-end suite; untested-change notes are noise here.",
    "",
  ].join("\n"),
);
git(repo, "init", "-q", "-b", "main");
git(repo, "add", "-A");
git(repo, "commit", "-qm", "base");
const base = git(repo, "rev-parse", "HEAD");
const auth = join(repo, "shop/auth.py");
const change = (name) =>
  `\n\ndef ${name}(db, email):\n    return db.execute(f"SELECT * FROM users WHERE email = '{email}'").fetchone()\n`;
writeFileSync(auth, readFileSync(auth, "utf8") + change("find_user_by_email"));
git(repo, "commit", "-qam", "lookup by email");
const head1 = git(repo, "rev-parse", "HEAD");
writeFileSync(auth, readFileSync(auth, "utf8") + change("find_admin_by_email"));
git(repo, "commit", "-qam", "admin lookup");
const head2 = git(repo, "rev-parse", "HEAD");

// A real redis-server holds the fleet's state, so `quorum memory import`
// (another process) and the console's memory page see the same memory.
const redisPort = await freePort();
const redis = spawn("redis-server", ["--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
  stdio: "ignore",
});
const REDIS_URL = `redis://127.0.0.1:${redisPort}`;
const prefix = `console-${process.pid}:`;
const memoryFile = join(work, "memory.yaml");
writeFileSync(
  memoryFile,
  [
    "version: 1",
    "items:",
    "  - kind: suppress",
    "    status: active",
    '    scope: "shop/**"',
    "    rule: missing-timeout",
    "    text: Calls in shop/ go through the client wrapper, which sets the timeout.",
    "  - kind: avoid",
    "    status: suggested",
    '    scope: "shop/**"',
    "    pattern: '\\bprint\\('",
    "    text: Log with the module logger, never print().",
    "",
  ].join("\n"),
);

const port = await freePort();
const gateway = `http://127.0.0.1:${port}`;
const fleet = spawn(quorum, ["up", "--gateway-addr", `127.0.0.1:${port}`, "--publish-mode", "draft"], {
  env: {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    QUORUM_LOCAL_REPOS: `${REPO}=${repo}`,
    GITHUB_WEBHOOK_SECRET: "console-test-secret",
    QUORUM_OPERATOR_TOKEN: TOKEN,
    QUORUM_AGGREGATOR_DEADLINE_SECS: "30",
    REDIS_URL,
    QUORUM_REDIS_PREFIX: prefix,
  },
  stdio: ["ignore", "ignore", "pipe"],
});
let fleetLog = "";
fleet.stderr.on("data", (d) => (fleetLog += d));

async function callApi(path, method = "GET", body) {
  const r = await fetch(gateway + path, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, body: await r.json().catch(() => null), headers: r.headers };
}

let browser;
try {
  await until("the gateway", async () => (await callApi("/api/runs")).status === 200);

  // The page itself: served by the gateway, a strict CSP, no data without a token.
  const page0 = await fetch(gateway + "/console");
  assert.equal(page0.status, 200);
  const csp = page0.headers.get("content-security-policy") || "";
  assert.match(csp, /default-src 'none'/, csp);
  assert.match(csp, /script-src 'self'/, csp);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, csp);

  browser = await chromium.launch({
    executablePath: browserPath,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const cspErrors = [];
  page.on("console", (m) => {
    if (m.type() === "error") cspErrors.push(m.text());
  });
  await page.goto(gateway + "/console");

  // A wrong token: the page says so and shows nothing.
  await page.fill("#token", "not-the-token");
  await page.click("#token-form button");
  await page.waitForFunction(() => document.getElementById("status").textContent.includes("refused"));
  assert.equal(await page.isVisible("#runs-view"), false, "no data with a wrong token");

  // The right one, then a review: the run appears and goes to `draft` live.
  await page.fill("#token", TOKEN);
  await page.click("#token-form button");
  const title1 = `Lookup <img src=x onerror="window.__xss=1"> by email`;
  const r1 = await callApi("/api/reviews", "POST", { repo: REPO, number: 41, base, head: head1, title: title1 });
  assert.equal(r1.status, 202, JSON.stringify(r1.body));
  const job1 = r1.body.job_id;
  const row1 = `tr[data-job="${job1}"]`;
  await page.waitForSelector(row1, { timeout: 30000 });
  await page.waitForFunction((sel) => document.querySelector(sel)?.querySelector(".state")?.textContent === "draft", row1, {
    timeout: 90000,
  });
  await page.screenshot({ path: join(root, "docs/console-runs.png") });

  // One run: the finding the critic rejected, with its reason.
  await page.click(row1);
  await page.waitForSelector("#rejected tbody tr", { timeout: 30000 });
  const reasons = await page.$$eval("#rejected tbody tr td.reason", (tds) => tds.map((t) => t.textContent));
  assert.ok(reasons.some((r) => /^memory M-[0-9a-f]{6}: .*end-to-end suite/.test(r)), JSON.stringify(reasons));
  const kept = await page.$$eval("#kept tbody tr", (trs) => trs.map((t) => t.textContent));
  assert.ok(kept.some((k) => k.includes("sql-string-building")), JSON.stringify(kept));
  const shownTitle = await page.textContent("#run-title");
  assert.ok(shownTitle.includes('<img src=x onerror="window.__xss=1">'), shownTitle);
  assert.equal(await page.evaluate(() => window.__xss), undefined, "a title is text, never HTML");
  // The pipeline strip: the states the run went through, with the time at each hop.
  const hops = await page.$$eval("#pipeline li", (lis) => lis.map((l) => l.textContent));
  assert.equal(hops[0], "queued", JSON.stringify(hops));
  assert.ok(hops.some((h) => /^draft \+[0-9.]+ m?s$/.test(h)), JSON.stringify(hops));
  // The agents table: every agent, with what it spent (the offline engine
  // makes no model or tool calls).
  const spent = await page.$$eval("#agents tbody tr", (trs) =>
    trs.map((tr) => [tr.querySelector(".model-calls")?.textContent, tr.querySelector(".tool-calls")?.textContent, tr.querySelector(".tokens")?.textContent]),
  );
  assert.equal(spent.length, 4, JSON.stringify(spent));
  assert.ok(spent.every(([m, t, k]) => m === "0" && t === "0" && /^\d+ \/ \d+$/.test(k)), JSON.stringify(spent));
  assert.equal(await page.isHidden("#run-posted"), true, "a draft was posted nowhere");
  // What the agents saw: the impact report from the code graph, naming the
  // function the change added.
  await page.waitForSelector("#impact:not([hidden])", { timeout: 15000 });
  const impactText = await page.textContent("#impact");
  assert.match(impactText, /## Impact report/, impactText);
  assert.match(impactText, /`[\w.]*find_user_by_email` \(added\) shop\/auth\.py:\d+/, impactText);
  assert.match(await page.textContent("#impact-note"), /as given to: [a-z]+/);
  await page.screenshot({ path: join(root, "docs/console-run.png"), fullPage: true });

  // Discard it: the state, through the API.
  await page.click("#discard");
  await until("the discard", async () => (await callApi(`/api/runs/${job1}`)).body?.state === "discarded");
  await page.waitForFunction(() => document.getElementById("draft-actions").hidden, null, { timeout: 15000 });

  // A second run, approved and published.
  await page.click("#back");
  const r2 = await callApi("/api/reviews", "POST", { repo: REPO, number: 42, base, head: head2, title: "Admin lookup" });
  assert.equal(r2.status, 202, JSON.stringify(r2.body));
  const job2 = r2.body.job_id;
  const row2 = `tr[data-job="${job2}"]`;
  await page.waitForFunction((sel) => document.querySelector(sel)?.querySelector(".state")?.textContent === "draft", row2, {
    timeout: 90000,
  });
  // The list is paged by the gateway: both runs on the first page, nothing older.
  assert.equal(await page.textContent("#page"), "1–2 of 2");
  assert.equal(await page.isDisabled("#older"), true);
  assert.equal(await page.isDisabled("#newer"), true);
  // Filters, applied by the gateway: drafts awaiting a decision is the second
  // run alone; another repository has none.
  await page.check("#f-drafts");
  await page.waitForFunction(() => document.getElementById("page").textContent === "1–1 of 1", null, { timeout: 10000 });
  assert.deepEqual(await page.$$eval("#runs tbody tr", (trs) => trs.map((t) => t.dataset.job)), [job2]);
  await page.uncheck("#f-drafts");
  await page.fill("#f-repo", "someone/else");
  await page.waitForSelector("#runs-empty:not([hidden])", { timeout: 10000 });
  assert.equal(await page.textContent("#runs-empty"), "No runs match these filters.");
  await page.fill("#f-repo", REPO);
  await page.waitForFunction(() => document.getElementById("page").textContent === "1–2 of 2", null, { timeout: 10000 });
  await page.fill("#f-repo", "");
  await page.click(row2);
  await page.waitForSelector("#draft-actions:not([hidden])");
  await page.click("#approve");
  const approved = await until("the approval", async () => {
    const s = (await callApi(`/api/runs/${job2}`)).body?.state;
    return s === "approved" || s === "published" ? s : null;
  });
  // Where it went: the local sink's place, shown as text (only an http(s)
  // location becomes a link).
  await page.waitForSelector("#run-posted:not([hidden])", { timeout: 15000 });
  assert.equal(await page.textContent("#run-where"), `store:review:${job2}`);
  assert.equal(await page.getAttribute("#run-link", "href"), null);
  console.log(`console: run ${job1} discarded, run ${job2} ${approved}`);

  // The memory page: items imported by `quorum memory import` (another
  // process, the same Redis); retire the active one, approve the suggested one.
  execFileSync(quorum, ["memory", "import", "--repo", REPO, memoryFile], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, REDIS_URL, QUORUM_REDIS_PREFIX: prefix },
  });
  await page.click("#nav-memory");
  await page.fill("#m-repo", REPO);
  await page.click("#memory-form button");
  await page.waitForSelector("#memory tbody tr[data-item]", { timeout: 15000 });
  const items = (await callApi(`/api/memory?repo=${encodeURIComponent(REPO)}`)).body.items;
  const active = items.find((m) => m.kind === "suppress");
  const suggested = items.find((m) => m.kind === "avoid");
  assert.equal(active.status, "active");
  assert.equal(suggested.status, "suggested");
  await page.click(`#memory tr[data-item="${active.id}"] button.retire`);
  await until("the retirement", async () =>
    (await callApi(`/api/memory?repo=${encodeURIComponent(REPO)}`)).body.items.find((m) => m.id === active.id).status === "retired",
  );
  await page.click(`#memory tr[data-item="${suggested.id}"] button.approve`);
  await until("the approval", async () =>
    (await callApi(`/api/memory?repo=${encodeURIComponent(REPO)}`)).body.items.find((m) => m.id === suggested.id).status === "active",
  );
  await page.waitForFunction(
    (id) => document.querySelector(`#memory tr[data-item="${id}"] .state`)?.textContent === "retired",
    active.id,
    { timeout: 10000 },
  );
  await page.screenshot({ path: join(root, "docs/console-memory.png") });

  // Index freshness: ask the indexer for the repository's main branch
  // through the operator API; the fleet page shows the commit its graph is at.
  const reindexed = await callApi("/api/index", "POST", { repo: REPO, ref: "main" });
  assert.equal(reindexed.status, 202, JSON.stringify(reindexed.body));
  const mainSha = git(repo, "rev-parse", "main");
  await until("the index", async () => {
    const r = (await callApi("/api/index")).body?.repositories?.find((x) => x.repo === REPO);
    return r && r.indexed_commit === mainSha ? r : null;
  });

  // Fleet health: every consumer group from the broker, the DLQ count (empty).
  await page.click("#nav-fleet");
  await page.waitForFunction(
    ([repo, sha]) => document.querySelector(`#index tr[data-repo="${repo}"] .indexed`)?.textContent === sha,
    [REPO, mainSha.slice(0, 12)],
    { timeout: 20000 },
  );
  await page.waitForFunction(() => document.querySelectorAll("#groups tbody tr").length === 10, null, { timeout: 20000 });
  const groups = await page.$$eval("#groups tbody tr", (trs) => trs.map((t) => t.cells[0].textContent));
  assert.ok(groups.includes("agent-static") && groups.includes("publisher"), JSON.stringify(groups));
  assert.equal(await page.textContent("#dlq-count"), "0");
  assert.equal(await page.isVisible("#memory-view"), false);
  assert.deepEqual(cspErrors.filter((e) => /Content Security Policy/.test(e)), [], "the page breaks none of its own CSP");
  console.log("console-check: OK");
} catch (e) {
  console.error("FAIL:", e.message);
  console.error("--- quorum up (stderr, last 3000 chars) ---\n" + fleetLog.slice(-3000));
  process.exitCode = 1;
} finally {
  if (browser) await browser.close();
  fleet.kill("SIGTERM");
  redis.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}
