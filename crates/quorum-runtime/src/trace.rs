//! W3C trace context carried in Kafka headers, so one job is one trace across
//! every hop: producers write `traceparent`, consumers continue it. With the
//! OTLP layer installed the ids are the exported spans' own; without it they
//! are still minted and continued, so logs correlate either way.

use std::collections::HashMap;

use opentelemetry::trace::TraceContextExt;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// `00-<trace id>-<span id>-01` with fresh random ids.
pub fn new_traceparent() -> String {
    let t = uuid::Uuid::new_v4().simple().to_string();
    format!("00-{t}-{}-01", &uuid::Uuid::new_v4().simple().to_string()[..16])
}

fn valid(tp: &str) -> bool {
    let parts: Vec<&str> = tp.split('-').collect();
    parts.len() == 4
        && parts[1].len() == 32
        && parts[2].len() == 16
        && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The same trace with a new span id; a fresh trace when `parent` is not a
/// valid `traceparent`.
pub fn child_of(parent: &str) -> String {
    if !valid(parent) {
        return new_traceparent();
    }
    let parts: Vec<&str> = parent.split('-').collect();
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

/// Makes `span` a child of the message's `traceparent` (a no-op without the
/// OTLP layer, or for a missing or malformed header).
pub fn continue_from(span: &tracing::Span, traceparent: Option<&str>) {
    let Some(tp) = traceparent.filter(|tp| valid(tp)) else {
        return;
    };
    let carrier = HashMap::from([("traceparent".to_string(), tp.to_string())]);
    let cx = opentelemetry::global::get_text_map_propagator(|p| p.extract(&carrier));
    let _ = span.set_parent(cx);
}

/// The `traceparent` for a message produced inside `span`: the span itself
/// when it is exported (so the next hop is its child), else a child of
/// `parent`, else a new trace.
pub fn outgoing(span: &tracing::Span, parent: Option<&str>) -> String {
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    if sc.is_valid() {
        let mut carrier: HashMap<String, String> = HashMap::new();
        opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut carrier));
        if let Some(tp) = carrier.remove("traceparent").filter(|tp| valid(tp)) {
            return tp;
        }
    }
    match parent {
        Some(p) => child_of(p),
        None => new_traceparent(),
    }
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

    #[test]
    fn without_an_exported_span_outgoing_continues_the_parent() {
        let p = new_traceparent();
        let out = outgoing(&tracing::Span::none(), Some(&p));
        assert_eq!(trace_id(&out), trace_id(&p));
        assert!(valid(&outgoing(&tracing::Span::none(), None)));
    }
}
