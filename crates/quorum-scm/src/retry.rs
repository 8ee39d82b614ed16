//! The SCM clients' view of the shared retry arithmetic
//! (`quorum_core::backoff`): waits read from an HTTP answer's headers.

use std::time::Duration;

use http::HeaderMap;
use quorum_core::backoff::{Backoff, parse_retry_after};

/// The longest an SCM client waits between two attempts of its own.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// `base` doubled per attempt, jittered, capped at 30 s.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    Backoff::new(base, MAX_BACKOFF).delay(attempt, fastrand::f64())
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

/// `Retry-After`, in seconds.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    parse_retry_after(header(headers, "retry-after")?)
}

/// The time until the Unix time in `reset_header` (at least a second).
pub(crate) fn until_reset(headers: &HeaderMap, reset_header: &str) -> Option<Duration> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    quorum_core::backoff::until_reset(header(headers, reset_header)?, now)
}

/// `Retry-After`, else the reset time in `reset_header`.
pub(crate) fn wait_from_headers(headers: &HeaderMap, reset_header: &str) -> Option<Duration> {
    retry_after(headers).or_else(|| until_reset(headers, reset_header))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let base = Duration::from_millis(100);
        for attempt in 0..4 {
            let d = backoff(base, attempt);
            let full = base * (1 << attempt);
            assert!(d >= full / 2 && d <= full, "{attempt}: {d:?}");
        }
        assert!(backoff(Duration::from_secs(20), 5) <= Duration::from_secs(30));
    }

    #[test]
    fn waits_come_from_retry_after_or_the_reset_time() {
        let mut h = HeaderMap::new();
        h.insert("ratelimit-reset", "1".parse().unwrap());
        assert_eq!(wait_from_headers(&h, "ratelimit-reset"), Some(Duration::from_secs(1)));
        h.insert("retry-after", "9".parse().unwrap());
        assert_eq!(wait_from_headers(&h, "ratelimit-reset"), Some(Duration::from_secs(9)));
        assert_eq!(wait_from_headers(&HeaderMap::new(), "ratelimit-reset"), None);
    }
}
