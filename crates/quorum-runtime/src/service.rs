//! What every service is started with, and how it reports back.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::broker::EmbeddedBroker;
use crate::config::BusConfig;
use crate::error::RuntimeError;
use crate::metrics::Metrics;
use crate::ops;
use crate::producer::BusProducer;
use crate::worker::{Handler, Worker, WorkerSpec};

/// Settings every binary shares, from flags or the environment.
#[derive(Debug, Clone, clap::Args)]
pub struct CommonArgs {
    /// Kafka bootstrap servers. Unset: an embedded broker in this process
    /// (only useful with `quorum up`, or for a single service in a test).
    #[arg(long, env = "KAFKA_BROKERS")]
    pub kafka_brokers: Option<String>,
    /// Redis URL for shared state. Unset: in-memory (this process only).
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: Option<String>,
    /// Key prefix in Redis, so fleets can share a server.
    #[arg(long, env = "QUORUM_REDIS_PREFIX", default_value = "quorum:")]
    pub redis_prefix: String,
    /// Where `/healthz` and `/metrics` are served (port 0 picks one).
    #[arg(long, env = "HTTP_ADDR", default_value = "0.0.0.0:9090")]
    pub http_addr: SocketAddr,
    /// `session.timeout.ms` of every consumer.
    #[arg(long, env = "KAFKA_SESSION_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1000..=300_000))]
    pub session_timeout_ms: u64,
    /// `fetch.wait.max.ms` of every consumer.
    #[arg(long, env = "KAFKA_FETCH_WAIT_MAX_MS", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=5_000))]
    pub fetch_wait_max_ms: u64,
    /// Messages each consumer of this service handles at once (unset: the
    /// group's default — 8 for agents and the critic, 4 for the aggregator
    /// and the publisher, 1 for the indexer).
    #[arg(long, env = "QUORUM_MAX_IN_FLIGHT", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub max_in_flight: Option<u64>,
    /// Plain-text logs instead of JSON lines.
    #[arg(long, env = "QUORUM_TEXT_LOGS")]
    pub text_logs: bool,
}

/// The bus side of a running service: config, producer, metrics, and the
/// embedded broker when this process hosts one.
#[derive(Clone)]
pub struct ServiceContext {
    pub bus: BusConfig,
    pub producer: BusProducer,
    pub metrics: Metrics,
    /// Kept alive for as long as any service uses it.
    pub broker: Option<Arc<EmbeddedBroker>>,
}

impl ServiceContext {
    /// Connects to `bus.brokers`.
    pub fn new(bus: BusConfig, metrics: Metrics) -> Result<Self, RuntimeError> {
        let producer = BusProducer::new(&bus)?;
        Ok(ServiceContext {
            bus,
            producer,
            metrics,
            broker: None,
        })
    }

    /// An embedded broker in this process plus a context on it.
    pub fn embedded(configure: impl FnOnce(&mut BusConfig)) -> Result<Self, RuntimeError> {
        let broker = Arc::new(EmbeddedBroker::start()?);
        let mut bus = BusConfig::new(broker.bootstrap_servers());
        configure(&mut bus);
        let mut ctx = Self::new(bus, Metrics::new())?;
        ctx.broker = Some(broker);
        Ok(ctx)
    }

    /// From the shared flags: the configured cluster, or an embedded broker.
    pub fn from_args(args: &CommonArgs) -> Result<Self, RuntimeError> {
        let tune = |bus: &mut BusConfig| {
            bus.session_timeout = Duration::from_millis(args.session_timeout_ms);
            bus.fetch_wait_max = Duration::from_millis(args.fetch_wait_max_ms);
            bus.max_in_flight = args.max_in_flight.map(|n| n as usize);
        };
        match &args.kafka_brokers {
            Some(brokers) => {
                let mut bus = BusConfig::new(brokers.clone());
                tune(&mut bus);
                Self::new(bus, Metrics::new())
            }
            None => {
                tracing::warn!("KAFKA_BROKERS is not set: using an embedded broker private to this process");
                Self::embedded(tune)
            }
        }
    }

    /// Starts a consumer-group member running `handler`.
    pub fn spawn_worker(
        &self,
        spec: WorkerSpec,
        handler: Arc<dyn Handler>,
        shutdown: CancellationToken,
    ) -> Result<JoinHandle<Result<(), RuntimeError>>, RuntimeError> {
        let worker = Worker::new(&self.bus, spec, handler, self.producer.clone(), self.metrics.clone())?;
        Ok(tokio::spawn(worker.run(shutdown)))
    }
}

/// A started service: where its HTTP endpoints are, and its tasks.
pub struct ServiceHandle {
    pub name: String,
    pub http_addr: SocketAddr,
    pub tasks: Vec<JoinHandle<Result<(), RuntimeError>>>,
}

impl ServiceHandle {
    /// Waits for every task; the first error wins.
    pub async fn wait(self) -> Result<(), RuntimeError> {
        let mut result = Ok(());
        for t in self.tasks {
            match t.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    if result.is_ok() {
                        result = Err(e);
                    }
                }
                Err(e) => {
                    if result.is_ok() {
                        result = Err(RuntimeError::Fatal {
                            group: self.name.clone(),
                            message: format!("task panicked: {e}"),
                        });
                    }
                }
            }
        }
        // Spans of the last messages must not die with the process.
        let _ = tokio::task::spawn_blocking(crate::telemetry::flush).await;
        result
    }
}

/// What a service binary's `start` gets from [`serve`].
pub struct Boot {
    /// The bus: the configured cluster, or an embedded broker.
    pub ctx: ServiceContext,
    /// Redis at `REDIS_URL`, or in memory.
    pub store: Arc<dyn quorum_store::StateStore>,
    /// Cancelled on SIGTERM or Ctrl-C.
    pub shutdown: CancellationToken,
}

/// A service binary's life after its flags are parsed: logs (JSON lines
/// unless `--text-logs`), the bus context, the state store and the signal
/// handler, in that order; then `start` (which builds the service from
/// [`Boot`]) and waiting until the service stops. The first error ends the
/// process with that error.
///
/// ```ignore
/// quorum_runtime::serve(&args.common, |boot| async move {
///     start(config, &boot.ctx, boot.store, boot.shutdown).await
/// })
/// .await
/// ```
pub async fn serve<F, Fut, E>(common: &CommonArgs, start: F) -> anyhow::Result<()>
where
    F: FnOnce(Boot) -> Fut,
    Fut: Future<Output = Result<ServiceHandle, E>>,
    E: Into<anyhow::Error>,
{
    crate::telemetry::init_logging(!common.text_logs);
    let ctx = ServiceContext::from_args(common)?;
    let store = quorum_store::connect(common.redis_url.as_deref(), &common.redis_prefix).await?;
    let boot = Boot {
        // The service borrows its copy; this one keeps an embedded broker
        // alive until the service has stopped.
        ctx: ctx.clone(),
        store,
        shutdown: crate::shutdown::on_signal(),
    };
    let handle = start(boot).await.map_err(Into::into)?;
    handle.wait().await?;
    drop(ctx);
    Ok(())
}

/// Starts a worker service: one consumer plus `/healthz` and `/metrics`.
pub async fn start_worker_service(
    ctx: &ServiceContext,
    spec: WorkerSpec,
    handler: Arc<dyn Handler>,
    http_addr: SocketAddr,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    let name = spec.service.clone();
    start_workers_service(ctx, &name, vec![(spec, handler)], http_addr, shutdown).await
}

/// A service with several consumers (each its own group and topic) behind
/// one `/healthz` and `/metrics`.
pub async fn start_workers_service(
    ctx: &ServiceContext,
    name: &str,
    workers: Vec<(WorkerSpec, Arc<dyn Handler>)>,
    http_addr: SocketAddr,
    shutdown: CancellationToken,
) -> Result<ServiceHandle, RuntimeError> {
    let server = ops::serve(http_addr, ops::ops_router(ctx.metrics.clone()), shutdown.clone()).await?;
    let mut tasks = vec![];
    for (spec, handler) in workers {
        tasks.push(ctx.spawn_worker(spec, handler, shutdown.clone())?);
    }
    tasks.push(tokio::spawn(async move {
        match server.task.await {
            Ok(r) => r.map_err(RuntimeError::Io),
            Err(e) => Err(RuntimeError::Io(std::io::Error::other(e))),
        }
    }));
    Ok(ServiceHandle {
        name: name.to_string(),
        http_addr: server.addr,
        tasks,
    })
}
