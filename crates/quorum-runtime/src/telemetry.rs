//! Logging: JSON lines on stderr, one field set across services (`service`,
//! and per message `job_id`, `topic`, `attempt`, `trace_id` from the span).

use std::sync::OnceLock;

use tracing_subscriber::EnvFilter;

static DEFAULT_LEVEL: OnceLock<&'static str> = OnceLock::new();

/// The filter used when `RUST_LOG` is unset (default `info`); call before
/// [`init_logging`].
pub fn set_default_level(level: &'static str) {
    let _ = DEFAULT_LEVEL.set(level);
}

/// Installs the JSON subscriber (`RUST_LOG` filters; default `info`). Calling
/// it twice is harmless, so tests and `quorum up` may both call it.
pub fn init_logging(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(format!(
            "{},rdkafka=warn",
            DEFAULT_LEVEL.get().copied().unwrap_or("info")
        ))
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if json {
        builder.json().flatten_event(true).with_current_span(true).try_init()
    } else {
        builder.compact().try_init()
    };
}
