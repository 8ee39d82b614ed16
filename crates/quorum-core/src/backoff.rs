//! Retry arithmetic, the one definition the SCM clients, the model client
//! and the bus runtime share: jittered exponential backoff and the waits a
//! server asks for (`Retry-After`, a rate-limit reset time).
//!
//! Pure: the caller supplies the random fraction and the clock, so the
//! arithmetic is tested exactly and this crate stays free of IO.

use std::time::Duration;

/// Exponential backoff with "equal jitter": attempt `n` waits between half
/// and all of `base · 2ⁿ`, capped at `max`. Half is fixed so a retry never
/// fires at once (the fault it retries is seldom over in a millisecond); the
/// other half is random so a fleet that failed together does not retry in
/// step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
}

impl Backoff {
    pub const fn new(base: Duration, max: Duration) -> Self {
        Backoff { base, max }
    }

    /// The ceiling of attempt `attempt` (0-based): `min(base · 2^attempt, max)`.
    pub fn ceiling(&self, attempt: u32) -> Duration {
        self.base.saturating_mul(1u32 << attempt.min(16)).min(self.max)
    }

    /// The wait before retry `attempt` (0-based), given `unit`, a random
    /// fraction in `[0, 1)` (clamped): in `[ceiling / 2, ceiling]`.
    pub fn delay(&self, attempt: u32, unit: f64) -> Duration {
        let unit = if unit.is_finite() { unit.clamp(0.0, 1.0) } else { 0.0 };
        self.ceiling(attempt).mul_f64(0.5 + unit / 2.0)
    }
}

/// A `Retry-After` header value as a wait: whole or fractional seconds.
/// The HTTP-date form is read as no hint (APIs send seconds; a date would
/// need the clock and the server's agreeing on it).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
}

/// The wait until a rate limit resets at Unix time `reset` (seconds, as
/// `x-ratelimit-reset` / `ratelimit-reset` give it), at least a second so a
/// reset in the past or a skewed clock does not become a busy loop.
pub fn until_reset(reset: &str, now_unix_secs: u64) -> Option<Duration> {
    let reset = reset.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(reset.saturating_sub(now_unix_secs).max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn each_attempt_waits_between_half_and_all_of_a_doubling_ceiling() {
        let b = Backoff::new(100 * MS, Duration::from_secs(30));
        for attempt in 0..5 {
            let full = 100 * MS * (1 << attempt);
            assert_eq!(b.delay(attempt, 0.0), full / 2);
            assert_eq!(b.delay(attempt, 1.0), full);
            let mid = b.delay(attempt, 0.5);
            assert!(mid > full / 2 && mid < full, "{attempt}: {mid:?}");
        }
    }

    #[test]
    fn the_cap_holds_for_any_attempt_and_bad_fractions_are_clamped() {
        let b = Backoff::new(Duration::from_secs(20), Duration::from_secs(30));
        assert_eq!(b.delay(5, 1.0), Duration::from_secs(30));
        assert_eq!(b.delay(u32::MAX, 1.0), Duration::from_secs(30));
        assert_eq!(b.delay(0, f64::NAN), Duration::from_secs(10));
        assert_eq!(b.delay(0, 7.0), Duration::from_secs(20));
        assert_eq!(b.delay(0, -1.0), Duration::from_secs(10));
    }

    #[test]
    fn retry_after_reads_whole_and_fractional_seconds_only() {
        assert_eq!(parse_retry_after("9"), Some(Duration::from_secs(9)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(500 * MS));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("NaN"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after(""), None);
    }

    #[test]
    fn a_reset_time_becomes_a_wait_of_at_least_a_second() {
        assert_eq!(until_reset("1060", 1000), Some(Duration::from_secs(60)));
        assert_eq!(until_reset("900", 1000), Some(Duration::from_secs(1)));
        assert_eq!(until_reset("soon", 1000), None);
    }
}
