//! GitLab's review history for review memory (F-MEM-1): merge requests
//! updated since the cursor (`GET /projects/:id/merge_requests?state=all
//! &order_by=updated_at&sort=asc&updated_after=`), each read whole — its
//! diff discussions (GitLab serves `resolved` and `resolved_by` in REST),
//! the award emoji on Quorum's notes, and each person's access level.
//!
//! GitLab has no "outdated" flag: a discussion started on an older head of
//! the merge request than its last is taken as outdated (the code moved
//! under it), which is coarser than GitHub's `isOutdated`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use quorum_memory::ingest::{HistoryError, HistorySource, PrHistory, SweepPage, ThreadInfo};
use quorum_memory::{Association, PastComment, Person, Reaction, Reactions};
use reqwest::Method;
use serde_json::Value;

use super::client::project_id;
use super::{GitLab, GitLabError};
use crate::http_cache::HttpCache;

const MAX_PAGES: u32 = 50;

/// GitLab as a [`HistorySource`].
pub struct GitLabHistory {
    gl: Arc<GitLab>,
    cache: HttpCache,
    access: Mutex<HashMap<u64, Association>>,
}

fn to_history(e: GitLabError) -> HistoryError {
    match e {
        GitLabError::Unavailable { .. } => HistoryError::Unavailable(e.to_string()),
        _ => HistoryError::Invalid(e.to_string()),
    }
}

impl GitLabHistory {
    pub fn new(gl: Arc<GitLab>, cache: HttpCache) -> GitLabHistory {
        GitLabHistory {
            gl,
            cache,
            access: Mutex::default(),
        }
    }

    /// `(merged, head sha, web url)`; a merged MR's answer is cached.
    async fn mr(&self, pid: &str, iid: u64) -> Result<(bool, String, String), HistoryError> {
        let path = format!("/projects/{pid}/merge_requests/{iid}");
        let key = HttpCache::key("GET", &format!("{}/api/v4{path}", self.gl.config().url), None);
        let cached = self.cache.get(&key);
        let v: Value = match &cached {
            Some(text) => serde_json::from_str(text).map_err(|e| HistoryError::Invalid(e.to_string()))?,
            None => self
                .gl
                .call(Method::GET, &path, None)
                .await
                .map_err(to_history)?
                .json()
                .map_err(to_history)?,
        };
        let state = v["state"]
            .as_str()
            .ok_or_else(|| HistoryError::Invalid(format!("merge request !{iid}: no `state`")))?;
        let merged = state == "merged";
        if merged && cached.is_none() {
            self.cache.put(&key, &v.to_string());
        }
        let head = v["sha"]
            .as_str()
            .or(v["diff_refs"]["head_sha"].as_str())
            .unwrap_or("")
            .to_string();
        let web = v["web_url"].as_str().unwrap_or("").to_string();
        Ok((merged, head, web))
    }

    async fn association(&self, pid: &str, user_id: u64) -> Result<Association, HistoryError> {
        if let Some(a) = self.access.lock().expect("lock").get(&user_id) {
            return Ok(*a);
        }
        let a = match self
            .gl
            .call(Method::GET, &format!("/projects/{pid}/members/all/{user_id}"), None)
            .await
        {
            Ok(r) => {
                let v: Value = r.json().map_err(to_history)?;
                Association::from_gitlab_access(v["access_level"].as_u64().unwrap_or(0) as u32)
            }
            Err(GitLabError::Status { status: 404, .. }) => Association::None,
            Err(e) => return Err(to_history(e)),
        };
        self.access.lock().expect("lock").insert(user_id, a);
        Ok(a)
    }

    async fn person(&self, pid: &str, user: &Value) -> Result<Person, HistoryError> {
        let login = user["username"].as_str().unwrap_or("ghost").to_string();
        let association = match user["id"].as_u64() {
            Some(id) => self.association(pid, id).await?,
            None => Association::None,
        };
        Ok(Person { login, association })
    }
}

#[async_trait]
impl HistorySource for GitLabHistory {
    async fn sweep_page(&self, repo: &str, since: Option<&str>, page: u32) -> Result<SweepPage, HistoryError> {
        quorum_core::job::validate_project_path(repo).map_err(HistoryError::Invalid)?;
        let pid = project_id(repo);
        let mut path =
            format!("/projects/{pid}/merge_requests?state=all&order_by=updated_at&sort=asc&per_page=100&page={page}");
        if let Some(s) = since {
            let t = chrono::DateTime::parse_from_rfc3339(s)
                .map_err(|e| HistoryError::Invalid(format!("`since` {s} is not an RFC 3339 time: {e}")))?;
            path.push_str(&format!("&updated_after={}", t.to_utc().format("%Y-%m-%dT%H:%M:%SZ")));
        }
        let r = self.gl.call(Method::GET, &path, None).await.map_err(to_history)?;
        let items: Vec<Value> = r
            .json()
            .map_err(|e| HistoryError::Invalid(format!("sweep page {page}: {e}")))?;
        let mut out = SweepPage {
            has_next: r.next_page().is_some(),
            ..Default::default()
        };
        for v in &items {
            match (v["iid"].as_u64(), v["updated_at"].as_str()) {
                (Some(iid), Some(at)) => out.items.push((iid, at.to_string())),
                _ => out.malformed.push(format!(
                    "sweep page {page}: a merge request without `iid` or `updated_at`"
                )),
            }
        }
        Ok(out)
    }

    async fn pull_request(&self, repo: &str, iid: u64) -> Result<PrHistory, HistoryError> {
        let pid = project_id(repo);
        let (merged, head, web) = self.mr(&pid, iid).await?;
        let discussions: Vec<Value> = self
            .gl
            .all_pages(&format!("/projects/{pid}/merge_requests/{iid}/discussions"), MAX_PAGES)
            .await
            .map_err(to_history)?;
        let mut out = PrHistory {
            merged,
            ..Default::default()
        };
        for d in &discussions {
            let Some(notes) = d["notes"].as_array() else {
                out.malformed.push(format!("discussion {}: no `notes`", d["id"]));
                continue;
            };
            // Diff discussions only: general MR comments are not on code.
            let diff: Vec<&Value> = notes
                .iter()
                .filter(|n| n["type"] == "DiffNote" && n["system"] != true)
                .collect();
            let Some(first) = diff.first() else { continue };
            let root_id = first["id"].as_u64();
            let mut ids = vec![];
            for n in &diff {
                match self.note(&pid, iid, &web, n, root_id).await? {
                    Ok(c) => {
                        ids.push(c.id);
                        out.comments.push(c);
                    }
                    Err(m) => out.malformed.push(m),
                }
            }
            let resolved = diff.iter().all(|n| n["resolvable"] != true || n["resolved"] == true);
            let resolved_by = match first["resolved_by"].as_object() {
                Some(_) if resolved => Some(self.person(&pid, &first["resolved_by"]).await?),
                _ => None,
            };
            out.threads.push(ThreadInfo {
                comment_ids: ids,
                resolved,
                outdated: !head.is_empty() && first["position"]["head_sha"].as_str().is_some_and(|h| h != head),
                resolved_by,
            });
        }
        // Who gave 👍/👎 on Quorum's notes (GitLab notes carry no roll-up).
        let roots: Vec<u64> = out
            .comments
            .iter()
            .filter(|c| c.in_reply_to.is_none() && quorum_memory::feedback::quorum_markers(&c.body).is_some())
            .map(|c| c.id)
            .collect();
        let mut reactions: BTreeMap<u64, Vec<Reaction>> = BTreeMap::new();
        for id in roots {
            let awards: Vec<Value> = self
                .gl
                .all_pages(
                    &format!("/projects/{pid}/merge_requests/{iid}/notes/{id}/award_emoji"),
                    MAX_PAGES,
                )
                .await
                .map_err(to_history)?;
            let mut list = vec![];
            for a in &awards {
                let content = match a["name"].as_str() {
                    Some("thumbsup") => "+1",
                    Some("thumbsdown") => "-1",
                    _ => continue,
                };
                list.push(Reaction {
                    who: self.person(&pid, &a["user"]).await?,
                    content: content.into(),
                });
            }
            if let Some(c) = out.comments.iter_mut().find(|c| c.id == id) {
                c.reactions = Reactions {
                    plus_one: list.iter().filter(|r| r.content == "+1").count() as u32,
                    minus_one: list.iter().filter(|r| r.content == "-1").count() as u32,
                };
            }
            reactions.insert(id, list);
        }
        out.reactions = reactions;
        Ok(out)
    }
}

impl GitLabHistory {
    /// One diff note as a comment (`Err`: what is wrong with it).
    async fn note(
        &self,
        pid: &str,
        iid: u64,
        web: &str,
        n: &Value,
        root: Option<u64>,
    ) -> Result<Result<PastComment, String>, HistoryError> {
        let Some(id) = n["id"].as_u64() else {
            return Ok(Err(
                format_args!("merge request !{iid}: a note without a numeric `id`").to_string()
            ));
        };
        let bad = |f: &str| format!("note {id}: `{f}` is missing or not what GitLab documents");
        let (Some(body), Some(created), Some(path)) = (
            n["body"].as_str(),
            n["created_at"].as_str(),
            n["position"]["new_path"]
                .as_str()
                .or(n["position"]["old_path"].as_str()),
        ) else {
            return Ok(Err(bad("body, created_at or position")));
        };
        if chrono::DateTime::parse_from_rfc3339(created).is_err() {
            return Ok(Err(bad("created_at")));
        }
        let who = self.person(pid, &n["author"]).await?;
        let line = |f: &str| n["position"][f].as_u64().and_then(|l| u32::try_from(l).ok());
        Ok(Ok(PastComment {
            id,
            in_reply_to: root.filter(|r| *r != id),
            pr: iid,
            author: who.login,
            is_bot: n["author"]["bot"] == true,
            association: who.association,
            body: body.to_string(),
            path: path.to_string(),
            line: line("new_line"),
            original_line: line("new_line").or(line("old_line")),
            diff_hunk: String::new(),
            created_at: created.to_string(),
            updated_at: n["updated_at"].as_str().unwrap_or(created).to_string(),
            url: format!("{web}#note_{id}"),
            reactions: Reactions::default(),
        }))
    }
}
