//! A response cache for model calls (`QUORUM_LLM_CACHE=DIR`; off by
//! default), so an eval re-run with unchanged prompts replays the recorded
//! answers and re-scores in seconds instead of hours.
//!
//! The key is the exact request body sent to the server — model, messages,
//! tools, tool choice, response format, temperature, max tokens, seed — as
//! canonical JSON (object keys sorted), hashed with SHA-256: anything that
//! could change the answer changes the key. The endpoint's URL is not part
//! of it: the same model behind another port (a test server, a restarted
//! `llama-server`) is the same model.
//!
//! One JSON file per key, holding the request and the raw response. Files
//! are written to a temporary file in the same directory and renamed over
//! the final name, so agents sharing the directory never read a torn file.
//! A file that does not parse, or records another request, is a warning and
//! a miss (the live answer then replaces it): the cache never fails a call
//! and never answers a request it did not record.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Bumped when the key or the file format changes; old files then miss.
const FORMAT: u32 = 1;

/// The cache directory could not be used.
#[derive(Debug, thiserror::Error)]
#[error("model response cache {dir}: {source}")]
pub struct CacheError {
    pub dir: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// What a lookup found.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// The recorded raw response.
    Hit(Value),
    Miss,
    /// A file under the key that cannot be replayed, and why (naming it).
    Unusable(String),
}

/// One cache file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    format: u32,
    key: String,
    request: Value,
    response: Value,
}

/// Recorded responses in one directory.
#[derive(Debug, Clone)]
pub struct ResponseCache {
    dir: PathBuf,
}

impl ResponseCache {
    /// Opens (creating) `dir`.
    pub fn open(dir: impl Into<PathBuf>) -> Result<ResponseCache, CacheError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|source| CacheError {
            dir: dir.clone(),
            source,
        })?;
        Ok(ResponseCache { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of a request body: hex SHA-256 of its canonical JSON.
    pub fn key(request: &Value) -> String {
        let mut text = format!("quorum-llm-cache/{FORMAT}\n");
        canonical(request, &mut text);
        hex::encode(Sha256::digest(text.as_bytes()))
    }

    /// The file a request is recorded in.
    pub fn path_of(&self, request: &Value) -> PathBuf {
        self.dir.join(format!("{}.json", Self::key(request)))
    }

    /// The recorded response to exactly `request`, if any.
    pub fn lookup(&self, request: &Value) -> Lookup {
        let key = Self::key(request);
        let path = self.dir.join(format!("{key}.json"));
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return Lookup::Unusable(format!("cannot read {}: {e}", path.display())),
        };
        let entry: Entry = match serde_json::from_str(&text) {
            Ok(e) => e,
            Err(e) => return Lookup::Unusable(format!("{} is not a cache entry: {e}", path.display())),
        };
        if entry.format != FORMAT || entry.key != key {
            return Lookup::Unusable(format!(
                "{} is a format {} entry for key {}",
                path.display(),
                entry.format,
                entry.key
            ));
        }
        // A hash collision or a file copied under the wrong name: never
        // replay another request's answer.
        if entry.request != *request {
            return Lookup::Unusable(format!("{} records a different request", path.display()));
        }
        Lookup::Hit(entry.response)
    }

    /// Records `response` as the answer to `request`, atomically.
    pub fn store(&self, request: &Value, response: &Value) -> Result<PathBuf, CacheError> {
        let key = Self::key(request);
        let path = self.dir.join(format!("{key}.json"));
        let entry = Entry {
            format: FORMAT,
            key,
            request: request.clone(),
            response: response.clone(),
        };
        let bytes = serde_json::to_vec(&entry).expect("JSON values serialise");
        let err = |source| CacheError {
            dir: self.dir.clone(),
            source,
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(".entry-")
            .suffix(".tmp")
            .tempfile_in(&self.dir)
            .map_err(err)?;
        tmp.write_all(&bytes).map_err(err)?;
        tmp.persist(&path).map_err(|e| err(e.error))?;
        Ok(path)
    }
}

/// `v` as JSON with every object's keys in sorted order, so the key does
/// not depend on the order fields were inserted in.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request() -> Value {
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0,
               "max_tokens": 100, "seed": 7, "stream": false})
    }

    #[test]
    fn the_key_is_the_exact_request_whatever_the_field_order() {
        let a = request();
        let mut reordered = serde_json::Map::new();
        for k in ["stream", "seed", "max_tokens", "temperature", "messages", "model"] {
            reordered.insert(k.into(), a[k].clone());
        }
        assert_eq!(ResponseCache::key(&a), ResponseCache::key(&Value::Object(reordered)));
        assert_eq!(ResponseCache::key(&a).len(), 64);
        for (field, other) in [
            ("model", json!("m2")),
            ("messages", json!([{"role": "user", "content": "hi!"}])),
            ("temperature", json!(0.2)),
            ("max_tokens", json!(101)),
            ("seed", json!(8)),
            ("tools", json!([])),
            ("response_format", json!({"type": "json_object"})),
        ] {
            let mut b = a.clone();
            b[field] = other;
            assert_ne!(
                ResponseCache::key(&a),
                ResponseCache::key(&b),
                "{field} must be in the key"
            );
        }
    }

    #[test]
    fn stores_atomically_and_replays_only_the_recorded_request() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ResponseCache::open(dir.path().join("nested/cache")).unwrap();
        let req = request();
        assert_eq!(cache.lookup(&req), Lookup::Miss);
        let response = json!({"choices": [{"message": {"content": "ok"}}]});
        let path = cache.store(&req, &response).unwrap();
        assert_eq!(path, cache.path_of(&req));
        assert_eq!(cache.lookup(&req), Lookup::Hit(response.clone()));
        // Only the entry: the temporary file was renamed, not left behind.
        let names: Vec<_> = std::fs::read_dir(cache.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");

        // An entry recording another request under this name is not replayed.
        let mut other = req.clone();
        other["seed"] = json!(8);
        let copied = std::fs::read_to_string(&path).unwrap();
        std::fs::write(cache.path_of(&other), &copied).unwrap();
        match cache.lookup(&other) {
            Lookup::Unusable(why) => assert!(why.contains("format 1 entry for key"), "{why}"),
            l => panic!("{l:?}"),
        }
        let forged = copied.replace(&ResponseCache::key(&req), &ResponseCache::key(&other));
        std::fs::write(cache.path_of(&other), forged).unwrap();
        match cache.lookup(&other) {
            Lookup::Unusable(why) => assert!(why.contains("records a different request"), "{why}"),
            l => panic!("{l:?}"),
        }

        // A torn or corrupt file names itself and is replaced by the next store.
        std::fs::write(&path, &copied[..copied.len() / 2]).unwrap();
        match cache.lookup(&req) {
            Lookup::Unusable(why) => {
                assert!(
                    why.contains(&path.display().to_string()) && why.contains("not a cache entry"),
                    "{why}"
                )
            }
            l => panic!("{l:?}"),
        }
        cache.store(&req, &response).unwrap();
        assert_eq!(cache.lookup(&req), Lookup::Hit(response));
    }

    #[test]
    fn an_unusable_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let e = ResponseCache::open(&file).unwrap_err().to_string();
        assert!(e.contains("not-a-dir"), "{e}");
    }
}
