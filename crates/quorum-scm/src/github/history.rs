//! GitHub's review history for review memory (F-MEM-1): the repo-wide
//! review-comment sweep (`GET /repos/{o}/{r}/pulls/comments?sort=updated
//! &direction=asc&since=`), each pull request read whole (its comments,
//! `merged`, the GraphQL `reviewThreads { isResolved isOutdated }` that
//! REST does not serve, and who reacted to Quorum's comments), with the
//! client's retry and rate-limit policy around every call.
//!
//! Cached (method + URL + body): a merged pull request's metadata, which
//! cannot change; repository permissions, for one run.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use http::Method;
use quorum_memory::ingest::{HistoryError, HistorySource, PrHistory, SweepPage, ThreadInfo};
use quorum_memory::{Association, PastComment, Person, Reaction, Reactions};
use serde_json::{Value, json};

use super::{ApiError, GitHub};
use crate::http_cache::HttpCache;

const PER_PAGE: u32 = 100;
/// A pull request with more comment pages than this is read in part, and
/// says so.
const MAX_PAGES: u32 = 50;

const THREADS_QUERY: &str = "query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 50, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { isResolved isOutdated resolvedBy { login } comments(first: 100) { nodes { databaseId } } }
      }
    }
  }
}";

/// GitHub as a [`HistorySource`].
pub struct GitHubHistory {
    gh: Arc<GitHub>,
    cache: HttpCache,
    permissions: Mutex<HashMap<String, Association>>,
}

impl GitHubHistory {
    pub fn new(gh: Arc<GitHub>, cache: HttpCache) -> GitHubHistory {
        GitHubHistory {
            gh,
            cache,
            permissions: Mutex::default(),
        }
    }

    async fn get(&self, repo: &str, path: &str) -> Result<super::ApiResponse, HistoryError> {
        self.gh.call(repo, Method::GET, path, None).await.map_err(to_history)
    }

    async fn merged(&self, repo: &str, pr: u64) -> Result<bool, HistoryError> {
        let path = format!("/repos/{repo}/pulls/{pr}");
        let key = HttpCache::key("GET", &format!("{}{path}", self.gh.config().api_url), None);
        if self.cache.get(&key).is_some() {
            return Ok(true);
        }
        let v: Value = self.get(repo, &path).await?.json().map_err(to_history)?;
        let merged = match (v.get("merged").and_then(Value::as_bool), v.get("merged_at")) {
            (Some(m), _) => m,
            (None, Some(at)) => !at.is_null(),
            (None, None) => {
                return Err(HistoryError::Invalid(format!(
                    "pull request #{pr}: the answer has neither `merged` nor `merged_at`"
                )));
            }
        };
        if merged {
            self.cache.put(&key, "merged");
        }
        Ok(merged)
    }

    async fn comments(&self, repo: &str, pr: u64) -> Result<(Vec<PastComment>, Vec<String>), HistoryError> {
        let (mut comments, mut malformed) = (vec![], vec![]);
        for page in 1..=MAX_PAGES {
            let r = self
                .get(
                    repo,
                    &format!("/repos/{repo}/pulls/{pr}/comments?per_page={PER_PAGE}&page={page}"),
                )
                .await?;
            let items: Vec<Value> = r.json().map_err(to_history)?;
            for v in &items {
                match parse_comment(v) {
                    Ok(c) => comments.push(c),
                    Err(e) => malformed.push(e),
                }
            }
            if !r.has_next_page() {
                return Ok((comments, malformed));
            }
        }
        malformed.push(format!(
            "more than {MAX_PAGES} pages of comments; the rest was not read"
        ));
        Ok((comments, malformed))
    }

    async fn threads(&self, repo: &str, pr: u64) -> Result<Vec<ThreadInfo>, HistoryError> {
        let (owner, name) = repo.split_once('/').expect("validated owner/name");
        let mut out = vec![];
        let mut after = Value::Null;
        for _ in 0..MAX_PAGES {
            let body = json!({
                "query": THREADS_QUERY,
                "variables": {"owner": owner, "name": name, "number": pr, "after": after},
            });
            let r = self
                .gh
                .call(repo, Method::POST, "/graphql", Some(&body))
                .await
                .map_err(to_history)?;
            let v: Value = r.json().map_err(to_history)?;
            if let Some(errors) = v.get("errors").and_then(Value::as_array).filter(|e| !e.is_empty()) {
                let msgs: Vec<&str> = errors.iter().filter_map(|e| e["message"].as_str()).collect();
                return Err(HistoryError::Invalid(format!(
                    "pull request #{pr}: GraphQL reviewThreads: {}",
                    msgs.join("; ")
                )));
            }
            let conn = &v["data"]["repository"]["pullRequest"]["reviewThreads"];
            let Some(nodes) = conn["nodes"].as_array() else {
                return Err(HistoryError::Invalid(format!(
                    "pull request #{pr}: GraphQL reviewThreads has no `nodes`"
                )));
            };
            for n in nodes {
                let resolved_by = match n["resolvedBy"]["login"].as_str() {
                    Some(login) => Some(Person {
                        login: login.to_string(),
                        association: self.association(repo, login).await?,
                    }),
                    None => None,
                };
                out.push(ThreadInfo {
                    comment_ids: n["comments"]["nodes"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|c| c["databaseId"].as_u64()).collect())
                        .unwrap_or_default(),
                    resolved: n["isResolved"].as_bool().unwrap_or(false),
                    outdated: n["isOutdated"].as_bool().unwrap_or(false),
                    resolved_by,
                });
            }
            if conn["pageInfo"]["hasNextPage"].as_bool() != Some(true) {
                break;
            }
            after = conn["pageInfo"]["endCursor"].clone();
        }
        Ok(out)
    }

    /// Who gave the 👍 and 👎 on one comment.
    async fn reactions(&self, repo: &str, comment: u64) -> Result<Vec<Reaction>, HistoryError> {
        let mut out = vec![];
        for page in 1..=MAX_PAGES {
            let r = self
                .get(
                    repo,
                    &format!("/repos/{repo}/pulls/comments/{comment}/reactions?per_page={PER_PAGE}&page={page}"),
                )
                .await?;
            let items: Vec<Value> = r.json().map_err(to_history)?;
            for v in items {
                let content = v["content"].as_str().unwrap_or("");
                let Some(login) = v["user"]["login"].as_str() else {
                    continue;
                };
                if content == "+1" || content == "-1" {
                    out.push(Reaction {
                        who: Person {
                            login: login.to_string(),
                            association: self.association(repo, login).await?,
                        },
                        content: content.to_string(),
                    });
                }
            }
            if !r.has_next_page() {
                break;
            }
        }
        Ok(out)
    }

    /// A person known only by login (a reaction, a resolver): their
    /// repository permission says whether they speak for the team.
    async fn association(&self, repo: &str, login: &str) -> Result<Association, HistoryError> {
        if let Some(a) = self.permissions.lock().expect("lock").get(login) {
            return Ok(*a);
        }
        let valid = !login.is_empty() && login.chars().all(|c| c.is_ascii_alphanumeric() || "-[]".contains(c));
        let a = if !valid {
            Association::None
        } else {
            match self
                .gh
                .call(
                    repo,
                    Method::GET,
                    &format!("/repos/{repo}/collaborators/{login}/permission"),
                    None,
                )
                .await
            {
                Ok(r) => {
                    let v: Value = r.json().map_err(to_history)?;
                    Association::from_permission(v["permission"].as_str().unwrap_or(""))
                }
                Err(e) if e.status() == Some(404) => Association::None,
                Err(e) => return Err(to_history(e)),
            }
        };
        self.permissions.lock().expect("lock").insert(login.to_string(), a);
        Ok(a)
    }
}

#[async_trait]
impl HistorySource for GitHubHistory {
    async fn sweep_page(&self, repo: &str, since: Option<&str>, page: u32) -> Result<SweepPage, HistoryError> {
        quorum_core::job::validate_repo_name(repo).map_err(HistoryError::Invalid)?;
        let mut path =
            format!("/repos/{repo}/pulls/comments?sort=updated&direction=asc&per_page={PER_PAGE}&page={page}");
        if let Some(s) = since {
            let t = chrono::DateTime::parse_from_rfc3339(s)
                .map_err(|e| HistoryError::Invalid(format!("`since` {s} is not an RFC 3339 time: {e}")))?;
            path.push_str(&format!("&since={}", t.to_utc().format("%Y-%m-%dT%H:%M:%SZ")));
        }
        let r = self.get(repo, &path).await?;
        let items: Vec<Value> = r
            .json()
            .map_err(|e| HistoryError::Invalid(format!("sweep page {page}: {e}")))?;
        let mut out = SweepPage {
            has_next: r.has_next_page(),
            ..Default::default()
        };
        for v in &items {
            match (pr_number(v), v["updated_at"].as_str()) {
                (Some(pr), Some(at)) => out.items.push((pr, at.to_string())),
                _ => out.malformed.push(format!(
                    "sweep page {page}: comment {} has no pull request or `updated_at`",
                    v["id"]
                )),
            }
        }
        Ok(out)
    }

    async fn pull_request(&self, repo: &str, pr: u64) -> Result<PrHistory, HistoryError> {
        let merged = self.merged(repo, pr).await?;
        let (comments, malformed) = self.comments(repo, pr).await?;
        let threads = self.threads(repo, pr).await?;
        let mut reactions = BTreeMap::new();
        for c in comments.iter().filter(|c| {
            c.in_reply_to.is_none()
                && (c.reactions.plus_one + c.reactions.minus_one) > 0
                && quorum_memory::feedback::quorum_markers(&c.body).is_some()
        }) {
            reactions.insert(c.id, self.reactions(repo, c.id).await?);
        }
        Ok(PrHistory {
            merged,
            comments,
            malformed,
            threads,
            reactions,
        })
    }
}

fn to_history(e: ApiError) -> HistoryError {
    match e {
        ApiError::Unavailable { .. } => HistoryError::Unavailable(e.to_string()),
        ApiError::Status { status: 403, .. } if e.to_string().contains("rate limit") => {
            HistoryError::Unavailable(e.to_string())
        }
        _ => HistoryError::Invalid(e.to_string()),
    }
}

/// The PR number from `pull_request_url` (`…/pulls/{n}`).
fn pr_number(v: &Value) -> Option<u64> {
    v["pull_request_url"].as_str()?.rsplit('/').next()?.parse().ok()
}

/// One REST review comment; the error names the comment and the field.
pub fn parse_comment(v: &Value) -> Result<PastComment, String> {
    let id = v["id"]
        .as_u64()
        .ok_or_else(|| format!("a comment without a numeric `id`: {}", short(v)))?;
    let bad = |field: &str| format!("comment {id}: `{field}` is missing or not what GitHub describes");
    let text = |field: &str| v[field].as_str().map(str::to_string).ok_or_else(|| bad(field));
    let at = |field: &str| -> Result<String, String> {
        let s = text(field)?;
        chrono::DateTime::parse_from_rfc3339(&s).map_err(|_| bad(field))?;
        Ok(s)
    };
    // A deleted account shows as `user: null` (GitHub's "ghost").
    let (author, is_bot) = match v["user"].as_object() {
        Some(u) => (
            u.get("login")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("user.login"))?
                .to_string(),
            u.get("type").and_then(Value::as_str) == Some("Bot"),
        ),
        None => ("ghost".to_string(), false),
    };
    let association = Association::parse(
        v["author_association"]
            .as_str()
            .ok_or_else(|| bad("author_association"))?,
    )
    .map_err(|e| format!("comment {id}: {e}"))?;
    let line = |field: &str| v[field].as_u64().and_then(|n| u32::try_from(n).ok());
    Ok(PastComment {
        id,
        in_reply_to: v["in_reply_to_id"].as_u64(),
        pr: pr_number(v).ok_or_else(|| bad("pull_request_url"))?,
        author,
        is_bot,
        association,
        body: text("body")?,
        path: text("path")?,
        line: line("line"),
        original_line: line("original_line"),
        diff_hunk: v["diff_hunk"].as_str().unwrap_or("").to_string(),
        created_at: at("created_at")?,
        updated_at: at("updated_at")?,
        url: text("html_url")?,
        reactions: Reactions {
            plus_one: v["reactions"]["+1"].as_u64().unwrap_or(0) as u32,
            minus_one: v["reactions"]["-1"].as_u64().unwrap_or(0) as u32,
        },
    })
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    s.chars().take(80).collect()
}
