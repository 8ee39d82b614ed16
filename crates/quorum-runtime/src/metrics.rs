//! Metric names, defined once (F-OBS-1). Labels are bounded: topic, service,
//! group, outcome, partition — never a job id, PR number or SHA.

use prometheus::{Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};

/// The metric families of the runtime, registered in one registry per process
/// (so `quorum up`, which runs every service in one process, exposes each
/// service under its `service` label).
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    /// `quorum_bus_messages_total{service, topic, outcome=ok|retry|dlq|invalid}`.
    pub bus_messages: IntCounterVec,
    /// `quorum_handler_duration_seconds{service}`.
    pub handler_duration: HistogramVec,
    /// `quorum_consumer_lag{group, partition}`.
    pub consumer_lag: IntGaugeVec,
    /// `quorum_consumer_rejoins_total{group}`: times a member left and
    /// re-joined its group because it starved (`worker/group_watch.rs`).
    pub consumer_rejoins: IntCounterVec,
    /// `quorum_produced_total{service, topic}`.
    pub produced: IntCounterVec,
    /// `quorum_gateway_requests_total{status}`.
    pub gateway_requests: IntCounterVec,
    /// `quorum_webhook_to_review_seconds` (publisher).
    pub webhook_to_review: HistogramVec,
    /// `quorum_findings_total{agent, category}`.
    pub findings: IntCounterVec,
    /// `quorum_critic_decisions_total{decision=kept|rejected|memory}`
    /// (`memory`: rejected because a review-memory item suppresses it).
    pub critic_decisions: IntCounterVec,
    /// `quorum_index_builds_total{outcome=built|incremental|loaded}`.
    pub index_builds: IntCounterVec,
    /// `quorum_index_files_total{kind=parsed|reused}`.
    pub index_files: IntCounterVec,
    /// `quorum_index_duration_seconds{stage=read_tree|build|embed|upsert}`.
    pub index_duration: HistogramVec,
    /// `quorum_search_chunks_total{kind=embedded|deleted_files}`: hybrid
    /// index work (chunks embedded and upserted, files whose chunks went).
    pub search_chunks: IntCounterVec,
    /// `quorum_llm_tokens_total{role, model, kind=prompt|cached_prompt|completion}`.
    pub llm_tokens: IntCounterVec,
    /// `quorum_llm_calls_total{role, model, outcome=ok|error}`.
    pub llm_calls: IntCounterVec,
    /// `quorum_tool_calls_total{role, tool}`.
    pub tool_calls: IntCounterVec,
    /// `quorum_retrieval_seconds{backend=graph|tree|qdrant}`.
    pub retrieval: HistogramVec,
    /// `quorum_worker_in_flight{service}`: messages being handled right now.
    pub in_flight: IntGaugeVec,
    /// `quorum_backlog_requests`: review requests not yet taken by the slowest agent group.
    pub backlog: prometheus::IntGauge,
}

/// The model label of the offline engine (no model, no tokens).
pub const OFFLINE_MODEL: &str = "offline";
/// Token kinds, as labelled.
pub const TOKEN_KINDS: [&str; 3] = ["prompt", "cached_prompt", "completion"];
/// The agents' tools (F-AG-2), as labelled.
pub const TOOLS: [&str; 5] = [
    "get_callers",
    "find_tests",
    "search_code",
    "search_docs",
    "read_snippet",
];

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let bus_messages = IntCounterVec::new(
            Opts::new("quorum_bus_messages_total", "Consumed messages by outcome"),
            &["service", "topic", "outcome"],
        )
        .expect("valid metric");
        let handler_duration = HistogramVec::new(
            HistogramOpts::new("quorum_handler_duration_seconds", "Handler wall time")
                .buckets(vec![0.001, 0.005, 0.02, 0.1, 0.5, 2.0, 10.0, 60.0, 300.0]),
            &["service"],
        )
        .expect("valid metric");
        let consumer_lag = IntGaugeVec::new(
            Opts::new("quorum_consumer_lag", "High watermark minus committed offset"),
            &["group", "partition"],
        )
        .expect("valid metric");
        let consumer_rejoins = IntCounterVec::new(
            Opts::new(
                "quorum_consumer_rejoins_total",
                "Times a member with no partitions re-joined its group while the group's lag stood still",
            ),
            &["group"],
        )
        .expect("valid metric");
        let produced = IntCounterVec::new(
            Opts::new("quorum_produced_total", "Messages produced"),
            &["service", "topic"],
        )
        .expect("valid metric");
        let gateway_requests = IntCounterVec::new(
            Opts::new("quorum_gateway_requests_total", "Webhook requests by HTTP status"),
            &["status"],
        )
        .expect("valid metric");
        let webhook_to_review = HistogramVec::new(
            HistogramOpts::new(
                "quorum_webhook_to_review_seconds",
                "From intake accepting a request to the review being published",
            )
            .buckets(vec![0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 60.0, 300.0]),
            &["mode"],
        )
        .expect("valid metric");
        let findings = IntCounterVec::new(
            Opts::new("quorum_findings_total", "Findings reported by agents"),
            &["agent", "category"],
        )
        .expect("valid metric");
        let critic_decisions = IntCounterVec::new(
            Opts::new("quorum_critic_decisions_total", "Critic keep/reject decisions"),
            &["decision"],
        )
        .expect("valid metric");
        let index_builds = IntCounterVec::new(
            Opts::new("quorum_index_builds_total", "Code-graph requests by outcome"),
            &["outcome"],
        )
        .expect("valid metric");
        let index_files = IntCounterVec::new(
            Opts::new("quorum_index_files_total", "Files parsed or reused by graph builds"),
            &["kind"],
        )
        .expect("valid metric");
        let index_duration = HistogramVec::new(
            HistogramOpts::new("quorum_index_duration_seconds", "Code-graph build stages")
                .buckets(vec![0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0, 120.0]),
            &["stage"],
        )
        .expect("valid metric");
        let search_chunks = IntCounterVec::new(
            Opts::new(
                "quorum_search_chunks_total",
                "Hybrid index: chunks embedded, files deleted",
            ),
            &["kind"],
        )
        .expect("valid metric");
        let llm_tokens = IntCounterVec::new(
            Opts::new("quorum_llm_tokens_total", "LLM tokens by kind"),
            &["role", "model", "kind"],
        )
        .expect("valid metric");
        let llm_calls = IntCounterVec::new(
            Opts::new("quorum_llm_calls_total", "LLM calls by outcome"),
            &["role", "model", "outcome"],
        )
        .expect("valid metric");
        let tool_calls = IntCounterVec::new(
            Opts::new("quorum_tool_calls_total", "Agent tool calls by tool"),
            &["role", "tool"],
        )
        .expect("valid metric");
        let retrieval = HistogramVec::new(
            HistogramOpts::new("quorum_retrieval_seconds", "Context retrieval latency by back-end")
                .buckets(vec![0.0005, 0.002, 0.01, 0.05, 0.2, 1.0, 5.0]),
            &["backend"],
        )
        .expect("valid metric");
        let in_flight = IntGaugeVec::new(
            Opts::new("quorum_worker_in_flight", "Messages a service is handling right now"),
            &["service"],
        )
        .expect("valid metric");
        let backlog = prometheus::IntGauge::new(
            "quorum_backlog_requests",
            "Review requests not yet consumed by the slowest agent group (the gateway's backlog)",
        )
        .expect("valid metric");
        for c in [
            Box::new(bus_messages.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(handler_duration.clone()),
            Box::new(consumer_lag.clone()),
            Box::new(consumer_rejoins.clone()),
            Box::new(produced.clone()),
            Box::new(gateway_requests.clone()),
            Box::new(webhook_to_review.clone()),
            Box::new(findings.clone()),
            Box::new(critic_decisions.clone()),
            Box::new(index_builds.clone()),
            Box::new(index_files.clone()),
            Box::new(index_duration.clone()),
            Box::new(search_chunks.clone()),
            Box::new(llm_tokens.clone()),
            Box::new(llm_calls.clone()),
            Box::new(tool_calls.clone()),
            Box::new(retrieval.clone()),
            Box::new(in_flight.clone()),
            Box::new(backlog.clone()),
        ] {
            registry.register(c).expect("metric names are unique");
        }
        Metrics {
            registry,
            bus_messages,
            handler_duration,
            consumer_lag,
            consumer_rejoins,
            produced,
            gateway_requests,
            webhook_to_review,
            findings,
            critic_decisions,
            index_builds,
            index_files,
            index_duration,
            search_chunks,
            llm_tokens,
            llm_calls,
            tool_calls,
            retrieval,
            in_flight,
            backlog,
        }
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut buf = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buf)
            .expect("text encoding cannot fail");
        String::from_utf8(buf).expect("prometheus text is UTF-8")
    }
}
