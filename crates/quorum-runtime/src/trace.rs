//! W3C trace context carried in Kafka headers, so one job is one trace across
//! every hop: producers write `traceparent`, consumers continue it.

/// `00-<trace id>-<span id>-01` with fresh random ids.
pub fn new_traceparent() -> String {
    let t = uuid::Uuid::new_v4().simple().to_string();
    format!("00-{t}-{}-01", &uuid::Uuid::new_v4().simple().to_string()[..16])
}

/// The same trace with a new span id; a fresh trace when `parent` is not a
/// valid `traceparent`.
pub fn child_of(parent: &str) -> String {
    let parts: Vec<&str> = parent.split('-').collect();
    let valid = parts.len() == 4
        && parts[1].len() == 32
        && parts[2].len() == 16
        && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_hexdigit()));
    if !valid {
        return new_traceparent();
    }
    format!(
        "00-{}-{}-{}",
        parts[1],
        &uuid::Uuid::new_v4().simple().to_string()[..16],
        parts[3]
    )
}

/// The trace id part of a `traceparent`.
pub fn trace_id(traceparent: &str) -> Option<&str> {
    traceparent.split('-').nth(1).filter(|t| t.len() == 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_keeps_the_trace_id() {
        let p = new_traceparent();
        let c = child_of(&p);
        assert_eq!(trace_id(&p), trace_id(&c));
        assert_ne!(p, c);
        assert_ne!(trace_id(&child_of("garbage")), None);
    }
}
