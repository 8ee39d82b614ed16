//! One job is one trace (F-OBS-2): the fleet exports spans over OTLP/HTTP
//! through `tracing-opentelemetry` to a collector — here an in-test receiver
//! that decodes the real OTLP protobuf — and the spans of the gateway's
//! intake and of every consumer's `handle` share one trace id, each hop a
//! child of the one before.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use quorum_cli::demo::{DemoArgs, run};
use quorum_runtime::telemetry::{OtlpConfig, flush, init};

fn attr(span: &Span, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| match a.value.as_ref()?.value.as_ref()? {
            Value::StringValue(s) => Some(s.clone()),
            other => Some(format!("{other:?}")),
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_job_is_one_trace_across_every_hop() {
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let sink = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        post(move |body: Bytes| {
            let sink = sink.clone();
            async move {
                let req = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                for rs in req.resource_spans {
                    for ss in rs.scope_spans {
                        sink.lock().unwrap().extend(ss.spans);
                    }
                }
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    init(
        false,
        Some(OtlpConfig {
            endpoint: format!("http://{addr}"),
            service_name: "quorum-test".into(),
        }),
    );

    let review = run(DemoArgs {
        fixture: std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture"),
        case: "01-sql-fstring-email-lookup".into(),
        llm: Default::default(),
    })
    .await
    .unwrap();
    assert!(!review.inline.is_empty());

    let wanted: HashSet<&str> = [
        "gateway",
        "agent-static",
        "agent-reviewer",
        "agent-security",
        "agent-tests",
        "aggregator",
        "critic",
        "publisher",
    ]
    .into();
    let start = Instant::now();
    let (trace, by_id) = loop {
        tokio::task::spawn_blocking(flush).await.unwrap();
        let got = spans.lock().unwrap().clone();
        let mut services: HashMap<Vec<u8>, HashSet<String>> = HashMap::new();
        for s in &got {
            if let Some(svc) = attr(s, "service") {
                services.entry(s.trace_id.clone()).or_default().insert(svc);
            }
        }
        if let Some((t, _)) = services
            .iter()
            .find(|(_, svcs)| wanted.iter().all(|w| svcs.contains(*w)))
        {
            let by_id: HashMap<Vec<u8>, Span> = got
                .iter()
                .filter(|s| &s.trace_id == t)
                .map(|s| (s.span_id.clone(), s.clone()))
                .collect();
            break (t.clone(), by_id);
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no trace spans all services; traces seen: {services:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Every hop's span has its parent in the same trace, back to the intake.
    let service_of = |s: &Span| attr(s, "service").unwrap_or_default();
    for s in by_id.values().filter(|s| s.name == "handle") {
        let parent = by_id
            .get(&s.parent_span_id)
            .unwrap_or_else(|| panic!("{} handle span's parent is not in trace {trace:?}", service_of(s)));
        let expected_parent = match service_of(s).as_str() {
            svc if svc.starts_with("agent-") => "gateway",
            "aggregator" => "agent-",
            "critic" => "aggregator",
            // `publisher-checks` marks the check in progress from the request.
            "publisher" if attr(s, "topic").as_deref() == Some("pr.review.requested") => "gateway",
            "publisher" => "critic",
            _ => continue,
        };
        assert!(
            service_of(parent).starts_with(expected_parent),
            "{} is a child of {}",
            service_of(s),
            service_of(parent)
        );
    }
    let root = by_id.values().find(|s| s.name == "intake").expect("the intake span");
    assert!(root.parent_span_id.is_empty(), "intake is the root");
    assert_eq!(attr(root, "repo").as_deref(), Some("storefront/shop"));
}
