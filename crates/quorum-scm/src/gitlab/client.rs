//! One GitLab REST call (`/api/v4`, reqwest), with the same failure policy
//! as the GitHub client: 5xx, timeouts and refused connections retried with
//! jittered backoff; 429 waited out (`Retry-After`, `RateLimit-Reset`) when
//! the wait is short, otherwise unavailable at once; other 4xx returned to
//! the caller (401/403/404 become one clear, non-retryable error).

use std::time::Duration;

use reqwest::{Method, StatusCode, header::HeaderMap};
use serde::de::DeserializeOwned;

use super::config::GitLabConfig;
use crate::ScmError;
use crate::retry::{backoff, wait_from_headers};

/// What a call that did not succeed says.
#[derive(Debug, thiserror::Error)]
pub enum GitLabError {
    /// GitLab answered with a 4xx the caller may want to handle.
    #[error("GitLab answered {status} to {what}: {message}")]
    Status { status: u16, what: String, message: String },
    /// Retries exhausted, a long rate limit, or a transport failure.
    #[error("GitLab is unavailable for {what}: {reason}")]
    Unavailable { what: String, reason: String },
    /// A response that does not have the shape GitLab documents.
    #[error("GitLab's answer to {what} is not what its API describes: {reason}")]
    Malformed { what: String, reason: String },
}

impl From<GitLabError> for ScmError {
    fn from(e: GitLabError) -> ScmError {
        match &e {
            GitLabError::Status { status: 401, .. } => ScmError::Invalid(format!(
                "{e} — the GitLab token is not accepted; check GITLAB_TOKEN (it needs the `api` scope)"
            )),
            GitLabError::Status { status: 403 | 404, .. } => ScmError::Invalid(format!(
                "{e} — the project or merge request does not exist, or the token cannot see it (it needs the Developer role on the project)"
            )),
            GitLabError::Status { .. } | GitLabError::Malformed { .. } => ScmError::Invalid(e.to_string()),
            GitLabError::Unavailable { .. } => ScmError::Unavailable(e.to_string()),
        }
    }
}

/// A successful answer.
#[derive(Debug)]
pub struct GitLabResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: bytes::Bytes,
    what: String,
}

impl GitLabResponse {
    /// The body as `T`; a body cut off in transit is unavailability
    /// (retried), as on GitHub.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, GitLabError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            if e.is_eof() {
                GitLabError::Unavailable {
                    what: self.what.clone(),
                    reason: format!("the answer was cut off after {} bytes ({e})", self.body.len()),
                }
            } else {
                GitLabError::Malformed {
                    what: self.what.clone(),
                    reason: e.to_string(),
                }
            }
        })
    }

    /// The page after this one (`X-Next-Page`; empty on the last page).
    pub fn next_page(&self) -> Option<u32> {
        self.headers
            .get("x-next-page")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok())
    }
}

/// A GitLab REST client for one instance and one token.
pub struct GitLab {
    config: GitLabConfig,
    http: reqwest::Client,
}

impl std::fmt::Debug for GitLab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitLab").field("config", &self.config).finish()
    }
}

/// A project's id in a URL: its full path, every `/` encoded.
pub(crate) fn project_id(repo: &str) -> String {
    crate::percent_encode(repo, false)
}

/// GitLab's `message` or `error` (a string, a list, or field → messages).
pub fn error_message(body: &[u8]) -> String {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
        return String::from_utf8_lossy(body).chars().take(300).collect();
    };
    let m = if v["message"].is_null() {
        &v["error"]
    } else {
        &v["message"]
    };
    match m {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join("; "),
        serde_json::Value::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{k} {}", text(v)))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

fn text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

impl GitLab {
    /// Builds the client.
    pub fn new(config: GitLabConfig) -> Result<GitLab, ScmError> {
        // The same TLS provider choice as the GitHub client (see there).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .user_agent(concat!("quorum/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ScmError::Invalid(format!("cannot build the GitLab client: {e}")))?;
        Ok(GitLab { config, http })
    }

    pub fn config(&self) -> &GitLabConfig {
        &self.config
    }

    /// One call; `path` is relative to `/api/v4`, query included.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<GitLabResponse, GitLabError> {
        let what = format!("{method} {}", path.split('?').next().unwrap_or(path));
        let url = format!("{}/api/v4{path}", self.config.url);
        let mut attempt = 0u32;
        loop {
            let mut req = self
                .http
                .request(method.clone(), &url)
                .header("PRIVATE-TOKEN", self.config.token.expose());
            if let Some(b) = body {
                req = req.json(b);
            }
            let (wait, reason) = match req.send().await {
                Err(e) => (backoff(self.config.backoff, attempt), format!("request failed: {e}")),
                Ok(resp) => {
                    let status = resp.status();
                    let headers = resp.headers().clone();
                    let body = resp.bytes().await.unwrap_or_default();
                    if status.is_success() {
                        return Ok(GitLabResponse {
                            status,
                            headers,
                            body,
                            what,
                        });
                    }
                    let message = error_message(&body);
                    if status == StatusCode::TOO_MANY_REQUESTS {
                        let wait = wait_from_headers(&headers, "ratelimit-reset").unwrap_or(Duration::from_secs(60));
                        if wait > self.config.max_rate_limit_wait {
                            return Err(GitLabError::Unavailable {
                                what,
                                reason: format!(
                                    "rate limited for {} s (longer than the {} s a call waits): {message}",
                                    wait.as_secs(),
                                    self.config.max_rate_limit_wait.as_secs()
                                ),
                            });
                        }
                        (wait, format!("rate limited: {message}"))
                    } else if status.is_server_error() {
                        (backoff(self.config.backoff, attempt), format!("{status}: {message}"))
                    } else {
                        return Err(GitLabError::Status {
                            status: status.as_u16(),
                            what,
                            message,
                        });
                    }
                }
            };
            if attempt >= self.config.retries {
                return Err(GitLabError::Unavailable {
                    what,
                    reason: format!("{reason} (gave up after {} attempts)", attempt + 1),
                });
            }
            tracing::warn!(call = %what, attempt, wait_ms = wait.as_millis() as u64, %reason, "GitLab call retried");
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Every item of a paged list (`per_page=100`), up to `max_pages`.
    pub async fn all_pages<T: DeserializeOwned>(&self, path: &str, max_pages: u32) -> Result<Vec<T>, GitLabError> {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut out = Vec::new();
        let mut page = 1;
        for _ in 0..max_pages {
            let resp = self
                .call(Method::GET, &format!("{path}{sep}per_page=100&page={page}"), None)
                .await?;
            let items: Vec<T> = resp.json()?;
            let empty = items.is_empty();
            out.extend(items);
            match resp.next_page() {
                Some(next) if !empty && next > page => page = next,
                _ => break,
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_in_every_shape_gitlab_uses() {
        assert_eq!(
            error_message(br#"{"message":"404 Project Not Found"}"#),
            "404 Project Not Found"
        );
        assert_eq!(
            error_message(br#"{"error":"insufficient_scope"}"#),
            "insufficient_scope"
        );
        assert_eq!(
            error_message(br#"{"message":{"line_code":["can't be blank","must be a valid line code"]}}"#),
            "line_code can't be blank, must be a valid line code"
        );
        assert_eq!(
            error_message(br#"{"message":["Note can't be blank"]}"#),
            "Note can't be blank"
        );
        assert_eq!(error_message(b"<html>bad gateway</html>"), "<html>bad gateway</html>");
    }

    #[test]
    fn project_paths_are_one_url_segment() {
        assert_eq!(project_id("group/sub/proj"), "group%2Fsub%2Fproj");
        assert_eq!(project_id("a.b/c_d-e"), "a.b%2Fc_d-e");
    }
}
