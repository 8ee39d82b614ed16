//! An emulated GitHub REST API on a loopback port: the endpoints Quorum
//! uses, answered from in-memory pull requests and files, with the shapes of
//! GitHub's official description (responses are built from the
//! description's own examples; every request body and response on a
//! described endpoint is validated and any violation recorded).
//!
//! Faults on demand: a status on the next matching call, primary and
//! secondary rate limits, inline comments GitHub cannot place (422), and
//! installation tokens that expire. Endpoints outside the bundled
//! description (check runs, commit statuses, commits, git trees and
//! blobs, GraphQL) follow GitHub's documentation by hand and
//! are not validated.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Value, json};

use crate::github_history::History;
pub use crate::github_history::{PastReviewComment, ThreadState};
use crate::openapi::OpenApi;

/// A file of an emulated pull request (`pulls/{n}/files`).
#[derive(Debug, Clone)]
pub struct EmulatedFile {
    pub filename: String,
    pub status: String,
    /// `None`: GitHub sends no patch (binary or too large).
    pub patch: Option<String>,
}

/// An emulated pull request.
#[derive(Debug, Clone)]
pub struct EmulatedPr {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub author: String,
    pub base_sha: String,
    pub head_sha: String,
    pub draft: bool,
    pub labels: Vec<String>,
    pub files: Vec<EmulatedFile>,
}

/// A review as GitHub stored it.
#[derive(Debug, Clone)]
pub struct PostedReview {
    pub repo: String,
    pub number: u64,
    pub id: u64,
    pub commit_id: String,
    pub event: String,
    pub body: String,
    /// The request's `comments`, as sent.
    pub comments: Vec<Value>,
}

/// A fault for the next call whose method matches and whose path contains
/// a string.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Answer with this status (and a GitHub-shaped error body).
    Status(u16),
    /// 403 "secondary rate limit" with `Retry-After`.
    SecondaryRateLimit { retry_after: u64 },
    /// 403 with `x-ratelimit-remaining: 0` and a reset `in_secs` away.
    PrimaryRateLimit { in_secs: u64 },
    /// 200 with the body cut off halfway (a dropped connection behind a
    /// proxy that already sent the status).
    Truncated,
    /// The request is carried out, but the answer comes `secs` later (a
    /// client with a shorter timeout gives up on a write that happened).
    Stall { secs: u64 },
}

/// The header `route` sets to have `handle` cut the body (never sent).
const TRUNCATE: &str = "x-emulator-truncate";
/// The header `route` sets to have `handle` answer late (never sent).
const STALL: &str = "x-emulator-stall";

enum Auth {
    Token(String),
    App {
        app_id: u64,
        key: jsonwebtoken::DecodingKey,
    },
}

struct EmuState {
    api: OpenApi,
    auth: Auth,
    installation_id: u64,
    issued: HashMap<String, bool>,
    prs: HashMap<(String, u64), EmulatedPr>,
    files: HashMap<(String, String, String), String>,
    refs: HashMap<(String, String), String>,
    permissions: HashMap<(String, String), String>,
    reviews: Vec<PostedReview>,
    check_runs: Vec<Value>,
    statuses: Vec<(String, String, Value)>,
    faults: VecDeque<(Method, String, Fault)>,
    unresolvable: HashSet<(String, u64)>,
    log: Vec<(String, String, u16)>,
    violations: Vec<String>,
    next_id: u64,
    history: History,
    /// Added to every answer (a benchmark's realistic round trip).
    latency: std::time::Duration,
}

/// The running emulator.
pub struct GitHubEmulator {
    pub addr: SocketAddr,
    state: Arc<Mutex<EmuState>>,
    _task: tokio::task::JoinHandle<()>,
}

fn error(status: u16, message: &str) -> (u16, Value, Vec<(String, String)>) {
    (
        status,
        json!({"message": message, "documentation_url": "https://docs.github.com/rest"}),
        vec![],
    )
}

/// RFC 3339 for a Unix time (UTC), without a date library.
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Blob ids: the commit and path, hex-encoded (a real id is a hash).
fn hex_id(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex_id(s: &str) -> String {
    let bytes: Vec<u8> = (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub(crate) fn query(uri: &Uri) -> HashMap<String, String> {
    uri.query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub(crate) fn decode_path(p: &str) -> String {
    let bytes = p.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| p.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        if let Some(b) = escaped {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl EmuState {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// `Ok(true)` for the App's JWT, `Ok(false)` for an accepted token.
    fn authenticate(&self, headers: &HeaderMap) -> Result<bool, &'static str> {
        let bearer = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("token ")))
            .ok_or("Requires authentication")?;
        match &self.auth {
            Auth::Token(t) if t == bearer => Ok(false),
            Auth::Token(_) => Err("Bad credentials"),
            Auth::App { app_id, key } => {
                if let Some(valid) = self.issued.get(bearer) {
                    return if *valid { Ok(false) } else { Err("Bad credentials") };
                }
                let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
                v.set_required_spec_claims(&["exp"]);
                let claims = jsonwebtoken::decode::<Value>(bearer, key, &v).map_err(|e| {
                    eprintln!("emulated GitHub: JWT refused: {e}");
                    "Bad credentials"
                })?;
                let iss = &claims.claims["iss"];
                if iss.as_u64() == Some(*app_id) || iss.as_str() == Some(&app_id.to_string()) {
                    Ok(true)
                } else {
                    Err("Bad credentials")
                }
            }
        }
    }

    fn take_fault(&mut self, method: &Method, path: &str) -> Option<Fault> {
        let i = self
            .faults
            .iter()
            .position(|(m, p, _)| m == method && path.contains(p.as_str()))?;
        self.faults.remove(i).map(|(_, _, f)| f)
    }

    fn pr_json(&self, repo: &str, pr: &EmulatedPr) -> Value {
        let mut v = self.api.example("pull-request");
        // The description's example predates the required team `type`.
        v["requested_teams"] = json!([]);
        v["number"] = json!(pr.number);
        v["title"] = json!(pr.title);
        v["body"] = json!(pr.body);
        v["draft"] = json!(pr.draft);
        v["state"] = json!("open");
        v["user"]["login"] = json!(pr.author);
        v["user"]["type"] = json!(if pr.author.ends_with("[bot]") { "Bot" } else { "User" });
        v["head"]["sha"] = json!(pr.head_sha);
        v["base"]["sha"] = json!(pr.base_sha);
        v["base"]["repo"]["full_name"] = json!(repo);
        let merged = self.history.is_merged(repo, pr.number);
        v["merged"] = json!(merged);
        v["state"] = json!(if merged { "closed" } else { "open" });
        v["merged_at"] = if merged {
            json!("2026-01-01T00:00:00Z")
        } else {
            Value::Null
        };
        let label = v["labels"][0].clone();
        v["labels"] = Value::Array(
            pr.labels
                .iter()
                .map(|l| {
                    let mut x = label.clone();
                    x["name"] = json!(l);
                    x
                })
                .collect(),
        );
        v
    }

    fn route(
        &mut self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &Value,
    ) -> (u16, Value, Vec<(String, String)>) {
        let path = uri.path().to_string();
        if let Some(f) = self.take_fault(method, &path) {
            return match f {
                Fault::Status(s) => error(s, "Emulated failure"),
                Fault::Truncated => {
                    let (status, value, mut extra) = self.route(method, uri, headers, body);
                    extra.push((TRUNCATE.into(), "1".into()));
                    (status, value, extra)
                }
                Fault::Stall { secs } => {
                    let (status, value, mut extra) = self.route(method, uri, headers, body);
                    extra.push((STALL.into(), secs.to_string()));
                    (status, value, extra)
                }
                Fault::SecondaryRateLimit { retry_after } => (
                    403,
                    json!({"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                           "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}),
                    vec![("retry-after".into(), retry_after.to_string())],
                ),
                Fault::PrimaryRateLimit { in_secs } => (
                    403,
                    json!({"message": "API rate limit exceeded", "documentation_url": "https://docs.github.com/rest"}),
                    vec![
                        ("x-ratelimit-remaining".into(), "0".into()),
                        ("x-ratelimit-reset".into(), (now() + in_secs).to_string()),
                    ],
                ),
            };
        }
        let as_app = match self.authenticate(headers) {
            Ok(a) => a,
            Err(m) => return error(401, m),
        };
        let seg: Vec<String> = path.trim_matches('/').split('/').map(decode_path).collect();
        let s: Vec<&str> = seg.iter().map(String::as_str).collect();
        let q = query(uri);
        // App-level endpoints take the JWT; everything else an installation token.
        match (method.as_str(), s.as_slice()) {
            ("POST", ["app", "installations", id, "access_tokens"]) => {
                if !as_app {
                    return error(401, "A JSON web token could not be decoded");
                }
                if id.parse::<u64>().ok() != Some(self.installation_id) {
                    return error(404, "Not Found");
                }
                let n = self.id();
                let token = format!("ghs_emulated{n}");
                self.issued.insert(token.clone(), true);
                let mut v = self.api.example("installation-token");
                v["token"] = json!(token);
                v["expires_at"] = json!(rfc3339(now() + 3600));
                return (201, v, vec![]);
            }
            ("GET", ["repos", _, _, "installation"]) => {
                if !as_app {
                    return error(401, "A JSON web token could not be decoded");
                }
                let mut v = self.api.example("installation");
                v["id"] = json!(self.installation_id);
                return (200, v, vec![]);
            }
            _ if as_app => {
                return error(
                    403,
                    "Resource not accessible by integration (use an installation token)",
                );
            }
            _ => {}
        }
        if let ("POST", ["graphql"]) = (method.as_str(), s.as_slice()) {
            return self.history.graphql(body);
        }
        let repo = match s.as_slice() {
            ["repos", o, r, ..] => format!("{o}/{r}"),
            _ => return error(404, "Not Found"),
        };
        let pr_of = |st: &EmuState, n: &str| {
            n.parse::<u64>()
                .ok()
                .and_then(|n| st.prs.get(&(repo.clone(), n)).cloned())
        };
        let page = q.get("page").and_then(|p| p.parse::<usize>().ok()).unwrap_or(1).max(1);
        let per_page = q
            .get("per_page")
            .and_then(|p| p.parse::<usize>().ok())
            .unwrap_or(30)
            .clamp(1, 100);
        let paged = |items: Vec<Value>| -> (u16, Value, Vec<(String, String)>) {
            let total = items.len();
            let start = (page - 1) * per_page;
            let chunk: Vec<Value> = items.into_iter().skip(start).take(per_page).collect();
            let mut headers = vec![];
            if start + per_page < total {
                headers.push((
                    "link".into(),
                    format!(
                        "<{path}?per_page={per_page}&page={}>; rel=\"next\", <{path}?per_page={per_page}&page={}>; rel=\"last\"",
                        page + 1,
                        total.div_ceil(per_page)
                    ),
                ));
            }
            (200, Value::Array(chunk), headers)
        };
        let past_pr = |st: &EmuState, n: &str| {
            n.parse::<u64>()
                .ok()
                .filter(|n| st.history.prs(&repo).contains(n) && pr_of(st, &n.to_string()).is_none())
        };
        match (method.as_str(), &s[3..]) {
            ("GET", ["pulls", "comments"]) => paged(self.history.repo_comments(&self.api, &repo, &q)),
            ("GET", ["pulls", "comments", id, "reactions"]) => {
                match id
                    .parse()
                    .ok()
                    .and_then(|id| self.history.reactions(&self.api, &repo, id, &q))
                {
                    Some(items) => paged(items),
                    None => error(404, "Not Found"),
                }
            }
            ("GET", ["pulls", n]) if past_pr(self, n).is_some() => {
                let number = past_pr(self, n).expect("checked");
                let pr = EmulatedPr {
                    number,
                    title: format!("Past change {number}"),
                    body: String::new(),
                    author: "octocat".into(),
                    base_sha: "0".repeat(40),
                    head_sha: "1".repeat(40),
                    draft: false,
                    labels: vec![],
                    files: vec![],
                };
                (200, self.pr_json(&repo, &pr), vec![])
            }
            ("GET", ["pulls", n, "comments"]) if past_pr(self, n).is_some() => {
                let number = past_pr(self, n).expect("checked");
                paged(self.history.pr_comments(&self.api, &repo, number))
            }
            ("GET", ["pulls", n]) => match pr_of(self, n) {
                Some(pr) => (200, self.pr_json(&repo, &pr), vec![]),
                None => error(404, "Not Found"),
            },
            ("GET", ["pulls", n, "files"]) => match pr_of(self, n) {
                Some(pr) => {
                    let template = self.api.example("diff-entry-items")[0].clone();
                    let items = pr
                        .files
                        .iter()
                        .map(|f| {
                            let mut v = template.clone();
                            v["filename"] = json!(f.filename);
                            v["status"] = json!(f.status);
                            let changes = f.patch.as_deref().map_or(0, |p| {
                                p.lines().filter(|l| l.starts_with('+') || l.starts_with('-')).count()
                            });
                            v["changes"] = json!(changes);
                            match &f.patch {
                                Some(p) => v["patch"] = json!(p),
                                None => {
                                    v.as_object_mut().expect("object").remove("patch");
                                }
                            }
                            v
                        })
                        .collect();
                    paged(items)
                }
                None => error(404, "Not Found"),
            },
            ("GET", ["pulls", n, "reviews"]) => match pr_of(self, n) {
                Some(pr) => {
                    let template = self.api.example("pull-request-review-items")[0].clone();
                    let items = self
                        .reviews
                        .iter()
                        .filter(|r| r.repo == repo && r.number == pr.number)
                        .map(|r| {
                            let mut v = template.clone();
                            v["id"] = json!(r.id);
                            v["body"] = json!(r.body);
                            v["commit_id"] = json!(r.commit_id);
                            v["state"] = json!("COMMENTED");
                            v
                        })
                        .collect();
                    paged(items)
                }
                None => error(404, "Not Found"),
            },
            ("GET", ["pulls", n, "comments"]) => match pr_of(self, n) {
                Some(pr) => {
                    let template = self.api.example("pull-request-review-comment-items")[0].clone();
                    let items = self
                        .reviews
                        .iter()
                        .filter(|r| r.repo == repo && r.number == pr.number)
                        .flat_map(|r| r.comments.iter().map(move |c| (r.id, c)))
                        .map(|(review, c)| {
                            let mut v = template.clone();
                            v["pull_request_review_id"] = json!(review);
                            v["body"] = c["body"].clone();
                            v["path"] = c["path"].clone();
                            v["line"] = c["line"].clone();
                            v
                        })
                        .chain(self.history.pr_comments(&self.api, &repo, pr.number))
                        .collect();
                    paged(items)
                }
                None => error(404, "Not Found"),
            },
            ("POST", ["pulls", n, "reviews"]) => {
                let Some(pr) = pr_of(self, n) else {
                    return error(404, "Not Found");
                };
                let comments = body["comments"].as_array().cloned().unwrap_or_default();
                for c in &comments {
                    let path = c["path"].as_str().unwrap_or("");
                    let line = c["line"].as_u64().unwrap_or(0);
                    if !pr.files.iter().any(|f| f.filename == path) {
                        return (
                            422,
                            json!({"message": "Unprocessable Entity", "errors": ["Path could not be resolved"], "status": "422"}),
                            vec![],
                        );
                    }
                    if self.unresolvable.contains(&(path.to_string(), line)) {
                        return (
                            422,
                            json!({"message": "Unprocessable Entity", "errors": ["Line could not be resolved"], "status": "422"}),
                            vec![],
                        );
                    }
                }
                let id = self.id();
                let review = PostedReview {
                    repo: repo.clone(),
                    number: pr.number,
                    id,
                    commit_id: body["commit_id"].as_str().unwrap_or("").to_string(),
                    event: body["event"].as_str().unwrap_or("PENDING").to_string(),
                    body: body["body"].as_str().unwrap_or("").to_string(),
                    comments,
                };
                let mut v = self.api.example("pull-request-review");
                v["id"] = json!(id);
                v["body"] = json!(review.body);
                v["commit_id"] = json!(review.commit_id);
                v["state"] = json!("COMMENTED");
                v["html_url"] = json!(format!(
                    "https://github.com/{repo}/pull/{}#pullrequestreview-{id}",
                    pr.number
                ));
                self.reviews.push(review);
                (200, v, vec![])
            }
            ("GET", ["contents", rest @ ..]) => {
                let file = rest.join("/");
                let sha = q.get("ref").cloned().unwrap_or_default();
                match self.files.get(&(repo.clone(), sha, file.clone())) {
                    Some(text) => {
                        let mut v = self.api.example("content-file-response-if-content-is-a-file");
                        v["content"] = json!(base64::engine::general_purpose::STANDARD.encode(text));
                        v["size"] = json!(text.len());
                        v["path"] = json!(file);
                        v["name"] = json!(file.rsplit('/').next().unwrap_or(&file));
                        (200, v, vec![])
                    }
                    None => error(404, "Not Found"),
                }
            }
            ("GET", ["commits", git_ref]) => match self.refs.get(&(repo.clone(), git_ref.to_string())) {
                Some(sha) => (200, json!({"sha": sha}), vec![]),
                None => error(404, "No commit found for SHA"),
            },
            ("GET", ["git", "trees", sha]) => {
                let entries: Vec<Value> = self
                    .files
                    .iter()
                    .filter(|((r, c, _), _)| *r == repo && c == sha)
                    .map(|((_, c, p), text)| {
                        json!({"path": p, "mode": "100644", "type": "blob", "size": text.len(),
                               "sha": hex_id(&format!("{c}:{p}"))})
                    })
                    .collect();
                (200, json!({"sha": sha, "tree": entries, "truncated": false}), vec![])
            }
            ("GET", ["git", "blobs", id]) => {
                let key = unhex_id(id);
                let found = key
                    .split_once(':')
                    .and_then(|(c, p)| self.files.get(&(repo.clone(), c.to_string(), p.to_string())));
                match found {
                    Some(text) => (
                        200,
                        json!({"sha": id, "encoding": "base64", "size": text.len(),
                               "content": base64::engine::general_purpose::STANDARD.encode(text)}),
                        vec![],
                    ),
                    None => error(404, "Not Found"),
                }
            }
            ("GET", ["collaborators", user, "permission"]) => {
                match self.permissions.get(&(repo.clone(), user.to_string())) {
                    Some(p) => {
                        let mut v = self
                            .api
                            .example("repository-collaborator-permission-response-if-user-has-admin-permissions");
                        v["permission"] = json!(p);
                        v["role_name"] = json!(p);
                        v["user"]["login"] = json!(user);
                        // The description's example predates the required `user.role_name`.
                        v["user"]["role_name"] = json!(p);
                        (200, v, vec![])
                    }
                    None => error(404, "Not Found"),
                }
            }
            ("GET", ["commits", sha, "check-runs"]) => {
                let name = q.get("check_name").map(|n| decode_path(n));
                let runs: Vec<Value> = self
                    .check_runs
                    .iter()
                    .filter(|r| r["repo"] == json!(repo) && r["head_sha"] == json!(sha))
                    .filter(|r| name.as_deref().is_none_or(|n| r["name"] == json!(n)))
                    .cloned()
                    .collect();
                (200, json!({"total_count": runs.len(), "check_runs": runs}), vec![])
            }
            ("POST", ["check-runs"]) => {
                if matches!(self.auth, Auth::Token(_)) {
                    return error(403, "Resource not accessible by personal access token");
                }
                let id = self.id();
                let mut run = body.clone();
                run["id"] = json!(id);
                run["repo"] = json!(repo);
                self.check_runs.push(run.clone());
                (201, run, vec![])
            }
            ("PATCH", ["check-runs", id]) => {
                let id: u64 = id.parse().unwrap_or(0);
                match self.check_runs.iter_mut().find(|r| r["id"] == json!(id)) {
                    Some(run) => {
                        for (k, v) in body.as_object().into_iter().flatten() {
                            run[k] = v.clone();
                        }
                        (200, run.clone(), vec![])
                    }
                    None => error(404, "Not Found"),
                }
            }
            ("POST", ["statuses", sha]) => {
                self.statuses.push((repo.clone(), sha.to_string(), body.clone()));
                (201, body.clone(), vec![])
            }
            _ => error(404, "Not Found"),
        }
    }
}

/// The emulator's answer to one request (under its lock): status, body,
/// extra headers and how long to hold it back.
fn answer(
    state: &Mutex<EmuState>,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
) -> (u16, String, Vec<(String, String)>, Option<u64>) {
    let mut st = state.lock().expect("emulator state");
    let path = uri.path().to_string();
    let parsed: Value = if body.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => {
                st.violations.push(format!("{method} {path}: body is not JSON: {e}"));
                Value::Null
            }
        }
    };
    if !parsed.is_null() {
        let problems = st.api.check_request(method.as_str(), &path, &parsed);
        st.violations.extend(problems);
    }
    let (status, value, extra) = st.route(method, uri, headers, &parsed);
    if st.api.operation(method.as_str(), &path).is_some() && status < 300 {
        let problems = st.api.check_response(method.as_str(), &path, status, &value);
        st.violations.extend(problems);
    }
    st.log.push((method.to_string(), uri.to_string(), status));
    let mut text = value.to_string();
    if extra.iter().any(|(k, _)| k == TRUNCATE) {
        text.truncate(text.len() / 2);
    }
    let stall = extra
        .iter()
        .find(|(k, _)| k == STALL)
        .and_then(|(_, v)| v.parse::<u64>().ok());
    (status, text, extra, stall)
}

async fn handle(
    State(state): State<Arc<Mutex<EmuState>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let latency = state.lock().expect("emulator state").latency;
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let (status, text, extra, stall) = answer(&state, &method, &uri, &headers, &body);
    if let Some(secs) = stall {
        tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
    }
    let mut resp = (
        StatusCode::from_u16(status).expect("valid status"),
        [("content-type", "application/json; charset=utf-8")],
        text,
    )
        .into_response();
    for (k, v) in extra.into_iter().filter(|(k, _)| k != TRUNCATE && k != STALL) {
        resp.headers_mut().insert(
            axum::http::HeaderName::from_bytes(k.as_bytes()).expect("header name"),
            v.parse().expect("header value"),
        );
    }
    resp
}

impl GitHubEmulator {
    async fn start(auth: Auth) -> GitHubEmulator {
        let state = Arc::new(Mutex::new(EmuState {
            api: OpenApi::github_review_subset(),
            auth,
            installation_id: 4242,
            issued: HashMap::new(),
            prs: HashMap::new(),
            files: HashMap::new(),
            refs: HashMap::new(),
            permissions: HashMap::new(),
            reviews: vec![],
            check_runs: vec![],
            statuses: vec![],
            faults: VecDeque::new(),
            unresolvable: HashSet::new(),
            log: vec![],
            violations: vec![],
            next_id: 1000,
            history: History::default(),
            latency: std::time::Duration::ZERO,
        }));
        let app = Router::new().fallback(handle).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        GitHubEmulator {
            addr,
            state,
            _task: task,
        }
    }

    /// GitHub accepting one personal access token.
    pub async fn with_token(token: &str) -> GitHubEmulator {
        Self::start(Auth::Token(token.into())).await
    }

    /// GitHub with one App installed everywhere, whose JWTs verify with the
    /// test key pair in `fixtures/github/` ([`test_app_private_key`]).
    pub async fn with_app(app_id: u64) -> GitHubEmulator {
        let key = jsonwebtoken::DecodingKey::from_rsa_pem(include_bytes!("../fixtures/github/test-app-key.pub.pem"))
            .expect("test public key");
        Self::start(Auth::App { app_id, key }).await
    }

    /// The API base URL to configure Quorum with.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn with<T>(&self, f: impl FnOnce(&mut EmuState) -> T) -> T {
        f(&mut self.state.lock().expect("emulator state"))
    }

    pub fn set_pr(&self, repo: &str, pr: EmulatedPr) {
        self.with(|s| s.prs.insert((repo.into(), pr.number), pr));
    }

    /// A file at a commit (contents, trees, blobs).
    pub fn add_file(&self, repo: &str, sha: &str, path: &str, text: &str) {
        self.with(|s| s.files.insert((repo.into(), sha.into(), path.into()), text.into()));
    }

    /// A branch or tag name that resolves to `sha`.
    pub fn set_ref(&self, repo: &str, git_ref: &str, sha: &str) {
        self.with(|s| s.refs.insert((repo.into(), git_ref.into()), sha.into()));
    }

    /// A review comment already on a pull request (review memory's input).
    pub fn add_past_comment(&self, repo: &str, comment: PastReviewComment) {
        self.with(|s| s.history.add(repo, comment));
    }

    /// The GraphQL state of the thread whose first comment is `root`.
    pub fn set_thread(&self, repo: &str, root: u64, state: ThreadState) {
        self.with(|s| s.history.set_thread(repo, root, state));
    }

    /// Marks a pull request merged.
    pub fn set_merged(&self, repo: &str, pr: u64) {
        self.with(|s| s.history.set_merged(repo, pr));
    }

    /// `permission`: admin, maintain, write, triage or read.
    pub fn set_permission(&self, repo: &str, user: &str, permission: &str) {
        self.with(|s| s.permissions.insert((repo.into(), user.into()), permission.into()));
    }

    /// Every answer waits this long first (GitHub's round trip is 50–300 ms).
    pub fn set_latency(&self, latency: std::time::Duration) {
        self.with(|s| s.latency = latency);
    }

    /// The next call with `method` whose path contains `path_part` fails so.
    pub fn fail_next(&self, method: &str, path_part: &str, fault: Fault) {
        let m = Method::from_bytes(method.as_bytes()).expect("method");
        self.with(|s| s.faults.push_back((m, path_part.into(), fault)));
    }

    /// A review with an inline comment on this line gets GitHub's 422.
    pub fn refuse_line(&self, path: &str, line: u64) {
        self.with(|s| s.unresolvable.insert((path.into(), line)));
    }

    /// Every installation token issued so far stops working (401).
    pub fn expire_tokens(&self) {
        self.with(|s| s.issued.values_mut().for_each(|v| *v = false));
    }

    pub fn reviews(&self) -> Vec<PostedReview> {
        self.with(|s| s.reviews.clone())
    }

    pub fn check_runs(&self) -> Vec<Value> {
        self.with(|s| s.check_runs.clone())
    }

    /// Commit statuses: (repo, sha, body).
    pub fn statuses(&self) -> Vec<(String, String, Value)> {
        self.with(|s| s.statuses.clone())
    }

    /// Every call: (method, path and query, status).
    pub fn requests(&self) -> Vec<(String, String, u16)> {
        self.with(|s| s.log.clone())
    }

    /// Requests or responses that do not match GitHub's description.
    pub fn violations(&self) -> Vec<String> {
        self.with(|s| s.violations.clone())
    }

    /// How many installation tokens were issued.
    pub fn tokens_issued(&self) -> usize {
        self.with(|s| s.issued.len())
    }

    /// The installation tokens issued so far (secrets the fleet holds).
    pub fn issued_tokens(&self) -> Vec<String> {
        self.with(|s| s.issued.keys().cloned().collect())
    }
}

/// The private half of the emulator's test App key (a throwaway key made
/// for these tests; it signs nothing anywhere else).
pub fn test_app_private_key() -> &'static str {
    include_str!("../fixtures/github/test-app-key.pem")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_800_000_000), "2027-01-15T08:00:00Z");
        assert_eq!(decode_path("a%20b"), "a b");
    }
}
