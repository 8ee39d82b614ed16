//! The emulated GitHub's review history: comments already on pull
//! requests (humans' and Quorum's), who reacted to them, whether their
//! threads are resolved, and which pull requests were merged — what review
//! memory harvests. Shapes come from GitHub's REST description (the
//! repo-wide review comments list and reactions are described and
//! validated); the GraphQL `reviewThreads` answer follows GitHub's GraphQL
//! schema by hand (GraphQL is not in the REST description).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Value, json};

use crate::openapi::OpenApi;

/// A review comment already on a pull request.
#[derive(Debug, Clone)]
pub struct PastReviewComment {
    pub id: u64,
    pub pr: u64,
    pub in_reply_to: Option<u64>,
    pub user: String,
    /// GitHub's `author_association` (OWNER, MEMBER, CONTRIBUTOR, …).
    pub association: String,
    pub body: String,
    pub path: String,
    /// `None`: outdated (GitHub nulls `line` once the code moved).
    pub line: Option<u64>,
    pub original_line: u64,
    pub created_at: String,
    pub updated_at: String,
    /// `(login, content)` of every reaction (`+1`, `-1`, `heart`, …).
    pub reactions: Vec<(String, String)>,
    /// The diff hunk ending at the commented line; `None` keeps the REST
    /// description's example.
    pub diff_hunk: Option<String>,
}

impl PastReviewComment {
    /// A comment with the usual defaults: a root, line 10, no reactions.
    pub fn new(id: u64, pr: u64, user: &str, association: &str, path: &str, body: &str, at: &str) -> Self {
        PastReviewComment {
            id,
            pr,
            in_reply_to: None,
            user: user.into(),
            association: association.into(),
            body: body.into(),
            path: path.into(),
            line: Some(10),
            original_line: 10,
            created_at: at.into(),
            updated_at: at.into(),
            reactions: vec![],
            diff_hunk: None,
        }
    }

    pub fn on_hunk(mut self, hunk: &str) -> Self {
        self.diff_hunk = Some(hunk.into());
        self
    }

    pub fn reply_to(mut self, parent: u64) -> Self {
        self.in_reply_to = Some(parent);
        self
    }

    pub fn reacted(mut self, who: &str, content: &str) -> Self {
        self.reactions.push((who.into(), content.into()));
        self
    }
}

/// A thread's state as GraphQL reports it, keyed by its first comment.
#[derive(Debug, Clone, Default)]
pub struct ThreadState {
    pub resolved: bool,
    pub outdated: bool,
    pub resolved_by: Option<String>,
}

#[derive(Default)]
pub(crate) struct History {
    comments: BTreeMap<(String, u64), PastReviewComment>,
    threads: HashMap<(String, u64), ThreadState>,
    merged: HashSet<(String, u64)>,
}

type Answer = (u16, Value, Vec<(String, String)>);

/// GraphQL pages of review threads.
const THREADS_PER_PAGE: usize = 2;

impl History {
    pub(crate) fn add(&mut self, repo: &str, c: PastReviewComment) {
        self.comments.insert((repo.into(), c.id), c);
    }

    pub(crate) fn set_thread(&mut self, repo: &str, root: u64, state: ThreadState) {
        self.threads.insert((repo.into(), root), state);
    }

    pub(crate) fn set_merged(&mut self, repo: &str, pr: u64) {
        self.merged.insert((repo.into(), pr));
    }

    pub(crate) fn is_merged(&self, repo: &str, pr: u64) -> bool {
        self.merged.contains(&(repo.into(), pr))
    }

    pub(crate) fn prs(&self, repo: &str) -> Vec<u64> {
        let mut prs: Vec<u64> = self
            .comments
            .iter()
            .filter(|((r, _), _)| r == repo)
            .map(|(_, c)| c.pr)
            .collect();
        prs.sort_unstable();
        prs.dedup();
        prs
    }

    fn of_repo<'a>(&'a self, repo: &'a str) -> impl Iterator<Item = &'a PastReviewComment> + 'a {
        self.comments
            .iter()
            .filter(move |((r, _), _)| r == repo)
            .map(|(_, c)| c)
    }

    /// A comment in the REST shape, built on the description's example.
    pub(crate) fn comment_json(&self, api: &OpenApi, repo: &str, c: &PastReviewComment) -> Value {
        let mut v = api.example("pull-request-review-comment-items")[0].clone();
        let count = |what: &str| c.reactions.iter().filter(|(_, k)| k == what).count();
        v["id"] = json!(c.id);
        v["node_id"] = json!(format!("PRRC_{}", c.id));
        v["url"] = json!(format!("https://api.github.com/repos/{repo}/pulls/comments/{}", c.id));
        v["html_url"] = json!(format!("https://github.com/{repo}/pull/{}#discussion_r{}", c.pr, c.id));
        v["pull_request_url"] = json!(format!("https://api.github.com/repos/{repo}/pulls/{}", c.pr));
        v["user"]["login"] = json!(c.user);
        v["user"]["type"] = json!(if c.user.ends_with("[bot]") { "Bot" } else { "User" });
        v["author_association"] = json!(c.association);
        v["body"] = json!(c.body);
        v["path"] = json!(c.path);
        v["line"] = json!(c.line);
        v["original_line"] = json!(c.original_line);
        if let Some(h) = &c.diff_hunk {
            v["diff_hunk"] = json!(h);
        }
        v["start_line"] = Value::Null;
        v["original_start_line"] = Value::Null;
        v["created_at"] = json!(c.created_at);
        v["updated_at"] = json!(c.updated_at);
        match c.in_reply_to {
            Some(p) => v["in_reply_to_id"] = json!(p),
            None => {
                v.as_object_mut().expect("object").remove("in_reply_to_id");
            }
        }
        let mut reactions = json!({
            "url": format!("https://api.github.com/repos/{repo}/pulls/comments/{}/reactions", c.id),
            "total_count": c.reactions.len(),
        });
        for k in ["+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket"] {
            reactions[k] = json!(count(k));
        }
        v["reactions"] = reactions;
        v
    }

    /// The comments of one pull request, oldest first.
    pub(crate) fn pr_comments(&self, api: &OpenApi, repo: &str, pr: u64) -> Vec<Value> {
        self.of_repo(repo)
            .filter(|c| c.pr == pr)
            .map(|c| self.comment_json(api, repo, c))
            .collect()
    }

    /// `GET /repos/{o}/{r}/pulls/comments?sort=updated&direction=asc&since=`.
    pub(crate) fn repo_comments(&self, api: &OpenApi, repo: &str, q: &HashMap<String, String>) -> Vec<Value> {
        let since = q.get("since").map(String::as_str).unwrap_or("");
        let mut list: Vec<&PastReviewComment> = self.of_repo(repo).filter(|c| c.updated_at.as_str() >= since).collect();
        match q.get("sort").map(String::as_str) {
            Some("updated") => list.sort_by(|a, b| (&a.updated_at, a.id).cmp(&(&b.updated_at, b.id))),
            _ => list.sort_by_key(|c| c.id),
        }
        if q.get("direction").map(String::as_str) == Some("desc") {
            list.reverse();
        }
        list.into_iter().map(|c| self.comment_json(api, repo, c)).collect()
    }

    /// `GET /repos/{o}/{r}/pulls/comments/{id}/reactions`.
    pub(crate) fn reactions(
        &self,
        api: &OpenApi,
        repo: &str,
        id: u64,
        q: &HashMap<String, String>,
    ) -> Option<Vec<Value>> {
        let c = self.comments.get(&(repo.to_string(), id))?;
        let template = api.example("reaction-items")[0].clone();
        Some(
            c.reactions
                .iter()
                .enumerate()
                .filter(|(_, (_, k))| q.get("content").is_none_or(|want| want == k))
                .map(|(i, (who, k))| {
                    let mut v = template.clone();
                    v["id"] = json!(id * 100 + i as u64);
                    v["user"]["login"] = json!(who);
                    v["content"] = json!(k);
                    v
                })
                .collect(),
        )
    }

    /// `POST /graphql` with a `reviewThreads` query for one pull request;
    /// variables `owner`, `name`, `number` and the page cursor `after`.
    pub(crate) fn graphql(&self, body: &Value) -> Answer {
        let query = body["query"].as_str().unwrap_or("");
        let vars = &body["variables"];
        let (Some(owner), Some(name), Some(number)) =
            (vars["owner"].as_str(), vars["name"].as_str(), vars["number"].as_u64())
        else {
            return (
                200,
                json!({"errors": [{"message": "Variable $owner, $name and $number of type String!/Int! were not provided."}]}),
                vec![],
            );
        };
        if !query.contains("reviewThreads") {
            return (
                200,
                json!({"errors": [{"message": "the emulated GitHub answers reviewThreads queries only"}]}),
                vec![],
            );
        }
        let repo = format!("{owner}/{name}");
        let roots: Vec<&PastReviewComment> = self
            .of_repo(&repo)
            .filter(|c| c.pr == number && c.in_reply_to.is_none())
            .collect();
        let start: usize = vars["after"].as_str().and_then(|a| a.parse().ok()).unwrap_or(0);
        let page: Vec<Value> = roots
            .iter()
            .skip(start)
            .take(THREADS_PER_PAGE)
            .map(|root| {
                let st = self.threads.get(&(repo.clone(), root.id)).cloned().unwrap_or_default();
                let ids: Vec<Value> = self
                    .of_repo(&repo)
                    .filter(|c| c.id == root.id || c.in_reply_to == Some(root.id))
                    .map(|c| json!({"databaseId": c.id}))
                    .collect();
                json!({
                    "isResolved": st.resolved,
                    "isOutdated": st.outdated,
                    "resolvedBy": st.resolved_by.map(|l| json!({"login": l})),
                    "path": root.path,
                    "comments": {"nodes": ids},
                })
            })
            .collect();
        let end = start + page.len();
        (
            200,
            json!({"data": {"repository": {"pullRequest": {"reviewThreads": {
                "pageInfo": {"hasNextPage": end < roots.len(), "endCursor": end.to_string()},
                "nodes": page,
            }}}}}),
            vec![],
        )
    }
}
