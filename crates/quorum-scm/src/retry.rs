//! The retry arithmetic both SCM clients share: jittered exponential
//! backoff, and how long a rate-limited answer asks us to wait.

use std::time::Duration;

use http::HeaderMap;

/// `base` doubled per attempt, with jitter in [50 %, 100 %), capped at 30 s.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    let jitter = 0.5 + rand_fraction() / 2.0;
    base.saturating_mul(1 << attempt.min(6))
        .mul_f64(jitter)
        .min(Duration::from_secs(30))
}

/// A fraction in [0, 1) for jitter, without a random-number dependency.
fn rand_fraction() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    f64::from(nanos % 1000) / 1000.0
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

/// `Retry-After` in seconds.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    header(headers, "retry-after")
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_secs)
}

/// The time until the Unix time in `reset_header` (at least a second).
pub(crate) fn until_reset(headers: &HeaderMap, reset_header: &str) -> Option<Duration> {
    let reset = header(headers, reset_header)?.parse::<u64>().ok()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Some(Duration::from_secs(reset.saturating_sub(now).max(1)))
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
