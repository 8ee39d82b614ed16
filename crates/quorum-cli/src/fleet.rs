//! Every service in one process (`quorum up`, `demo`, `review`, `bench`, the
//! black-box tests). Each service is started exactly as its own binary
//! starts it; they share the process's broker, store and metrics registry.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use quorum_aggregator::AggregatorConfig;
use quorum_context::{ContextBuilder, GraphIndex};
use quorum_core::{AgentRole, PublishMode, Review, RunState};
use quorum_gateway::GatewayConfig;
use quorum_publisher::LocalSink;
use quorum_runtime::{CancellationToken, ServiceContext, ServiceHandle};
use quorum_scm::{ChangeSource, ReviewSink, TreeSource};
use quorum_store::StateStore;

/// What the fleet is started with.
pub struct FleetOptions {
    pub ctx: ServiceContext,
    pub store: Arc<dyn StateStore>,
    pub source: Arc<dyn ChangeSource>,
    /// Where agents and the indexer read repository trees.
    pub trees: Arc<dyn TreeSource>,
    pub gateway_addr: SocketAddr,
    pub webhook_secret: Vec<u8>,
    pub print_reviews: bool,
    pub aggregator_deadline: Duration,
    /// `draft`: reviews are stored for `quorum approve`, not posted.
    pub publish_mode: PublishMode,
    /// The model for the reviewer, security and tests roles and the
    /// critic; `None`: the offline engine.
    pub llm: Option<quorum_llm::LlmConfig>,
    /// Where reviews are posted; `None`: the run store ([`LocalSink`]).
    pub sink: Option<Arc<dyn ReviewSink>>,
    /// Where the gateway reads `.quorum.yml`; `None`: server defaults.
    pub policy_source: Option<Arc<dyn TreeSource>>,
    /// The SCM changes are read from; the gateway refuses the other's hooks.
    pub scm: Option<quorum_core::Provider>,
    /// GitLab's webhook secret token; `None`: `/webhooks/gitlab` is off.
    pub gitlab_webhook_token: Option<String>,
    /// The hybrid index the indexer fills and the model agents search;
    /// `None`: the graph only.
    pub search: Option<Arc<quorum_search::HybridIndex>>,
    /// Review history the indexer refreshes memory from on a branch's
    /// index request; `None`: memory changes only through `quorum memory`.
    pub memory_refresh: Option<quorum_indexer::MemoryRefresh>,
    /// The operator API's and the console's token; `None`: both off.
    pub operator_token: Option<String>,
    /// The MCP endpoint the gateway serves at `/mcp` (`quorum up --mcp-repo`).
    pub mcp: Option<axum::Router>,
}

impl FleetOptions {
    /// A fleet for one local run (demo, review, bench, eval): gateway on a
    /// free loopback port, a random webhook secret, reviews not printed.
    pub fn local<S: ChangeSource + TreeSource>(ctx: ServiceContext, store: Arc<dyn StateStore>, repos: Arc<S>) -> Self {
        FleetOptions {
            ctx,
            store,
            source: repos.clone(),
            trees: repos,
            gateway_addr: LOOPBACK_ANY.parse().expect("valid address"),
            webhook_secret: uuid::Uuid::new_v4().to_string().into_bytes(),
            print_reviews: false,
            aggregator_deadline: Duration::from_secs(60),
            publish_mode: PublishMode::Direct,
            llm: None,
            sink: None,
            policy_source: None,
            scm: None,
            gitlab_webhook_token: None,
            search: None,
            memory_refresh: None,
            operator_token: None,
            mcp: None,
        }
    }
}

/// How long a local run waits for a review: a model on a CPU can take
/// minutes per role, the offline engine milliseconds.
pub fn review_timeout(llm: Option<&quorum_llm::LlmConfig>) -> Duration {
    match llm {
        Some(c) => c.timeout * (u32::from(quorum_llm::config::MAX_TURNS) + 2),
        None => Duration::from_secs(120),
    }
}

/// A running fleet.
pub struct Fleet {
    pub gateway: SocketAddr,
    pub ctx: ServiceContext,
    pub store: Arc<dyn StateStore>,
    /// The graphs the agents and the indexer share.
    pub index: Arc<GraphIndex>,
    pub handles: Vec<ServiceHandle>,
    pub shutdown: CancellationToken,
}

const LOOPBACK_ANY: &str = "127.0.0.1:0";

impl Fleet {
    pub async fn start(opts: FleetOptions, shutdown: CancellationToken) -> anyhow::Result<Fleet> {
        let any: SocketAddr = LOOPBACK_ANY.parse().expect("valid address");
        let ctx = opts.ctx;
        let store = opts.store;
        let mut handles = Vec::new();
        let mut gateway_config = GatewayConfig::new(opts.gateway_addr, opts.webhook_secret);
        gateway_config.policy.publish_mode = opts.publish_mode;
        gateway_config.policy_source = opts.policy_source;
        gateway_config.scm = opts.scm;
        gateway_config.operator_token = opts.operator_token.clone();
        gateway_config.mcp = opts.mcp;
        gateway_config.gitlab_webhook_token = opts
            .gitlab_webhook_token
            .filter(|t| !t.trim().is_empty())
            .map(|t| t.trim().as_bytes().to_vec());
        let gateway = quorum_gateway::start(gateway_config, &ctx, store.clone(), opts.source, shutdown.clone())
            .await
            .context("starting the gateway")?;
        let gateway_addr = gateway.http_addr;
        handles.push(gateway);
        let index = Arc::new(GraphIndex::new(store.clone(), opts.trees));
        let context = Arc::new(ContextBuilder::new(index.clone()));
        for role in AgentRole::ALL {
            let cfg = quorum_agent::AgentConfig {
                role,
                http_addr: any,
                llm: opts.llm.clone(),
                search: opts.search.clone(),
            };
            handles.push(quorum_agent::start(cfg, &ctx, Some(context.clone()), shutdown.clone()).await?);
        }
        let mut agg = AggregatorConfig::new(any);
        // With a model, the join waits as long as one review may take.
        agg.deadline = match &opts.llm {
            Some(_) => opts.aggregator_deadline.max(review_timeout(opts.llm.as_ref())),
            None => opts.aggregator_deadline,
        };
        agg.sweep_every = Duration::from_millis(500).min(opts.aggregator_deadline);
        handles.push(quorum_aggregator::start(agg, &ctx, store.clone(), shutdown.clone()).await?);
        let critic = quorum_critic::CriticOptions {
            llm: opts.llm.clone(),
            context: Some(context.clone()),
            memory_policy: Default::default(),
        };
        handles.push(quorum_critic::start(any, &ctx, store.clone(), critic, shutdown.clone()).await?);
        let sink = opts
            .sink
            .unwrap_or_else(|| Arc::new(LocalSink::new(store.clone(), opts.print_reviews)));
        handles.push(quorum_publisher::start(any, &ctx, store.clone(), sink, shutdown.clone()).await?);
        handles.push(
            quorum_indexer::start(
                any,
                &ctx,
                store.clone(),
                index.clone(),
                opts.search.clone(),
                opts.memory_refresh.clone(),
                shutdown.clone(),
            )
            .await?,
        );
        Ok(Fleet {
            gateway: gateway_addr,
            ctx,
            store,
            index,
            handles,
            shutdown,
        })
    }

    /// Stops every service (each finishes its message in hand).
    pub async fn stop(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        for h in self.handles {
            h.wait().await?;
        }
        Ok(())
    }
}

/// Waits until a job's review is published (or drafted) and returns it.
pub async fn wait_for_review(store: &dyn StateStore, job_id: &str, timeout: Duration) -> anyhow::Result<Review> {
    let start = Instant::now();
    loop {
        if let Some(run) = store.get_run(job_id).await? {
            match run.state {
                RunState::Published => {
                    let json = store
                        .get_review(job_id)
                        .await?
                        .context("published run without a stored review")?;
                    return Ok(serde_json::from_str(&json)?);
                }
                RunState::Draft => {
                    let json = store
                        .get_draft(job_id)
                        .await?
                        .context("draft run without a stored draft")?;
                    return Ok(serde_json::from_str(&json)?);
                }
                RunState::Failed => bail!("review {job_id} failed: {}", run.reason.unwrap_or_default()),
                _ => {}
            }
        }
        if start.elapsed() > timeout {
            bail!("review {job_id} not published after {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
