//! The emulated GitLab's review history: past merge requests and their
//! discussions (diff notes with replies, resolved or not, who resolved
//! them), award emoji per note — what review memory harvests — with the
//! fields GitLab's documentation gives for the merge requests list
//! (`updated_after`, `order_by=updated_at`, `sort=asc`), the discussions
//! API (`resolvable`, `resolved`, `resolved_by`, `position`) and the award
//! emoji API (`name: thumbsup|thumbsdown`, `user`).

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

/// One note of a past discussion.
#[derive(Debug, Clone)]
pub struct PastNote {
    pub id: u64,
    pub author: String,
    pub bot: bool,
    pub body: String,
    pub created_at: String,
    /// `(username, name)` of every award (`thumbsup`, `thumbsdown`, …).
    pub awards: Vec<(String, String)>,
}

impl PastNote {
    pub fn new(id: u64, author: &str, body: &str, at: &str) -> PastNote {
        PastNote {
            id,
            author: author.into(),
            bot: author.ends_with("-bot") || author.starts_with("project_") && author.contains("_bot"),
            body: body.into(),
            created_at: at.into(),
            awards: vec![],
        }
    }

    pub fn awarded(mut self, who: &str, name: &str) -> PastNote {
        self.awards.push((who.into(), name.into()));
        self
    }
}

/// A past diff discussion: its notes, oldest first, on one line of a file.
#[derive(Debug, Clone)]
pub struct PastDiscussion {
    pub id: String,
    pub path: String,
    pub line: u64,
    /// The MR head the discussion was started on.
    pub head_sha: String,
    pub notes: Vec<PastNote>,
    pub resolved_by: Option<String>,
}

/// A past merge request.
#[derive(Debug, Clone)]
pub struct PastMr {
    pub iid: u64,
    /// `merged`, `opened` or `closed`.
    pub state: String,
    pub updated_at: String,
    /// The MR's latest head (a discussion on an older one is outdated).
    pub head_sha: String,
    pub discussions: Vec<PastDiscussion>,
}

#[derive(Default)]
pub(crate) struct History {
    mrs: BTreeMap<(String, u64), PastMr>,
}

impl History {
    pub(crate) fn add(&mut self, project: &str, mr: PastMr) {
        self.mrs.insert((project.into(), mr.iid), mr);
    }

    pub(crate) fn has(&self, project: &str, iid: u64) -> bool {
        self.mrs.contains_key(&(project.into(), iid))
    }

    fn user(&self, users: &HashMap<String, u64>, name: &str, bot: bool) -> Value {
        json!({
            "id": users.get(name).copied().unwrap_or(9000),
            "username": name,
            "name": name,
            "state": "active",
            "bot": bot,
            "web_url": format!("http://gitlab.example/{name}"),
        })
    }

    /// `GET /projects/:id/merge_requests?updated_after=&order_by=updated_at&sort=asc&state=all`.
    pub(crate) fn list(&self, project: &str, q: &HashMap<String, String>) -> Result<Vec<Value>, String> {
        if q.get("state").map(String::as_str) != Some("all") {
            return Err("the history sweep must ask `state=all` (merged MRs are not `opened`)".into());
        }
        let after = q.get("updated_after").map(String::as_str).unwrap_or("");
        let mut list: Vec<&PastMr> = self
            .mrs
            .iter()
            .filter(|((p, _), m)| p == project && m.updated_at.as_str() >= after)
            .map(|(_, m)| m)
            .collect();
        list.sort_by(|a, b| (&a.updated_at, a.iid).cmp(&(&b.updated_at, b.iid)));
        if q.get("sort").map(String::as_str) != Some("asc") {
            list.reverse();
        }
        Ok(list
            .into_iter()
            .map(|m| {
                json!({
                    "iid": m.iid,
                    "state": m.state,
                    "updated_at": m.updated_at,
                    "merged_at": if m.state == "merged" { json!(m.updated_at) } else { Value::Null },
                    "sha": m.head_sha,
                    "web_url": format!("http://gitlab.example/{project}/-/merge_requests/{}", m.iid),
                })
            })
            .collect())
    }

    pub(crate) fn mr(&self, project: &str, iid: u64) -> Option<Value> {
        let m = self.mrs.get(&(project.into(), iid))?;
        Some(json!({
            "iid": m.iid,
            "state": m.state,
            "updated_at": m.updated_at,
            "merged_at": if m.state == "merged" { json!(m.updated_at) } else { Value::Null },
            "sha": m.head_sha,
            "diff_refs": {"base_sha": "0".repeat(40), "start_sha": "0".repeat(40), "head_sha": m.head_sha},
        }))
    }

    /// `GET /projects/:id/merge_requests/:iid/discussions`.
    pub(crate) fn discussions(&self, project: &str, iid: u64, users: &HashMap<String, u64>) -> Option<Vec<Value>> {
        let m = self.mrs.get(&(project.into(), iid))?;
        Some(
            m.discussions
                .iter()
                .map(|d| {
                    let notes: Vec<Value> = d
                        .notes
                        .iter()
                        .map(|n| {
                            json!({
                                "id": n.id,
                                "type": "DiffNote",
                                "body": n.body,
                                "author": self.user(users, &n.author, n.bot),
                                "created_at": n.created_at,
                                "updated_at": n.created_at,
                                "system": false,
                                "noteable_type": "MergeRequest",
                                "noteable_iid": iid,
                                "resolvable": true,
                                "resolved": d.resolved_by.is_some(),
                                "resolved_by": d.resolved_by.as_ref().map(|r| self.user(users, r, false)),
                                "position": {
                                    "position_type": "text",
                                    "base_sha": "0".repeat(40),
                                    "start_sha": "0".repeat(40),
                                    "head_sha": d.head_sha,
                                    "old_path": d.path,
                                    "new_path": d.path,
                                    "old_line": Value::Null,
                                    "new_line": d.line,
                                },
                            })
                        })
                        .collect();
                    json!({"id": d.id, "individual_note": false, "notes": notes})
                })
                .collect(),
        )
    }

    /// `GET /projects/:id/merge_requests/:iid/notes/:note_id/award_emoji`.
    pub(crate) fn awards(
        &self,
        project: &str,
        iid: u64,
        note: u64,
        users: &HashMap<String, u64>,
    ) -> Option<Vec<Value>> {
        let m = self.mrs.get(&(project.into(), iid))?;
        let n = m.discussions.iter().flat_map(|d| &d.notes).find(|n| n.id == note)?;
        Some(
            n.awards
                .iter()
                .enumerate()
                .map(|(i, (who, name))| {
                    json!({
                        "id": note * 100 + i as u64,
                        "name": name,
                        "user": self.user(users, who, false),
                        "awardable_id": note,
                        "awardable_type": "Note",
                    })
                })
                .collect(),
        )
    }
}
