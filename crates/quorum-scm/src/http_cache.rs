//! A cache of API answers that cannot change, keyed by method + URL +
//! **body**: a GraphQL POST to one URL asks a different question with each
//! body, so a cache keyed by URL alone (as the seed pipeline's was) answers
//! the wrong one. Kept in memory and, given a directory, on disk (one file
//! per key, written atomically), so a second run does not ask again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

#[derive(Debug, Default)]
pub struct HttpCache {
    dir: Option<PathBuf>,
    mem: Mutex<HashMap<String, String>>,
}

impl HttpCache {
    /// In memory only.
    pub fn in_memory() -> HttpCache {
        HttpCache::default()
    }

    /// Also on disk under `dir` (created when missing).
    pub fn on_disk(dir: impl Into<PathBuf>) -> std::io::Result<HttpCache> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(HttpCache {
            dir: Some(dir),
            mem: Mutex::default(),
        })
    }

    /// The key of one request.
    pub fn key(method: &str, url: &str, body: Option<&serde_json::Value>) -> String {
        let mut h = Sha256::new();
        h.update(method.as_bytes());
        h.update([0]);
        h.update(url.as_bytes());
        h.update([0]);
        if let Some(b) = body {
            h.update(b.to_string().as_bytes());
        }
        hex::encode(h.finalize())
    }

    pub fn get(&self, key: &str) -> Option<String> {
        if let Some(v) = self.mem.lock().expect("cache lock").get(key) {
            return Some(v.clone());
        }
        let text = std::fs::read_to_string(self.dir.as_ref()?.join(key)).ok()?;
        self.mem
            .lock()
            .expect("cache lock")
            .insert(key.to_string(), text.clone());
        Some(text)
    }

    /// Stores an answer; a disk that refuses is logged, not fatal (the
    /// answer is asked again next time).
    pub fn put(&self, key: &str, answer: &str) {
        self.mem
            .lock()
            .expect("cache lock")
            .insert(key.to_string(), answer.to_string());
        if let Some(dir) = &self.dir {
            let tmp = dir.join(format!("{key}.tmp{}", std::process::id()));
            let written = std::fs::write(&tmp, answer).and_then(|()| std::fs::rename(&tmp, dir.join(key)));
            if let Err(e) = written {
                tracing::warn!(dir = %dir.display(), error = %e, "HTTP cache entry not written");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_part_of_the_key() {
        let q1 = serde_json::json!({"query": "q", "variables": {"number": 1}});
        let q2 = serde_json::json!({"query": "q", "variables": {"number": 2}});
        let a = HttpCache::key("POST", "https://api.github.com/graphql", Some(&q1));
        let b = HttpCache::key("POST", "https://api.github.com/graphql", Some(&q2));
        assert_ne!(a, b);
        assert_ne!(a, HttpCache::key("GET", "https://api.github.com/graphql", Some(&q1)));
        assert_eq!(a, HttpCache::key("POST", "https://api.github.com/graphql", Some(&q1)));
    }

    #[test]
    fn answers_survive_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let k = HttpCache::key("GET", "/repos/o/r/pulls/1", None);
        HttpCache::on_disk(dir.path()).unwrap().put(&k, "{\"merged\":true}");
        let again = HttpCache::on_disk(dir.path()).unwrap();
        assert_eq!(again.get(&k).as_deref(), Some("{\"merged\":true}"));
        assert_eq!(again.get("other"), None);
    }
}
