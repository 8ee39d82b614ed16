//! Logging: JSON lines on stderr, one field set across services (`service`,
//! and per message `job_id`, `topic`, `attempt`, `trace_id` from the span).

use tracing_subscriber::EnvFilter;

/// Installs the JSON subscriber (`RUST_LOG` filters; default `info`). Calling
/// it twice is harmless, so tests and `quorum up` may both call it.
pub fn init_logging(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rdkafka=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = if json {
        builder.json().flatten_event(true).with_current_span(true).try_init()
    } else {
        builder.compact().try_init()
    };
}
