//! The change the GitHub fleet tests review: `acme/shop`'s `find_user` turns
//! a parameterised query into an f-string (one SQL injection), as the
//! emulated GitHub serves it and as its `pull_request` webhook announces it.

#![allow(dead_code)]

use quorum_testkit::github::{EmulatedFile, EmulatedPr};
use serde_json::json;

pub const REPO: &str = "acme/shop";
pub const BASE: &str = "1111111111111111111111111111111111111111";
pub const HEAD: &str = "2222222222222222222222222222222222222222";
pub const HEAD2: &str = "3333333333333333333333333333333333333333";

pub const OLD: &str =
    "def find_user(db, email):\n    return db.execute(\"SELECT * FROM users WHERE email = ?\", (email,))\n";
pub const NEW: &str = "def find_user(db, email):\n    query = f\"SELECT * FROM users WHERE email = '{email}'\"\n    return db.execute(query)\n";
pub const PATCH: &str = "@@ -1,2 +1,3 @@\n def find_user(db, email):\n-    return db.execute(\"SELECT * FROM users WHERE email = ?\", (email,))\n+    query = f\"SELECT * FROM users WHERE email = '{email}'\"\n+    return db.execute(query)\n";

/// PR `number` changing `path` by [`PATCH`], at `head`.
pub fn emulated_pr(number: u64, path: &str, head: &str) -> EmulatedPr {
    EmulatedPr {
        number,
        title: "Look users up by email".into(),
        body: "Adds a lookup.".into(),
        author: "octocat".into(),
        base_sha: BASE.into(),
        head_sha: head.into(),
        draft: false,
        labels: vec![],
        files: vec![EmulatedFile {
            filename: path.into(),
            status: "modified".into(),
            patch: Some(PATCH.into()),
        }],
    }
}

/// The `pull_request` webhook body of PR `number` (`action`, at `head`).
pub fn pr_event(action: &str, number: u64, head: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "action": action,
        "number": number,
        "pull_request": {
            "number": number, "title": "Look users up by email", "body": "Adds a lookup.", "draft": false,
            "user": {"login": "octocat", "type": "User"},
            "head": {"sha": head, "ref": format!("feature-{number}")}, "base": {"sha": BASE, "ref": "main"},
            "labels": []
        },
        "repository": {"full_name": REPO, "name": "shop", "owner": {"login": "acme"}, "default_branch": "main"},
        "sender": {"login": "octocat", "type": "User"}
    }))
    .unwrap()
}
