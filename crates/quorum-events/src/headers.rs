//! Message header names. Trace context and delivery bookkeeping travel in
//! headers so payloads stay pure domain data.

/// Delivery attempt of this message, starting at 1 (F-BUS-3).
pub const ATTEMPT: &str = "quorum-attempt";
/// W3C trace context (`traceparent`), written by every producer.
pub const TRACEPARENT: &str = "traceparent";
/// W3C trace state.
pub const TRACESTATE: &str = "tracestate";
/// The payload type, e.g. `ReviewRequested`; lets tools show a DLQ message.
pub const PAYLOAD_TYPE: &str = "quorum-payload";

/// DLQ: the error that sent the message there.
pub const DLQ_ERROR: &str = "quorum-dlq-error";
/// DLQ: the error class (`invalid`, `retryable`).
pub const DLQ_ERROR_KIND: &str = "quorum-dlq-error-kind";
/// DLQ: original topic / partition / offset.
pub const DLQ_TOPIC: &str = "quorum-dlq-topic";
pub const DLQ_PARTITION: &str = "quorum-dlq-partition";
pub const DLQ_OFFSET: &str = "quorum-dlq-offset";
/// DLQ: the consumer group that gave up on it.
pub const DLQ_GROUP: &str = "quorum-dlq-group";

/// Headers that describe a dead-lettering and are dropped on replay.
pub const DLQ_HEADERS: [&str; 6] = [
    DLQ_ERROR,
    DLQ_ERROR_KIND,
    DLQ_TOPIC,
    DLQ_PARTITION,
    DLQ_OFFSET,
    DLQ_GROUP,
];

/// Set on a message re-published for a retry: only this consumer group
/// handles it; the other groups reading the same topic (the agent fan-out)
/// skip it, because they already handled the original.
pub const RETRY_FOR: &str = "quorum-retry-for";
