//! Logging and tracing.
//!
//! Logs: JSON lines on stderr, one field set across services (`service`, and
//! per message `job_id`, `topic`, `attempt`, `trace_id`, plus `repo`, `pr`
//! and `agent` where the handler knows them).
//!
//! Traces: with an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, HTTP), every
//! span goes through `tracing-opentelemetry` to the collector. Consumers make
//! their `handle` span a child of the message's `traceparent` and producers
//! write the current span into the next message's `traceparent`, so one job is
//! one trace across gateway → agents → aggregator → critic → publisher.

use std::sync::{Mutex, OnceLock};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

static DEFAULT_LEVEL: OnceLock<&'static str> = OnceLock::new();
static PROVIDER: Mutex<Option<SdkTracerProvider>> = Mutex::new(None);

/// The filter used when `RUST_LOG` is unset (default `info`); call before
/// [`init_logging`].
pub fn set_default_level(level: &'static str) {
    let _ = DEFAULT_LEVEL.set(level);
}

/// Where traces go.
#[derive(Debug, Clone)]
pub struct OtlpConfig {
    /// The collector's base URL (`http://otel-collector:4318`); spans are
    /// posted to `<endpoint>/v1/traces`.
    pub endpoint: String,
    pub service_name: String,
}

impl OtlpConfig {
    /// From `OTEL_EXPORTER_OTLP_ENDPOINT` and `OTEL_SERVICE_NAME` (default:
    /// the binary's name); `None` when no endpoint is set.
    pub fn from_env() -> Option<OtlpConfig> {
        let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
            .ok()
            .filter(|e| !e.trim().is_empty())?;
        let service_name = std::env::var("OTEL_SERVICE_NAME").ok().unwrap_or_else(|| {
            std::env::args()
                .next()
                .and_then(|a| {
                    std::path::Path::new(&a)
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                })
                .unwrap_or_else(|| "quorum".into())
        });
        Some(OtlpConfig { endpoint, service_name })
    }
}

/// Installs the subscriber (`RUST_LOG` filters; default `info`) with the OTLP
/// layer when the environment configures an endpoint. Calling it twice is
/// harmless, so tests and `quorum up` may both call it.
pub fn init_logging(json: bool) {
    init(json, OtlpConfig::from_env());
}

/// [`init_logging`] with an explicit OTLP configuration.
pub fn init(json: bool, otlp: Option<OtlpConfig>) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(format!(
            // qdrant-edge warns that its process-wide flags (feature flags,
            // the multi-mmap probe) keep their defaults, which is what an
            // embedded shard wants.
            "{},rdkafka=warn,qdrant_edge::common=error",
            DEFAULT_LEVEL.get().copied().unwrap_or("info")
        ))
    });
    let otel = otlp.and_then(|cfg| match tracer_provider(&cfg) {
        Ok(provider) => {
            let tracer = provider.tracer("quorum");
            *PROVIDER.lock().unwrap_or_else(|p| p.into_inner()) = Some(provider);
            opentelemetry::global::set_text_map_propagator(
                opentelemetry_sdk::propagation::TraceContextPropagator::new(),
            );
            Some(tracing_opentelemetry::layer().with_tracer(tracer))
        }
        Err(e) => {
            eprintln!("OTLP exporter for {} not started: {e}", cfg.endpoint);
            None
        }
    });
    let registry = tracing_subscriber::registry().with(filter).with(otel);
    let _ = if json {
        registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(true)
                    .with_writer(std::io::stderr),
            )
            .try_init()
    } else {
        registry
            .with(tracing_subscriber::fmt::layer().compact().with_writer(std::io::stderr))
            .try_init()
    };
}

fn tracer_provider(cfg: &OtlpConfig) -> Result<SdkTracerProvider, String> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(format!("{}/v1/traces", cfg.endpoint.trim_end_matches('/')))
        .build()
        .map_err(|e| quorum_core::error::chain(&e))?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            opentelemetry_sdk::Resource::builder()
                .with_service_name(cfg.service_name.clone())
                .build(),
        )
        .build())
}

/// Sends every finished span now (a service stopping, a test checking).
/// Blocks while the exporter works; call it off the async workers.
pub fn flush() {
    let provider = PROVIDER.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(p) = provider {
        let _ = p.force_flush();
    }
}
