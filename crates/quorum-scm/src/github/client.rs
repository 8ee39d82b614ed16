//! One GitHub REST call, through `octocrab`'s HTTP client and auth, with
//! Quorum's failure policy around it:
//! - 5xx, timeouts and refused connections: retried with jittered
//!   exponential backoff;
//! - primary and secondary rate limits (403/429 with `Retry-After`, or
//!   `x-ratelimit-remaining: 0` with `x-ratelimit-reset`): waited out when
//!   the wait is short, otherwise the call fails as unavailable and the
//!   runtime retries the message later — never a retry storm;
//! - 401 with an App: octocrab drops the cached installation token, the call
//!   is repeated once with a fresh one;
//! - other 4xx: returned to the caller as [`ApiError::Status`] (404 and 403
//!   on a repository the credentials cannot see become a clear error).
//!
//! octocrab's own retry layer is off: its rate-limit wait is unbounded.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, Method, StatusCode};
use octocrab::Octocrab;
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

use super::config::{GitHubAuth, GitHubConfig};
use crate::ScmError;

/// What a call that did not succeed says.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// GitHub answered with a 4xx the caller may want to handle.
    #[error("GitHub answered {status} to {what}: {message}")]
    Status { status: u16, what: String, message: String },
    /// Retries exhausted, a long rate limit, or a transport failure.
    #[error("GitHub is unavailable for {what}: {reason}")]
    Unavailable { what: String, reason: String },
    /// A response that does not have the shape GitHub documents.
    #[error("GitHub's answer to {what} is not what its API describes: {reason}")]
    Malformed { what: String, reason: String },
}

impl ApiError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

impl From<ApiError> for ScmError {
    fn from(e: ApiError) -> ScmError {
        match &e {
            ApiError::Status { status: 401, .. } => ScmError::Invalid(format!(
                "{e} — the GitHub credentials are not accepted; check GITHUB_TOKEN or the App's id and key"
            )),
            ApiError::Status { status: 403 | 404, .. } => ScmError::Invalid(format!(
                "{e} — the repository or change does not exist, or the credentials cannot see it (the App must be installed on it; a token needs contents: read and pull requests: write)"
            )),
            ApiError::Status { .. } | ApiError::Malformed { .. } => ScmError::Invalid(e.to_string()),
            ApiError::Unavailable { .. } => ScmError::Unavailable(e.to_string()),
        }
    }
}

/// A successful answer.
#[derive(Debug)]
pub struct ApiResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
    what: String,
}

impl ApiResponse {
    /// The body as `T`. A body that ends mid-value was cut off in transit
    /// (a proxy dropped the connection after the status): that is
    /// unavailability, retried, not a malformed answer.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        serde_json::from_str(&self.body).map_err(|e| {
            if e.is_eof() {
                ApiError::Unavailable {
                    what: self.what.clone(),
                    reason: format!("the answer was cut off after {} bytes ({e})", self.body.len()),
                }
            } else {
                ApiError::Malformed {
                    what: self.what.clone(),
                    reason: e.to_string(),
                }
            }
        })
    }

    /// Whether the `Link` header names a next page.
    pub fn has_next_page(&self) -> bool {
        self.headers
            .get_all(http::header::LINK)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.split(',').any(|part| part.contains("rel=\"next\"")))
    }
}

/// A GitHub REST client for one API base URL and one identity.
pub struct GitHub {
    config: GitHubConfig,
    /// Authenticated as the token, or as the App (JWT).
    root: Arc<Octocrab>,
    /// App only: one client per repository owner's installation; octocrab
    /// caches each installation token until shortly before it expires.
    /// Shared, not cloned: a cloned `Octocrab` copies the token cache.
    installations: Mutex<HashMap<String, Arc<Octocrab>>>,
}

impl std::fmt::Debug for GitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHub").field("config", &self.config).finish()
    }
}

impl GitHub {
    /// Builds the client; must run inside a tokio runtime.
    pub fn new(config: GitHubConfig) -> Result<GitHub, ScmError> {
        // Two TLS back-ends are linked into the workspace (ring through
        // octocrab, aws-lc through other clients); rustls then refuses to
        // guess. Pick ring once per process; a provider already chosen wins.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let b = octocrab::Octocrab::builder()
            .base_uri(config.api_url.as_str())
            .map_err(|e| ScmError::Invalid(format!("GITHUB_API_URL `{}`: {e}", config.api_url)))?
            .add_retry_config(octocrab::service::middleware::retry::RetryConfig::None)
            .set_connect_timeout(Some(config.timeout))
            .set_read_timeout(Some(config.timeout))
            .set_write_timeout(Some(config.timeout));
        let root = match &config.auth {
            GitHubAuth::Token(t) => b.personal_token(t.expose().to_string()).build(),
            GitHubAuth::App { app_id, private_key } => {
                let key = jsonwebtoken::EncodingKey::from_rsa_pem(private_key.expose().as_bytes())
                    .map_err(|e| ScmError::Invalid(format!("the GitHub App private key is not an RSA PEM key: {e}")))?;
                b.app((*app_id).into(), key).build()
            }
        }
        .map_err(|e| ScmError::Invalid(format!("cannot build the GitHub client: {e}")))?;
        Ok(GitHub {
            config,
            root: Arc::new(root),
            installations: Mutex::new(HashMap::new()),
        })
    }

    pub fn config(&self) -> &GitHubConfig {
        &self.config
    }

    /// Whether Check Runs are available: they need an App; a token posts a
    /// commit status instead.
    pub fn is_app(&self) -> bool {
        matches!(self.config.auth, GitHubAuth::App { .. })
    }

    /// The client to call `repo`'s API with.
    async fn client_for(&self, repo: &str) -> Result<Arc<Octocrab>, ApiError> {
        if !self.is_app() {
            return Ok(self.root.clone());
        }
        let owner = repo.split('/').next().unwrap_or(repo).to_string();
        if let Some(c) = self.installations.lock().await.get(&owner) {
            return Ok(c.clone());
        }
        #[derive(serde::Deserialize)]
        struct Installation {
            id: u64,
        }
        let found: Installation = self
            .send(&self.root, Method::GET, &format!("/repos/{repo}/installation"), None)
            .await?
            .json()?;
        let client = Arc::new(
            self.root
                .installation(found.id.into())
                .map_err(|e| ApiError::Unavailable {
                    what: format!("the installation of {repo}"),
                    reason: e.to_string(),
                })?,
        );
        self.installations.lock().await.insert(owner, client.clone());
        Ok(client)
    }

    /// One call about `repo` (`path` relative to the API URL, query included).
    pub async fn call(
        &self,
        repo: &str,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<ApiResponse, ApiError> {
        let client = self.client_for(repo).await?;
        self.send(&client, method, path, body).await
    }

    async fn send(
        &self,
        client: &Octocrab,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<ApiResponse, ApiError> {
        let what = format!("{method} {}", path.split('?').next().unwrap_or(path));
        let mut attempt = 0u32;
        let mut refreshed = false;
        loop {
            let sent = match method {
                Method::GET => client._get(path).await,
                Method::POST => client._post(path, body).await,
                Method::PATCH => client._patch(path, body).await,
                Method::PUT => client._put(path, body).await,
                Method::DELETE => client._delete(path, body).await,
                _ => unreachable!("Quorum does not use {method}"),
            };
            let retry_in = match sent {
                Err(e) => Retry::After(self.backoff(attempt), format!("request failed: {e}")),
                Ok(resp) => {
                    let status = resp.status();
                    let headers = resp.headers().clone();
                    let text = client.body_to_string(resp).await.unwrap_or_default();
                    if status.is_success() {
                        return Ok(ApiResponse {
                            status,
                            headers,
                            body: text,
                            what,
                        });
                    }
                    match self.classify(status, &headers, &text, attempt, refreshed) {
                        Classified::Retry(r) => {
                            if status == StatusCode::UNAUTHORIZED {
                                refreshed = true;
                            }
                            r
                        }
                        Classified::Fail(reason) if status.is_client_error() => {
                            return Err(ApiError::Status {
                                status: status.as_u16(),
                                what,
                                message: reason,
                            });
                        }
                        Classified::Fail(reason) | Classified::Unavailable(reason) => {
                            return Err(ApiError::Unavailable { what, reason });
                        }
                    }
                }
            };
            match retry_in {
                Retry::After(wait, reason) if attempt < self.config.retries => {
                    tracing::warn!(call = %what, attempt, wait_ms = wait.as_millis() as u64, %reason, "GitHub call retried");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Retry::After(_, reason) => {
                    return Err(ApiError::Unavailable {
                        what,
                        reason: format!("{reason} (gave up after {} attempts)", attempt + 1),
                    });
                }
            }
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        crate::retry::backoff(self.config.backoff, attempt)
    }

    fn classify(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        body: &str,
        attempt: u32,
        refreshed: bool,
    ) -> Classified {
        let message = error_message(body);
        if status == StatusCode::UNAUTHORIZED && self.is_app() && !refreshed {
            // octocrab cleared the cached installation token on this 401.
            return Classified::Retry(Retry::After(
                Duration::ZERO,
                "installation token refused; renewing".into(),
            ));
        }
        let limited = status == StatusCode::FORBIDDEN || status == StatusCode::TOO_MANY_REQUESTS;
        if let Some(wait) = rate_limit_wait(status, headers, &message).filter(|_| limited) {
            if wait > self.config.max_rate_limit_wait {
                return Classified::Unavailable(format!(
                    "rate limited for {} s (longer than the {} s a call waits): {message}",
                    wait.as_secs(),
                    self.config.max_rate_limit_wait.as_secs()
                ));
            }
            return Classified::Retry(Retry::After(wait, format!("rate limited: {message}")));
        }
        if status.is_server_error() {
            return Classified::Retry(Retry::After(self.backoff(attempt), format!("{status}: {message}")));
        }
        Classified::Fail(message)
    }
}

enum Retry {
    After(Duration, String),
}

enum Classified {
    Retry(Retry),
    /// Not worth retrying now, but not the request's fault (a long rate limit).
    Unavailable(String),
    Fail(String),
}

/// How long a 403/429 asks us to wait, if it is a rate limit at all.
fn rate_limit_wait(status: StatusCode, headers: &HeaderMap, message: &str) -> Option<Duration> {
    if let Some(wait) = crate::retry::retry_after(headers) {
        return Some(wait);
    }
    let remaining = headers.get("x-ratelimit-remaining").and_then(|v| v.to_str().ok());
    if remaining.map(str::trim) == Some("0") {
        return crate::retry::until_reset(headers, "x-ratelimit-reset");
    }
    // A secondary limit without headers: GitHub says wait at least a minute.
    let secondary = message.to_ascii_lowercase().contains("secondary rate limit");
    (secondary || status == StatusCode::TOO_MANY_REQUESTS).then_some(Duration::from_secs(60))
}

/// GitHub's `message`, with the `errors` it lists (strings or objects).
pub fn error_message(body: &str) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
        return body.chars().take(300).collect();
    };
    let mut m = v["message"].as_str().unwrap_or("").to_string();
    if let Some(errors) = v["errors"].as_array() {
        let parts: Vec<String> = errors
            .iter()
            .map(|e| match e {
                serde_json::Value::String(s) => s.clone(),
                other => other["message"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| other.to_string()),
            })
            .collect();
        if !parts.is_empty() {
            m = format!("{m}: {}", parts.join("; "));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_body_cut_off_in_transit_is_unavailable_and_a_wrong_one_malformed() {
        let answer = |body: &str| super::ApiResponse {
            status: http::StatusCode::OK,
            headers: http::HeaderMap::new(),
            body: body.into(),
            what: "GET /repos/o/r/pulls/1".into(),
        };
        let cut = answer(r#"{"number": 1, "title": "Fix the"#)
            .json::<serde_json::Value>()
            .unwrap_err();
        assert!(matches!(cut, super::ApiError::Unavailable { .. }), "{cut}");
        assert!(cut.to_string().contains("cut off"), "{cut}");
        let wrong = answer(r#"{"number": "one"}"#)
            .json::<std::collections::HashMap<String, u64>>()
            .unwrap_err();
        assert!(matches!(wrong, super::ApiError::Malformed { .. }), "{wrong}");
    }

    use super::*;

    #[test]
    fn rate_limits_are_read_from_headers_and_text() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "7".parse().unwrap());
        assert_eq!(
            rate_limit_wait(StatusCode::FORBIDDEN, &h, "x"),
            Some(Duration::from_secs(7))
        );
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-remaining", "0".parse().unwrap());
        h.insert("x-ratelimit-reset", "1".parse().unwrap());
        assert_eq!(
            rate_limit_wait(StatusCode::FORBIDDEN, &h, "x"),
            Some(Duration::from_secs(1)),
            "a reset in the past waits a moment"
        );
        assert_eq!(
            rate_limit_wait(
                StatusCode::FORBIDDEN,
                &HeaderMap::new(),
                "You have exceeded a secondary rate limit"
            ),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            rate_limit_wait(
                StatusCode::FORBIDDEN,
                &HeaderMap::new(),
                "Resource not accessible by integration"
            ),
            None,
            "a plain 403 is not a rate limit"
        );
    }

    #[test]
    fn error_messages_join_what_github_lists() {
        assert_eq!(
            error_message(
                r#"{"message":"Unprocessable Entity","errors":["Line could not be resolved"],"status":"422"}"#
            ),
            "Unprocessable Entity: Line could not be resolved"
        );
        assert_eq!(
            error_message(
                r#"{"message":"Validation Failed","errors":[{"resource":"PullRequestReviewComment","code":"custom","field":"pull_request_review_thread.line","message":"pull_request_review_thread.line must be part of the diff"}]}"#
            ),
            "Validation Failed: pull_request_review_thread.line must be part of the diff"
        );
        assert_eq!(error_message("<html>bad gateway</html>"), "<html>bad gateway</html>");
    }
}
