//! An emulated GitLab REST API (`/api/v4`) on a loopback port: the endpoints
//! Quorum uses, answered from in-memory merge requests and files, with the
//! fields GitLab's documentation gives (bundled excerpts: the merge-request
//! and note hooks, the MR diffs API, the discussions API with its position
//! rules). GitLab publishes no machine-readable description of these
//! endpoints that the project bundles, so the rules are checked here by
//! hand, each against the documentation's words, and every violation is
//! recorded:
//! - a discussion's `position` has `position_type`, the three SHAs of a
//!   version of the MR, `old_path` and `new_path`; an added line carries
//!   `new_line` only, a removed line `old_line` only, a context line both;
//! - a commit status's `state` is one GitLab accepts; a repeated state is
//!   refused as GitLab refuses it ("Cannot transition status …").
//!
//! As on GitLab, a position whose SHAs are not a version of the MR is
//! stored as a plain note (`type: null`), and a line outside the diff is a
//! 400 naming `line_code`. Faults on demand: a status on the next matching
//! call, a 429 with `Retry-After`.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::github::{decode_path, query};
use crate::gitlab_history::History;
pub use crate::gitlab_history::{PastDiscussion, PastMr, PastNote};

/// A changed file of an emulated merge request (`merge_requests/:iid/diffs`).
#[derive(Debug, Clone)]
pub struct EmulatedDiff {
    pub old_path: String,
    pub new_path: String,
    /// Hunks only, starting at `@@` (as GitLab sends them); empty with
    /// `too_large`.
    pub diff: String,
    pub new_file: bool,
    pub deleted_file: bool,
    pub renamed_file: bool,
    pub too_large: bool,
}

impl EmulatedDiff {
    /// A modified file.
    pub fn modified(path: &str, diff: &str) -> EmulatedDiff {
        EmulatedDiff {
            old_path: path.into(),
            new_path: path.into(),
            diff: diff.into(),
            new_file: false,
            deleted_file: false,
            renamed_file: false,
            too_large: false,
        }
    }
}

/// An emulated merge request; every head it had is a version.
#[derive(Debug, Clone)]
pub struct EmulatedMr {
    pub iid: u64,
    pub title: String,
    pub description: String,
    pub author: String,
    pub draft: bool,
    pub state: String,
    pub labels: Vec<String>,
    /// The merge base and the target branch's head when the version was made.
    pub base_sha: String,
    pub start_sha: String,
    pub head_sha: String,
    pub diffs: Vec<EmulatedDiff>,
}

/// A note as GitLab stored it (a discussion's first note, or a plain note).
#[derive(Debug, Clone)]
pub struct PostedNote {
    pub project: String,
    pub iid: u64,
    pub id: u64,
    pub body: String,
    /// `Some("DiffNote")` for an inline comment GitLab could place.
    pub kind: Option<String>,
    /// The request's `position`, as sent.
    pub position: Option<Value>,
}

/// A fault for the next call whose method matches and whose path contains
/// a string.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Answer with this status (and a GitLab-shaped error body).
    Status(u16),
    /// 429 with `Retry-After` and `RateLimit-*` headers.
    RateLimit { retry_after: u64 },
}

type Answer = (u16, Value, Vec<(String, String)>);
/// A version of an MR: (base, start, head).
type Version = (String, String, String);

struct EmuState {
    token: String,
    mrs: HashMap<(String, u64), EmulatedMr>,
    /// Heads each MR had, oldest first: (base, start, head).
    versions: HashMap<(String, u64), Vec<Version>>,
    files: HashMap<(String, String, String), String>,
    refs: HashMap<(String, String), String>,
    users: HashMap<String, u64>,
    access: HashMap<(String, u64), u32>,
    notes: Vec<PostedNote>,
    statuses: Vec<(String, String, Value)>,
    faults: VecDeque<(Method, String, Fault)>,
    refused_lines: Vec<(String, u64)>,
    log: Vec<(String, String, u16)>,
    violations: Vec<String>,
    next_id: u64,
    history: History,
}

/// The running emulator.
pub struct GitLabEmulator {
    pub addr: SocketAddr,
    state: Arc<Mutex<EmuState>>,
    _task: tokio::task::JoinHandle<()>,
}

fn error(status: u16, message: &str) -> Answer {
    (status, json!({ "message": message }), vec![])
}

/// The (old, new) line numbers and kind (`+`, `-`, ` `) of every line of a
/// diff's hunks — read here independently of Quorum's own parser.
fn diff_lines(diff: &str) -> Vec<(Option<u64>, Option<u64>, char)> {
    let mut out = Vec::new();
    let (mut old, mut new) = (0u64, 0u64);
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("@@ -") {
            let mut nums = rest.split(' ');
            let start = |s: Option<&str>| {
                s.and_then(|s| s.trim_start_matches(['-', '+']).split(',').next()?.parse::<u64>().ok())
                    .unwrap_or(1)
            };
            old = start(nums.next());
            new = start(nums.next());
            continue;
        }
        match line.chars().next() {
            Some('+') => {
                out.push((None, Some(new), '+'));
                new += 1;
            }
            Some('-') => {
                out.push((Some(old), None, '-'));
                old += 1;
            }
            Some('\\') => {}
            _ => {
                out.push((Some(old), Some(new), ' '));
                old += 1;
                new += 1;
            }
        }
    }
    out
}

impl EmuState {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn take_fault(&mut self, method: &Method, path: &str) -> Option<Fault> {
        let i = self
            .faults
            .iter()
            .position(|(m, part, _)| m == method && path.contains(part.as_str()))?;
        self.faults.remove(i).map(|(_, _, f)| f)
    }

    fn mr_json(&self, project: &str, mr: &EmulatedMr) -> Value {
        json!({
            "id": mr.iid + 1000, "iid": mr.iid, "project_id": 1,
            "title": mr.title, "description": mr.description,
            "state": mr.state, "draft": mr.draft, "work_in_progress": mr.draft,
            "author": {"id": self.users.get(&mr.author).copied().unwrap_or(1), "username": mr.author, "name": mr.author},
            "labels": mr.labels,
            "sha": mr.head_sha,
            "source_branch": "feature", "target_branch": "main",
            "web_url": format!("http://gitlab.example/{project}/-/merge_requests/{}", mr.iid),
            "diff_refs": {"base_sha": mr.base_sha, "head_sha": mr.head_sha, "start_sha": mr.start_sha},
        })
    }

    /// A page of `items` with GitLab's pagination headers.
    fn page(items: Vec<Value>, uri: &Uri) -> Answer {
        let q = query(uri);
        let per_page: usize = q
            .get("per_page")
            .and_then(|v| v.parse().ok())
            .unwrap_or(20)
            .clamp(1, 100);
        let page: usize = q.get("page").and_then(|v| v.parse().ok()).unwrap_or(1).max(1);
        let total = items.len();
        let slice: Vec<Value> = items.into_iter().skip((page - 1) * per_page).take(per_page).collect();
        let next = if page * per_page < total {
            (page + 1).to_string()
        } else {
            String::new()
        };
        (
            200,
            Value::Array(slice),
            vec![
                ("x-page".into(), page.to_string()),
                ("x-per-page".into(), per_page.to_string()),
                ("x-total".into(), total.to_string()),
                ("x-next-page".into(), next),
            ],
        )
    }

    /// Checks a discussion's position against GitLab's rules; `Err` is the
    /// 400 GitLab answers for a line that is not in the diff.
    fn check_position(&mut self, project: &str, mr: &EmulatedMr, p: &Value) -> Result<bool, Answer> {
        for key in [
            "position_type",
            "base_sha",
            "start_sha",
            "head_sha",
            "old_path",
            "new_path",
        ] {
            if !p[key].is_string() {
                self.violations.push(format!(
                    "discussion position without `{key}` (required with a position)"
                ));
            }
        }
        if p["position_type"] != "text" {
            self.violations.push(format!(
                "position_type {} (Quorum comments on text)",
                p["position_type"]
            ));
        }
        let (new_line, old_line) = (p["new_line"].as_u64(), p["old_line"].as_u64());
        let path = p["new_path"].as_str().unwrap_or("");
        if self
            .refused_lines
            .iter()
            .any(|(f, l)| f == path && Some(*l) == new_line)
        {
            return Err(error(
                400,
                "400 Bad request - Note {:line_code=>[\"can't be blank\", \"must be a valid line code\"]}",
            ));
        }
        let Some(diff) = mr.diffs.iter().find(|d| d.new_path == path) else {
            return Err(error(400, "400 Bad request - Note {:line_code=>[\"can't be blank\"]}"));
        };
        if p["old_path"].as_str() != Some(diff.old_path.as_str()) {
            self.violations.push(format!(
                "position old_path {} is not the file's old path {}",
                p["old_path"], diff.old_path
            ));
        }
        let lines = diff_lines(&diff.diff);
        let found = lines.iter().find(|(o, n, _)| match (old_line, new_line) {
            (_, Some(nl)) => *n == Some(nl),
            (Some(ol), None) => *o == Some(ol) && n.is_none(),
            (None, None) => false,
        });
        let Some(&(o, n, kind)) = found else {
            return Err(error(
                400,
                "400 Bad request - Note {:line_code=>[\"must be a valid line code\"]}",
            ));
        };
        // "To create a thread on an added line, use position[new_line] and
        // don't include position[old_line]" — and so on for the others.
        let rule_ok = match kind {
            '+' => old_line.is_none() && new_line == n,
            '-' => new_line.is_none() && old_line == o,
            _ => old_line == o && new_line == n,
        };
        if !rule_ok {
            self.violations.push(format!(
                "position on a `{kind}` line of {path} has old_line {old_line:?} / new_line {new_line:?}; GitLab's rule wants {:?} / {:?}",
                if kind == '+' { None } else { o },
                if kind == '-' { None } else { n },
            ));
        }
        // A position must name a version of the MR; otherwise GitLab keeps
        // the note but not its place.
        let key = (project.to_string(), mr.iid);
        let named = self.versions.get(&key).is_some_and(|vs| {
            vs.iter().any(|(b, s, h)| {
                p["base_sha"] == b.as_str() && p["start_sha"] == s.as_str() && p["head_sha"] == h.as_str()
            })
        });
        Ok(named)
    }

    fn route(&mut self, method: &Method, uri: &Uri, headers: &HeaderMap, body: &Value) -> Answer {
        if headers.get("private-token").and_then(|v| v.to_str().ok()) != Some(self.token.as_str()) {
            return error(401, "401 Unauthorized");
        }
        let path = uri.path().to_string();
        if let Some(fault) = self.take_fault(method, &path) {
            return match fault {
                Fault::Status(s) => error(s, &format!("{s} emulated failure")),
                Fault::RateLimit { retry_after } => (
                    429,
                    json!({"message": "Retry later"}),
                    vec![
                        ("retry-after".into(), retry_after.to_string()),
                        ("ratelimit-remaining".into(), "0".into()),
                    ],
                ),
            };
        }
        let Some(rest) = path.strip_prefix("/api/v4/") else {
            return error(404, "404 Not Found");
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let m = method.as_str();
        if let ("GET", ["users"]) = (m, parts.as_slice()) {
            let name = query(uri).get("username").cloned().unwrap_or_default();
            let found: Vec<Value> = self
                .users
                .get(&name)
                .map(|id| json!({"id": id, "username": name, "state": "active"}))
                .into_iter()
                .collect();
            return (200, Value::Array(found), vec![]);
        }
        let ["projects", id, tail @ ..] = parts.as_slice() else {
            return error(404, "404 Not Found");
        };
        // The project id arrives URL-encoded (`group%2Fproject`).
        let project = decode_path(id);
        let past = |st: &EmuState, iid: &str| {
            iid.parse::<u64>()
                .ok()
                .filter(|n| st.history.has(&project, *n) && st.mr(&project, iid).is_none())
        };
        match (m, tail) {
            ("GET", ["merge_requests"]) => match self.history.list(&project, &query(uri)) {
                Ok(items) => Self::page(items, uri),
                Err(e) => {
                    self.violations.push(format!("GET merge_requests: {e}"));
                    error(400, &e)
                }
            },
            ("GET", ["merge_requests", iid]) if past(self, iid).is_some() => {
                let n = past(self, iid).expect("checked");
                (200, self.history.mr(&project, n).expect("known"), vec![])
            }
            ("GET", ["merge_requests", iid, "discussions"]) => {
                let n: u64 = iid.parse().unwrap_or(0);
                match self.history.discussions(&project, n, &self.users) {
                    Some(items) => Self::page(items, uri),
                    None => error(404, "404 Not found"),
                }
            }
            ("GET", ["merge_requests", iid, "notes", note, "award_emoji"]) => {
                let (n, note) = (iid.parse().unwrap_or(0), note.parse().unwrap_or(0));
                match self.history.awards(&project, n, note, &self.users) {
                    Some(items) => Self::page(items, uri),
                    None => error(404, "404 Not found"),
                }
            }
            ("GET", ["merge_requests", iid]) => match self.mr(&project, iid) {
                Some(mr) => (200, self.mr_json(&project, &mr), vec![]),
                None => error(404, "404 Not found"),
            },
            ("GET", ["merge_requests", iid, "diffs"]) => match self.mr(&project, iid) {
                Some(mr) => {
                    let items = mr
                        .diffs
                        .iter()
                        .map(|d| {
                            json!({
                                "old_path": d.old_path, "new_path": d.new_path,
                                "a_mode": "100644", "b_mode": "100644",
                                "diff": if d.too_large { "" } else { d.diff.as_str() },
                                "new_file": d.new_file, "renamed_file": d.renamed_file, "deleted_file": d.deleted_file,
                                "generated_file": false, "collapsed": false, "too_large": d.too_large,
                            })
                        })
                        .collect();
                    Self::page(items, uri)
                }
                None => error(404, "404 Not found"),
            },
            ("GET", ["merge_requests", iid, "versions"]) => {
                let Some(mr) = self.mr(&project, iid) else {
                    return error(404, "404 Not found");
                };
                let vs = self
                    .versions
                    .get(&(project.clone(), mr.iid))
                    .cloned()
                    .unwrap_or_default();
                let items = vs
                    .iter()
                    .rev()
                    .enumerate()
                    .map(|(i, (b, s, h))| {
                        json!({"id": 5000 + i, "head_commit_sha": h, "base_commit_sha": b, "start_commit_sha": s,
                               "state": "collected", "real_size": mr.diffs.len().to_string()})
                    })
                    .collect();
                Self::page(items, uri)
            }
            ("GET", ["merge_requests", iid, "notes"]) => {
                let iid: u64 = iid.parse().unwrap_or(0);
                let items = self
                    .notes
                    .iter()
                    .filter(|n| n.project == project && n.iid == iid)
                    .map(|n| json!({"id": n.id, "body": n.body, "type": n.kind, "system": false, "author": {"username": "quorum"}}))
                    .collect();
                Self::page(items, uri)
            }
            ("POST", ["merge_requests", iid, "notes"]) => {
                let Some(mr) = self.mr(&project, iid) else {
                    return error(404, "404 Not found");
                };
                let Some(text) = body["body"].as_str().filter(|b| !b.is_empty()) else {
                    self.violations.push("a note without `body`".into());
                    return error(400, "400 Bad request - body is missing");
                };
                let id = self.id();
                self.notes.push(PostedNote {
                    project: project.clone(),
                    iid: mr.iid,
                    id,
                    body: text.into(),
                    kind: None,
                    position: None,
                });
                (
                    201,
                    json!({"id": id, "body": text, "type": null, "noteable_iid": mr.iid}),
                    vec![],
                )
            }
            ("POST", ["merge_requests", iid, "discussions"]) => {
                let Some(mr) = self.mr(&project, iid) else {
                    return error(404, "404 Not found");
                };
                let Some(text) = body["body"].as_str().filter(|b| !b.is_empty()) else {
                    self.violations.push("a discussion without `body`".into());
                    return error(400, "400 Bad request - body is missing");
                };
                let placed = match body.get("position") {
                    None => false,
                    Some(p) => match self.check_position(&project, &mr, p) {
                        Ok(named) => named,
                        Err(answer) => return answer,
                    },
                };
                let id = self.id();
                let kind = placed.then(|| "DiffNote".to_string());
                self.notes.push(PostedNote {
                    project: project.clone(),
                    iid: mr.iid,
                    id,
                    body: text.into(),
                    kind: kind.clone(),
                    position: body.get("position").cloned(),
                });
                (
                    201,
                    json!({"id": format!("{id:040x}"), "individual_note": false,
                           "notes": [{"id": id, "type": kind, "body": text, "position": body.get("position")}]}),
                    vec![],
                )
            }
            ("POST", ["statuses", sha]) => {
                let state = body["state"].as_str().unwrap_or("");
                if !["pending", "running", "success", "failed", "canceled", "skipped"].contains(&state) {
                    self.violations.push(format!("commit status state `{state}`"));
                    return error(400, "400 Bad request - state does not have a valid value");
                }
                let name = body["name"].as_str().unwrap_or("default").to_string();
                let last = self
                    .statuses
                    .iter()
                    .rev()
                    .find(|(p, s, v)| p == &project && s == sha && v["name"] == name.as_str())
                    .map(|(_, _, v)| v["state"].as_str().unwrap_or("").to_string());
                if last.as_deref() == Some(state) {
                    return error(400, &format!("Cannot transition status via :{state} from :{state}"));
                }
                self.statuses.push((project.clone(), sha.to_string(), body.clone()));
                (
                    201,
                    json!({"id": self.next_id, "sha": sha, "status": state, "name": name}),
                    vec![],
                )
            }
            ("GET", ["members", "all", user]) => {
                let user: u64 = user.parse().unwrap_or(0);
                match self.access.get(&(project.clone(), user)) {
                    Some(level) => (
                        200,
                        json!({"id": user, "access_level": level, "state": "active"}),
                        vec![],
                    ),
                    None => error(404, "404 Not found"),
                }
            }
            ("GET", ["repository", "commits", r]) => {
                let r = decode_path(r);
                let sha = if r.len() == 40 && r.chars().all(|c| c.is_ascii_hexdigit()) {
                    Some(r.clone())
                } else {
                    self.refs.get(&(project.clone(), r.clone())).cloned()
                };
                match sha {
                    Some(sha) => (200, json!({"id": sha, "short_id": &sha[..8]}), vec![]),
                    None => error(404, "404 Commit Not Found"),
                }
            }
            ("GET", ["repository", "files", file, "raw"]) => {
                let file = decode_path(file);
                let r = query(uri).get("ref").cloned().unwrap_or_default();
                match self.files.get(&(project.clone(), r, file)) {
                    Some(text) => (200, Value::String(text.clone()), vec![("x-raw".into(), "1".into())]),
                    None => error(404, "404 File Not Found"),
                }
            }
            ("GET", ["repository", "tree"]) => {
                let r = query(uri).get("ref").cloned().unwrap_or_default();
                let mut items: Vec<Value> = self
                    .files
                    .keys()
                    .filter(|(p, sha, _)| p == &project && sha == &r)
                    .map(|(_, sha, path)| {
                        let id: String = format!("{sha}:{path}").bytes().map(|b| format!("{b:02x}")).collect();
                        json!({"id": id, "name": path.rsplit('/').next(), "type": "blob", "path": path, "mode": "100644"})
                    })
                    .collect();
                items.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
                Self::page(items, uri)
            }
            ("GET", ["repository", "blobs", id, "raw"]) => {
                let bytes: Vec<u8> = (0..id.len() / 2)
                    .filter_map(|i| u8::from_str_radix(id.get(2 * i..2 * i + 2)?, 16).ok())
                    .collect();
                let key = String::from_utf8_lossy(&bytes).into_owned();
                let found = key
                    .split_once(':')
                    .and_then(|(sha, path)| self.files.get(&(project.clone(), sha.to_string(), path.to_string())));
                match found {
                    Some(text) => (200, Value::String(text.clone()), vec![("x-raw".into(), "1".into())]),
                    None => error(404, "404 Blob Not Found"),
                }
            }
            _ => error(404, "404 Not Found"),
        }
    }

    fn mr(&self, project: &str, iid: &str) -> Option<EmulatedMr> {
        let iid: u64 = iid.parse().ok()?;
        self.mrs.get(&(project.to_string(), iid)).cloned()
    }
}

async fn handle(
    State(state): State<Arc<Mutex<EmuState>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut st = state.lock().expect("emulator state");
    let parsed: Value = if body.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                st.violations
                    .push(format!("{method} {}: body is not JSON: {e}", uri.path()));
                Value::Null
            }
        }
    };
    let (status, value, extra) = st.route(&method, &uri, &headers, &parsed);
    st.log.push((method.to_string(), uri.to_string(), status));
    // Raw file and blob reads answer the bytes, not JSON.
    let raw = extra.iter().any(|(k, _)| k == "x-raw");
    let (content_type, text) = match (&value, raw) {
        (Value::String(s), true) => ("text/plain; charset=utf-8", s.clone()),
        _ => ("application/json", value.to_string()),
    };
    let mut resp = (
        StatusCode::from_u16(status).expect("valid status"),
        [("content-type", content_type)],
        text,
    )
        .into_response();
    for (k, v) in extra.into_iter().filter(|(k, _)| k != "x-raw") {
        resp.headers_mut().insert(
            axum::http::HeaderName::from_bytes(k.as_bytes()).expect("header name"),
            v.parse().expect("header value"),
        );
    }
    resp
}

impl GitLabEmulator {
    /// GitLab accepting one access token (`PRIVATE-TOKEN`).
    pub async fn with_token(token: &str) -> GitLabEmulator {
        let state = Arc::new(Mutex::new(EmuState {
            token: token.into(),
            mrs: HashMap::new(),
            versions: HashMap::new(),
            files: HashMap::new(),
            refs: HashMap::new(),
            users: HashMap::new(),
            access: HashMap::new(),
            notes: vec![],
            statuses: vec![],
            faults: VecDeque::new(),
            refused_lines: vec![],
            log: vec![],
            violations: vec![],
            next_id: 2000,
            history: History::default(),
        }));
        let app = Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        GitLabEmulator {
            addr,
            state,
            _task: task,
        }
    }

    /// The instance URL to configure Quorum with (`GITLAB_URL`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn with<T>(&self, f: impl FnOnce(&mut EmuState) -> T) -> T {
        f(&mut self.state.lock().expect("emulator state"))
    }

    /// Sets (or updates) a merge request; a new head becomes a new version.
    pub fn set_mr(&self, project: &str, mr: EmulatedMr) {
        self.with(|s| {
            let key = (project.to_string(), mr.iid);
            let v = (mr.base_sha.clone(), mr.start_sha.clone(), mr.head_sha.clone());
            let versions = s.versions.entry(key.clone()).or_default();
            if !versions.contains(&v) {
                versions.push(v);
            }
            s.mrs.insert(key, mr);
        });
    }

    /// A file at a commit (raw files, trees, blobs).
    pub fn add_file(&self, project: &str, sha: &str, path: &str, text: &str) {
        self.with(|s| s.files.insert((project.into(), sha.into(), path.into()), text.into()));
    }

    /// A branch or tag name that resolves to `sha`.
    pub fn set_ref(&self, project: &str, git_ref: &str, sha: &str) {
        self.with(|s| s.refs.insert((project.into(), git_ref.into()), sha.into()));
    }

    /// A user with an access level on a project (30 Developer, 20 Reporter…).
    pub fn set_member(&self, project: &str, username: &str, access_level: u32) {
        self.with(|s| {
            let next = 100 + s.users.len() as u64;
            let id = *s.users.entry(username.into()).or_insert(next);
            s.access.insert((project.into(), id), access_level);
        });
    }

    /// A past merge request with its discussions (review memory's input).
    pub fn add_past_mr(&self, project: &str, mr: PastMr) {
        self.with(|s| s.history.add(project, mr));
    }

    /// The next call with `method` whose path contains `path_part` fails so.
    pub fn fail_next(&self, method: &str, path_part: &str, fault: Fault) {
        let m = Method::from_bytes(method.as_bytes()).expect("method");
        self.with(|s| s.faults.push_back((m, path_part.into(), fault)));
    }

    /// Discussions on this new-side line are refused (400 `line_code`).
    pub fn refuse_line(&self, path: &str, line: u64) {
        self.with(|s| s.refused_lines.push((path.into(), line)));
    }

    pub fn notes(&self) -> Vec<PostedNote> {
        self.with(|s| s.notes.clone())
    }

    /// (project, sha, request body) of every commit status set.
    pub fn statuses(&self) -> Vec<(String, String, Value)> {
        self.with(|s| s.statuses.clone())
    }

    /// (method, URI, status) of every call.
    pub fn requests(&self) -> Vec<(String, String, u16)> {
        self.with(|s| s.log.clone())
    }

    /// Every broken documented rule seen.
    pub fn violations(&self) -> Vec<String> {
        self.with(|s| s.violations.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines_number_both_sides() {
        let lines = diff_lines("@@ -1,3 +1,3 @@\n keep\n-old\n+new\n tail\n\\ No newline at end of file\n");
        assert_eq!(
            lines,
            vec![
                (Some(1), Some(1), ' '),
                (Some(2), None, '-'),
                (None, Some(2), '+'),
                (Some(3), Some(3), ' ')
            ]
        );
    }
}
