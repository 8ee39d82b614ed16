//! `serve`, the whole of a service binary's `main` after its flags: logs,
//! the bus, the store, the signal handler, then the service until it stops.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Parser;
use quorum_core::{Provider, RepoRef};
use quorum_events::{IndexRequested, SCHEMA_VERSION};
use quorum_runtime::{CommonArgs, RuntimeError, ServiceHandle, serve};

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
}

/// No KAFKA_BROKERS: an embedded broker; no REDIS_URL: the memory store.
fn common() -> CommonArgs {
    let mut c = Args::parse_from(["service", "--http-addr", "127.0.0.1:0", "--text-logs"]).common;
    c.kafka_brokers = None;
    c.redis_url = None;
    c
}

fn handle(tasks: Vec<tokio::task::JoinHandle<Result<(), RuntimeError>>>) -> ServiceHandle {
    ServiceHandle {
        name: "test".into(),
        http_addr: "127.0.0.1:0".parse().unwrap(),
        tasks,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_starts_the_service_on_what_it_booted_and_waits_for_it() {
    let done = Arc::new(AtomicBool::new(false));
    let seen = done.clone();
    serve(&common(), |boot| async move {
        let claim = boot.store.claim_dedupe("o/r#1@abc", "job-1").await.unwrap();
        assert!(matches!(claim, quorum_store::Claim::Claimed), "{claim:?}");
        assert!(boot.ctx.broker.is_some(), "no KAFKA_BROKERS: an embedded broker");
        assert!(!boot.shutdown.is_cancelled());
        let producer = boot.ctx.producer.clone();
        // The service's task outlives `start` (and the context it borrowed):
        // the embedded broker must still be up while `serve` waits.
        let task = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            producer
                .publish(&IndexRequested {
                    schema_version: SCHEMA_VERSION,
                    repo: RepoRef {
                        provider: Provider::Github,
                        full_name: "o/r".into(),
                    },
                    git_ref: "main".into(),
                    memory_pull_requests: vec![],
                })
                .await?;
            seen.store(true, Ordering::SeqCst);
            Ok(())
        });
        Ok::<_, RuntimeError>(handle(vec![task]))
    })
    .await
    .unwrap();
    assert!(done.load(Ordering::SeqCst), "serve returned before the service stopped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_from_start_and_from_the_service_end_serve() {
    let err = serve(&common(), |_boot| async {
        Err::<ServiceHandle, _>(anyhow::anyhow!("QUORUM_LOCAL_REPOS: `x` is not name=path"))
    })
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "QUORUM_LOCAL_REPOS: `x` is not name=path");

    let err = serve(&common(), |_boot| async {
        let task = tokio::spawn(async {
            Err(RuntimeError::Fatal {
                group: "g".into(),
                message: "handler gave up".into(),
            })
        });
        Ok::<_, RuntimeError>(handle(vec![task]))
    })
    .await
    .unwrap_err();
    assert!(err.to_string().contains("handler gave up"), "{err}");
}
