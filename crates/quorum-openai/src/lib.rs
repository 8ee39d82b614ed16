//! The one retry layer between async-openai and the network (F-AG-4).
//!
//! async-openai's default executor has its own retry layer; the client is
//! built with [`RetryingHttp`] *instead*, so retries never multiply. Only what
//! can succeed on a second try is retried: 429 (honouring `Retry-After`),
//! 5xx except a server's deterministic "your request is invalid" answer, and
//! timeouts or refused connections. Waits are exponential with full jitter.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use async_openai::error::OpenAIError;
use async_openai::middleware::{HttpRequestFactory, ReqwestService};
use quorum_core::backoff::Backoff;
use reqwest13 as reqwest;

/// Retry settings for one client.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// First backoff; doubled per retry, then jittered.
    pub base: Duration,
    /// No wait is longer than this (a `Retry-After` beyond it is clamped).
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 3,
            base: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// What the layer did, for tests and logs: one entry per wait.
#[derive(Debug, Clone, Default)]
pub struct RetryLog(Arc<Mutex<Vec<RetryEvent>>>);

#[derive(Debug, Clone, PartialEq)]
pub struct RetryEvent {
    /// `429`, `503`, `timeout`, `connect`.
    pub cause: String,
    pub wait: Duration,
    /// Whether the wait came from the server's `Retry-After`.
    pub from_server: bool,
}

impl RetryLog {
    pub fn events(&self) -> Vec<RetryEvent> {
        self.0.lock().expect("retry log lock").clone()
    }
    fn push(&self, e: RetryEvent) {
        self.0.lock().expect("retry log lock").push(e);
    }
}

/// A tower service: [`ReqwestService`] plus the retry policy.
#[derive(Clone)]
pub struct RetryingHttp {
    inner: ReqwestService,
    policy: RetryPolicy,
    log: RetryLog,
}

impl RetryingHttp {
    pub fn new(client: reqwest::Client, policy: RetryPolicy, log: RetryLog) -> Self {
        RetryingHttp {
            inner: ReqwestService::new(client),
            policy,
            log,
        }
    }
}

type HttpFuture = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

impl tower::Service<HttpRequestFactory> for RetryingHttp {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = HttpFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        let mut inner = self.inner.clone();
        let policy = self.policy.clone();
        let log = self.log.clone();
        Box::pin(async move {
            let mut attempt = 0u32;
            loop {
                let outcome = tower::Service::call(&mut inner, request.clone()).await;
                let (decision, outcome) = classify(outcome).await;
                let Some((cause, server_wait)) = decision else {
                    return outcome;
                };
                if attempt >= policy.retries {
                    return outcome;
                }
                let wait = match server_wait {
                    Some(w) => w.min(policy.max_wait),
                    None => backoff(&policy, attempt),
                };
                log.push(RetryEvent {
                    cause: cause.clone(),
                    wait,
                    from_server: server_wait.is_some(),
                });
                tracing::warn!(%cause, attempt = attempt + 1, wait_ms = wait.as_millis() as u64, "model call retried");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
        })
    }
}

/// The shared jittered exponential backoff (`quorum_core::backoff`), at
/// most `max_wait`.
fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    Backoff::new(policy.base, policy.max_wait).delay(attempt, fastrand::f64())
}

type Decision = Option<(String, Option<Duration>)>;

/// Whether to retry, and the response or error to hand on when not. A 5xx
/// body is read to tell a deterministic validation error from a transient
/// one, then put back so the caller still sees it.
async fn classify(
    outcome: Result<reqwest::Response, OpenAIError>,
) -> (Decision, Result<reqwest::Response, OpenAIError>) {
    let resp = match outcome {
        Ok(r) => r,
        Err(OpenAIError::Reqwest(e)) if e.is_timeout() => {
            return (Some(("timeout".into(), None)), Err(OpenAIError::Reqwest(e)));
        }
        Err(OpenAIError::Reqwest(e)) if e.is_connect() => {
            return (Some(("connect".into(), None)), Err(OpenAIError::Reqwest(e)));
        }
        Err(e) => return (None, Err(e)),
    };
    let status = resp.status();
    if status.as_u16() == 429 {
        let wait = retry_after(resp.headers());
        return (Some(("429".into(), wait)), Ok(resp));
    }
    if !status.is_server_error() {
        return (None, Ok(resp));
    }
    let headers = resp.headers().clone();
    let version = resp.version();
    let body = match resp.bytes().await {
        Ok(b) => b,
        Err(e) => return (Some((status.as_u16().to_string(), None)), Err(OpenAIError::Reqwest(e))),
    };
    let deterministic = is_validation_error(&String::from_utf8_lossy(&body));
    let mut rebuilt = http_response(status, body.to_vec());
    *rebuilt.headers_mut() = headers.clone();
    *rebuilt.version_mut() = version;
    let resp = reqwest::Response::from(rebuilt);
    if deterministic {
        return (None, Ok(resp));
    }
    (Some((status.as_u16().to_string(), retry_after(&headers))), Ok(resp))
}

fn http_response(status: reqwest::StatusCode, body: Vec<u8>) -> http::Response<Vec<u8>> {
    let mut r = http::Response::new(body);
    *r.status_mut() = status;
    r
}

/// A 5xx that will fail the same way every time: the server could not use
/// the request (llama.cpp answers 500 for a grammar or template it cannot
/// apply). Retrying wastes the budget; the fallback model may still help.
pub fn is_validation_error(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    [
        "invalid",
        "failed to parse",
        "validation",
        "schema",
        "grammar",
        "unsupported",
    ]
    .iter()
    .any(|k| b.contains(k))
}

/// `Retry-After` in seconds (the HTTP-date form is rare for APIs and read
/// as "no hint"); `x-ratelimit-reset-requests` style hints are ignored.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    quorum_core::backoff::parse_retry_after(headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_stays_within_the_ceiling() {
        let p = RetryPolicy {
            retries: 5,
            base: Duration::from_millis(100),
            max_wait: Duration::from_millis(300),
        };
        for attempt in 0..6 {
            for _ in 0..50 {
                let w = backoff(&p, attempt);
                assert!(w >= Duration::from_millis(1));
                assert!(
                    w <= Duration::from_millis(100 * (1 << attempt)).min(p.max_wait),
                    "{w:?}"
                );
            }
        }
    }

    #[test]
    fn retry_after_reads_seconds() {
        let mut h = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(reqwest::header::RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(reqwest::header::RETRY_AFTER, "0.25".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        h.insert(
            reqwest::header::RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn validation_errors_are_told_from_outages() {
        assert!(is_validation_error(
            r#"{"error":{"message":"Failed to parse tool call"}}"#
        ));
        assert!(is_validation_error("JSON schema not supported"));
        assert!(!is_validation_error("upstream connect error"));
        assert!(!is_validation_error("Service Unavailable"));
    }
}
