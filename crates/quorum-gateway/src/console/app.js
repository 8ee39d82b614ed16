// Quorum's review console: one page over the operator API (/api/*). The
// token is typed once and kept for this tab only (sessionStorage). Every
// value from the API is set as text (textContent), never as HTML.
"use strict";

const POLL_MS = 1500;
const TOKEN_KEY = "quorum-operator-token";
let timer = null;
let current = null; // the job shown in the run view
let view = "runs"; // runs | run | memory
let lastRepo = ""; // the repository of the newest run, for the memory page

const $ = (id) => document.getElementById(id);

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

function status(text) {
  $("status").textContent = text;
}

async function api(path, method = "GET") {
  const r = await fetch(path, { method, headers: { Authorization: "Bearer " + token() } });
  if (r.status === 401 || r.status === 403) {
    throw new Error("The operator token was refused: check QUORUM_OPERATOR_TOKEN.");
  }
  const body = await r.json().catch(() => null);
  if (!r.ok) {
    if (r.status === 404 && !(body && body.error)) {
      throw new Error("The operator API is off on this gateway (it has no QUORUM_OPERATOR_TOKEN).");
    }
    throw new Error((body && body.error) || "The gateway answered " + r.status + ".");
  }
  return body;
}

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text == null ? "" : String(text);
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}

function clear(tbody) {
  while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
}

function showOnly(which) {
  $("runs-view").hidden = which !== "runs";
  $("run-view").hidden = which !== "run";
  $("memory-view").hidden = which !== "memory";
  $("fleet-view").hidden = which !== "fleet";
}

// Evidence links come from the SCM: only http(s) URLs become links.
function link(parent, url, text) {
  if (/^https?:\/\//.test(url || "")) {
    const a = document.createElement("a");
    a.href = url;
    a.rel = "noopener noreferrer";
    a.textContent = text;
    parent.appendChild(a);
  } else {
    parent.appendChild(document.createTextNode(text));
  }
}

async function loadMemory() {
  const repo = $("m-repo").value.trim() || lastRepo;
  if (!repo) return;
  $("m-repo").value = repo;
  const m = await api("/api/memory?repo=" + encodeURIComponent(repo));
  $("m-threads").textContent = m.threads + " past review threads";
  const tbody = $("memory").tBodies[0];
  clear(tbody);
  for (const it of m.items) {
    const tr = document.createElement("tr");
    tr.dataset.item = it.id;
    cell(tr, it.id);
    cell(tr, it.status, "state state-" + it.status);
    cell(tr, it.kind);
    cell(tr, it.scope);
    const what = it.rule ? "rule " + it.rule : it.title ? "title “" + it.title + "”" : it.pattern ? "pattern " + it.pattern : "";
    cell(tr, what + " — " + it.text + (it.note ? " (" + it.note + ")" : ""));
    const ev = cell(tr, "");
    (it.evidence || []).forEach((e, i) => {
      if (i) ev.appendChild(document.createTextNode(", "));
      link(ev, e.url, "#" + e.pr + " @" + e.who + " " + e.how);
    });
    const actions = cell(tr, "");
    const button = (label, decision) => {
      const b = document.createElement("button");
      b.textContent = label;
      b.className = decision;
      b.addEventListener("click", () => decideMemory(repo, it.id, decision));
      actions.appendChild(b);
    };
    if (it.status !== "active") button("Approve", "approve");
    if (it.status !== "retired") button("Retire", "retire");
    tbody.appendChild(tr);
  }
  $("memory-empty").hidden = m.items.length > 0;
}

async function decideMemory(repo, id, decision) {
  try {
    const r = await fetch("/api/memory/decide", {
      method: "POST",
      headers: { Authorization: "Bearer " + token(), "content-type": "application/json" },
      body: JSON.stringify({ repo, id, decision }),
    });
    const body = await r.json().catch(() => ({}));
    $("m-decision").textContent = r.ok ? id + ": " + body.status : body.error || "the gateway answered " + r.status;
    await loadMemory();
  } catch (e) {
    $("m-decision").textContent = e.message;
  }
}

async function loadFleet() {
  const health = await api("/api/fleet");
  const groups = $("groups").tBodies[0];
  clear(groups);
  for (const g of health.groups) {
    const tr = document.createElement("tr");
    cell(tr, g.group);
    cell(tr, g.topic);
    const up = g.members == null ? "?" : g.members;
    cell(tr, up, g.members === 0 ? "down" : "");
    cell(tr, g.state);
    cell(tr, g.lag);
    groups.appendChild(tr);
  }
  const { repositories } = await api("/api/index");
  const index = $("index").tBodies[0];
  clear(index);
  for (const r of repositories) {
    const tr = document.createElement("tr");
    tr.dataset.repo = r.repo;
    cell(tr, r.repo);
    cell(tr, r.ref);
    cell(tr, fmtAge(Date.now() - r.requested_at_ms) + " ago");
    cell(tr, r.indexed_commit ? r.indexed_commit.slice(0, 12) : "not built yet", "indexed");
    index.appendChild(tr);
  }
  $("dlq-count").textContent = String(health.dlq_messages);
  const dlq = $("dlq").tBodies[0];
  clear(dlq);
  if (health.dlq_messages === 0) return;
  const { messages } = await api("/api/dlq");
  for (const m of messages) {
    const tr = document.createElement("tr");
    tr.className = "dead";
    cell(tr, m.partition + ":" + m.offset);
    cell(tr, m.topic);
    cell(tr, m.group);
    cell(tr, m.kind);
    cell(tr, m.error);
    const td = cell(tr, "");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = "Replay";
    b.addEventListener("click", () => replay(m.partition, m.offset));
    td.appendChild(b);
    dlq.appendChild(tr);
  }
}

async function replay(partition, offset) {
  try {
    const r = await fetch("/api/dlq/replay", {
      method: "POST",
      headers: { Authorization: "Bearer " + token(), "content-type": "application/json" },
      body: JSON.stringify({ partition, offset }),
    });
    const body = await r.json().catch(() => ({}));
    $("dlq-result").textContent = r.ok
      ? "replayed " + body.replayed + " to " + body.to + " for " + body.for
      : body.error || "the gateway answered " + r.status;
  } catch (e) {
    $("dlq-result").textContent = e.message;
  }
}

// The filters as the gateway's query: the store keeps an index per
// repository and state, so a filtered page is paged like the whole list.
function filterQuery() {
  const repo = $("f-repo").value.trim();
  const state = $("f-drafts").checked ? "draft" : $("f-state").value;
  return (repo ? "&repo=" + encodeURIComponent(repo) : "") + (state ? "&state=" + encodeURIComponent(state) : "");
}

// The run list is paged by the gateway (newest first), so a store with
// thousands of runs costs one page per poll, filtered or not.
const PAGE = 100;
let offset = 0;

async function loadRuns() {
  const { runs, total } = await api("/api/runs?limit=" + PAGE + "&offset=" + offset + filterQuery());
  if (offset > 0 && offset >= total) {
    offset = Math.max(0, total - PAGE);
    return loadRuns();
  }
  $("page").textContent = total ? offset + 1 + "–" + (offset + runs.length) + " of " + total : "";
  $("newer").disabled = offset === 0;
  $("older").disabled = offset + runs.length >= total;
  const tbody = $("runs").tBodies[0];
  clear(tbody);
  if (runs.length && runs[0].repo) lastRepo = runs[0].repo;
  for (const run of runs) {
    const tr = document.createElement("tr");
    tr.className = "run";
    tr.dataset.job = run.job_id;
    cell(tr, run.pr ? "#" + run.pr : "—");
    cell(tr, run.repo);
    cell(tr, (run.head_sha || "").slice(0, 10));
    cell(tr, run.state, "state state-" + run.state);
    cell(tr, run.verdict || "");
    cell(tr, run.kept == null ? "" : run.kept);
    cell(tr, run.rejected == null ? "" : run.rejected);
    cell(tr, run.reason || "", run.reason ? "reason" : "");
    tr.addEventListener("click", () => openRun(run.job_id));
    tbody.appendChild(tr);
  }
  $("runs-empty").hidden = runs.length > 0;
  $("runs-empty").textContent = filterQuery() ? "No runs match these filters." : "No runs yet.";
  $("updated").textContent = "updated " + new Date().toLocaleTimeString();
}

// The pipeline strip: each state the run entered, in order, with the time
// since the one before (the time spent at that hop).
function pipeline(timeline) {
  const ol = $("pipeline");
  clear(ol);
  const hops = Object.entries(timeline).sort((a, b) => a[1] - b[1]);
  hops.forEach(([state, at], i) => {
    const li = document.createElement("li");
    li.className = "hop state-" + state;
    const spent = i === 0 ? "" : " +" + fmtMs(at - hops[i - 1][1]);
    li.textContent = state + spent;
    ol.appendChild(li);
  });
}

function fmtAge(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return s + " s";
  if (s < 5400) return Math.round(s / 60) + " min";
  if (s < 129600) return Math.round(s / 3600) + " h";
  return Math.round(s / 86400) + " d";
}

function fmtMs(ms) {
  return ms < 1000 ? ms + " ms" : (ms / 1000).toFixed(1) + " s";
}

function where(f) {
  return f.file + ":" + (f.start_line ? f.start_line + "-" : "") + f.line;
}

// Where the review was posted: a link when it is a web address (only
// http(s): a `javascript:` location must never become a link), else text.
function posted(location) {
  const link = $("run-link");
  const where = $("run-where");
  link.textContent = "";
  link.removeAttribute("href");
  where.textContent = "";
  $("run-posted").hidden = !location;
  if (!location) return;
  if (/^https?:\/\//i.test(location)) {
    link.href = location;
    link.textContent = location;
  } else {
    where.textContent = location;
  }
}

async function loadRun(job) {
  const run = await api("/api/runs/" + encodeURIComponent(job));
  $("run-title").textContent = (run.pr ? "#" + run.pr + " " : "") + (run.title || run.job_id);
  $("run-meta").textContent =
    (run.repo || "") + " · head " + (run.head_sha || "").slice(0, 12) + " · " + run.state + (run.reason ? " — " + run.reason : "");
  $("draft-actions").hidden = run.state !== "draft";
  pipeline(run.timeline || {});
  const review = run.review || {};
  posted(review.location);
  $("run-summary").textContent = review.summary || "";
  const notices = $("notices");
  clear(notices);
  for (const n of review.notices || []) {
    const li = document.createElement("li");
    li.textContent = n;
    notices.appendChild(li);
  }
  const agents = $("agents").tBodies[0];
  clear(agents);
  for (const a of review.agents || []) {
    const tr = document.createElement("tr");
    cell(tr, a.agent);
    cell(tr, a.status);
    cell(tr, a.duration_ms + " ms");
    cell(tr, a.findings);
    const u = a.usage || {};
    cell(tr, (u.model_calls || 0) + (u.replayed_calls ? " (+" + u.replayed_calls + " replayed)" : ""), "model-calls");
    cell(tr, u.tool_calls || 0, "tool-calls");
    cell(tr, (u.prompt_tokens || 0) + " / " + (u.completion_tokens || 0), "tokens");
    cell(tr, a.error || "");
    agents.appendChild(tr);
  }
  const kept = $("kept").tBodies[0];
  clear(kept);
  for (const f of review.kept || []) {
    const tr = document.createElement("tr");
    cell(tr, where(f));
    cell(tr, f.severity);
    cell(tr, Number(f.confidence).toFixed(2));
    cell(tr, f.title + (f.rule ? " [" + f.rule + "]" : ""));
    cell(tr, (f.agreed_by && f.agreed_by.length ? f.agreed_by : [f.agent]).join(", "));
    cell(tr, (f.evidence || []).map((e) => e.source + ": " + e.detail).join("\n"));
    kept.appendChild(tr);
  }
  const rejected = $("rejected").tBodies[0];
  clear(rejected);
  for (const [f, reason] of review.rejected || []) {
    const tr = document.createElement("tr");
    tr.className = "rejected";
    cell(tr, where(f));
    cell(tr, f.severity);
    cell(tr, f.title + (f.rule ? " [" + f.rule + "]" : ""));
    cell(tr, reason, "reason");
    rejected.appendChild(tr);
  }
  impact(run);
  return run;
}

// The impact report the agents were given (graph_rag): what changed, the
// calls it breaks, callers and tests, as in their prompts.
function impact(run) {
  const shown = run.impact;
  $("impact").hidden = !shown;
  $("impact").textContent = shown ? shown.text : "";
  if (shown) {
    $("impact-note").textContent = "The impact report from the code graph, as given to: " + shown.agents.join(", ") + ".";
  } else if (run.context_mode && run.context_mode !== "graph_rag") {
    $("impact-note").textContent = "No impact report: this run's context mode is " + run.context_mode + " (only graph_rag builds one).";
  } else {
    $("impact-note").textContent = "No impact report (yet): no agent has reported one for this run.";
  }
}

async function openRun(job) {
  current = job;
  view = "run";
  $("decision").textContent = "";
  showOnly("run");
  await refresh();
}

async function decide(what) {
  try {
    const r = await api("/api/runs/" + encodeURIComponent(current) + "/" + what, "POST");
    $("decision").textContent = what + ": " + r.status;
  } catch (e) {
    $("decision").textContent = e.message;
  }
}

async function refresh() {
  if (!token()) {
    status("Type the operator token to see runs.");
    showOnly("none");
    return;
  }
  try {
    if (view === "memory") await loadMemory();
    else if (view === "fleet") await loadFleet();
    else if (current) await loadRun(current);
    else await loadRuns();
    showOnly(view);
    status("");
  } catch (e) {
    status(e.message);
    showOnly("none");
  }
}

function start() {
  if (timer) clearInterval(timer);
  showOnly(view);
  refresh();
  timer = setInterval(refresh, POLL_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value);
    $("token").value = "";
    current = null;
    view = "runs";
    start();
  });
  const go = (which) => (ev) => {
    ev.preventDefault();
    current = null;
    view = which;
    showOnly(which);
    refresh();
  };
  $("back").addEventListener("click", go("runs"));
  $("nav-runs").addEventListener("click", go("runs"));
  $("nav-memory").addEventListener("click", go("memory"));
  $("nav-fleet").addEventListener("click", go("fleet"));
  $("memory-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    refresh();
  });
  $("approve").addEventListener("click", () => decide("approve"));
  $("discard").addEventListener("click", () => decide("discard"));
  for (const id of ["f-repo", "f-state", "f-drafts"]) {
    $(id).addEventListener("input", () => {
      offset = 0; // a new filter starts at its newest run
      refresh();
    });
  }
  $("newer").addEventListener("click", () => {
    offset = Math.max(0, offset - PAGE);
    refresh();
  });
  $("older").addEventListener("click", () => {
    offset += PAGE;
    refresh();
  });
  start();
});
