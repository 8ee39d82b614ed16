//! `quorum`: the operator CLI.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use quorum_cli::fleet::{Fleet, FleetOptions};
use quorum_cli::{demo, review};
use quorum_runtime::{CommonArgs, EmbeddedBroker, ServiceContext};

#[derive(Parser)]
#[command(name = "quorum", version, about = "Quorum: multi-agent pull-request review")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Review one storefront case end to end on the embedded defaults.
    Demo(demo::DemoArgs),
    /// Review a local git range through the whole fleet and print the review.
    Review(review::ReviewArgs),
    /// Run every service in this process.
    Up(Box<UpArgs>),
    /// Host an embedded Kafka-protocol broker for separate service processes.
    Broker {
        /// Loopback port to listen on (0 picks one).
        #[arg(long, default_value_t = 9092)]
        port: u16,
    },
    /// List recent runs and their state (needs REDIS_URL to see another process's runs).
    Runs {
        #[arg(long, env = "REDIS_URL")]
        redis_url: Option<String>,
        #[arg(long, env = "QUORUM_REDIS_PREFIX", default_value = "quorum:")]
        redis_prefix: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// List or replay dead-lettered messages (`review.dlq`).
    Dlq {
        #[command(subcommand)]
        action: DlqAction,
        /// Kafka bootstrap servers (a real cluster, or a `quorum broker`).
        #[arg(long, env = "KAFKA_BROKERS", global = true)]
        kafka_brokers: Option<String>,
    },
    /// Build the code graph of a directory and print its stats.
    Index(quorum_cli::graph_cmd::IndexArgs),
    /// Print the impact report of a local git range.
    Impact(quorum_cli::graph_cmd::ImpactArgs),
    /// Serve a local checkout over MCP (stdio, or streamable HTTP with --http) for an editor's agent.
    Mcp(Box<quorum_cli::mcp_cmd::McpArgs>),
    /// Hybrid search (dense + BM25, coverage-weighted fusion) over a directory's code or docs, indexing it first.
    Search(quorum_cli::search_cmd::SearchCmdArgs),
    /// Review memory: harvest past reviews and answers to Quorum, list, approve, retire, export, import, search.
    #[command(subcommand)]
    Memory(Box<quorum_cli::memory_cmd::MemoryCommand>),
    /// Publish a draft review that is waiting for approval.
    Approve(DraftArgs),
    /// Drop a draft review without publishing it.
    Discard(DraftArgs),
}

#[derive(Subcommand)]
enum DlqAction {
    /// Print every DLQ message: where it came from, which group gave up, and why.
    List,
    /// Re-publish DLQ messages to their original topic, for the group that gave up.
    Replay {
        /// DLQ offsets (`partition:offset`) to replay.
        #[arg(long, value_delimiter = ',', required_unless_present = "all")]
        only: Vec<String>,
        /// Replay every DLQ message.
        #[arg(long)]
        all: bool,
    },
}

async fn dlq(brokers: Option<String>, action: DlqAction) -> anyhow::Result<()> {
    let brokers = brokers.context("KAFKA_BROKERS (or --kafka-brokers) is required: the DLQ lives on the broker")?;
    let bus = quorum_runtime::BusConfig::new(brokers);
    let entries = quorum_runtime::dlq::read_all(&bus, Duration::from_secs(2)).await?;
    match action {
        DlqAction::List => {
            for e in &entries {
                let h = |n| e.header(n).unwrap_or_default();
                use quorum_events::headers as hd;
                println!(
                    "{}:{}  key={}  from {}[{}]@{}  group={}  {}: {}",
                    e.partition,
                    e.offset,
                    e.key,
                    h(hd::DLQ_TOPIC),
                    h(hd::DLQ_PARTITION),
                    h(hd::DLQ_OFFSET),
                    h(hd::DLQ_GROUP),
                    h(hd::DLQ_ERROR_KIND),
                    h(hd::DLQ_ERROR)
                );
            }
            eprintln!("{} message(s) on review.dlq", entries.len());
        }
        DlqAction::Replay { only, all } => {
            let producer = quorum_runtime::BusProducer::new(&bus)?;
            let mut n = 0;
            for e in &entries {
                let id = format!("{}:{}", e.partition, e.offset);
                if all || only.contains(&id) {
                    quorum_runtime::dlq::replay(&producer, e).await?;
                    n += 1;
                }
            }
            producer.flush();
            eprintln!("replayed {n} message(s)");
        }
    }
    Ok(())
}

async fn decide(args: DraftArgs, decision: quorum_events::DraftDecision) -> anyhow::Result<()> {
    let store = quorum_store::connect(Some(&args.redis_url), &args.redis_prefix).await?;
    let producer = quorum_runtime::BusProducer::new(&quorum_runtime::BusConfig::new(args.kafka_brokers))?;
    let operator = format!("cli:{}", std::env::var("USER").unwrap_or_else(|_| "unknown".into()));
    let wait = Duration::from_secs(args.wait_secs);
    match quorum_cli::drafts::decide(store.as_ref(), &producer, &args.job, decision, &operator, wait).await? {
        quorum_cli::drafts::Decided::Applied(state) => eprintln!("{}: {}", args.job, state.as_str()),
        quorum_cli::drafts::Decided::Queued if args.wait_secs == 0 => {
            eprintln!("{}: queued on review.draft.decided", args.job)
        }
        quorum_cli::drafts::Decided::Queued => anyhow::bail!(
            "{}: queued on review.draft.decided, but the publisher has not applied it within {} s (is it running?)",
            args.job,
            args.wait_secs
        ),
    }
    Ok(())
}

#[derive(clap::Args)]
struct DraftArgs {
    /// The job whose draft to decide.
    job: String,
    /// The fleet's state store (where the draft is).
    #[arg(long, env = "REDIS_URL")]
    redis_url: String,
    #[arg(long, env = "QUORUM_REDIS_PREFIX", default_value = "quorum:")]
    redis_prefix: String,
    /// The fleet's Kafka: the decision goes to the publisher on `review.draft.decided`.
    #[arg(long, env = "KAFKA_BROKERS")]
    kafka_brokers: String,
    /// How long to wait for the publisher to apply it (0: send and return).
    #[arg(long, default_value_t = 60)]
    wait_secs: u64,
}

#[derive(clap::Args)]
struct UpArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Gateway listen address.
    #[arg(long, env = "QUORUM_GATEWAY_ADDR", default_value = "127.0.0.1:8080")]
    gateway_addr: std::net::SocketAddr,
    /// The secret of GitHub's webhooks (unset: no GitHub webhooks).
    #[arg(long, env = "GITHUB_WEBHOOK_SECRET", hide_env_values = true, default_value = "")]
    webhook_secret: String,
    /// The secret token of GitLab's webhooks (unset: no GitLab webhooks).
    #[arg(long, env = "GITLAB_WEBHOOK_TOKEN", hide_env_values = true)]
    gitlab_webhook_token: Option<String>,
    /// Local repositories, clones, and GitHub (GITHUB_TOKEN or a GitHub App)
    /// or GitLab (GITLAB_TOKEN): with one configured, changes are read from
    /// it and reviews posted there.
    #[command(flatten)]
    repos: quorum_scm::TreeArgs,
    #[arg(long, env = "QUORUM_AGGREGATOR_DEADLINE_SECS", default_value_t = 300)]
    deadline_secs: u64,
    /// `draft` stores reviews for `quorum approve` instead of posting them.
    #[arg(long, env = "QUORUM_PUBLISH_MODE", default_value = "direct")]
    publish_mode: quorum_core::PublishMode,
    /// The operator API's bearer token (`/api/*` and the console at
    /// `/console`); unset: both are off.
    #[arg(long, env = "QUORUM_OPERATOR_TOKEN", hide_env_values = true)]
    operator_token: Option<String>,
    /// Serve this local checkout over MCP at the gateway's `/mcp` (bearer:
    /// the operator token).
    #[arg(long, env = "QUORUM_MCP_REPO")]
    mcp_repo: Option<std::path::PathBuf>,
    /// The name MCP tools take as `repo` (default: the directory's name).
    #[arg(long, env = "QUORUM_MCP_NAME")]
    mcp_name: Option<String>,
    /// `Host` values `/mcp` accepts besides loopback (the gateway's service name).
    #[arg(long = "mcp-allowed-host", env = "QUORUM_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    mcp_allowed_hosts: Vec<String>,
    #[command(flatten)]
    llm: quorum_llm::LlmArgs,
    #[command(flatten)]
    search: quorum_search::SearchArgs,
}

/// Interactive commands print their own progress; logs only for warnings.
fn quiet_logs() {
    quorum_runtime::telemetry::set_default_level("warn");
    quorum_runtime::telemetry::init_logging(false);
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Demo(args) => {
            quiet_logs();
            demo::run(args).await?;
        }
        Command::Review(args) => {
            quiet_logs();
            review::run(args).await?;
        }
        Command::Dlq { action, kafka_brokers } => dlq(kafka_brokers, action).await?,
        Command::Index(args) => quorum_cli::graph_cmd::index(args).await?,
        Command::Impact(args) => quorum_cli::graph_cmd::impact_cmd(args).await?,
        Command::Mcp(args) => {
            // stdout may be the protocol: logs (warnings only) go to stderr.
            quiet_logs();
            quorum_cli::mcp_cmd::run(*args).await?;
        }
        Command::Search(args) => {
            quiet_logs();
            quorum_cli::search_cmd::run(args).await?;
        }
        Command::Memory(cmd) => {
            if !quorum_cli::memory_cmd::run(*cmd).await? {
                std::process::exit(1);
            }
        }
        Command::Approve(args) => decide(args, quorum_events::DraftDecision::Approve).await?,
        Command::Discard(args) => decide(args, quorum_events::DraftDecision::Discard).await?,
        Command::Up(args) => {
            quorum_runtime::telemetry::init_logging(!args.common.text_logs);
            let llm = args.llm.config()?;
            let ctx = ServiceContext::from_args(&args.common)?;
            let store = quorum_store::connect(args.common.redis_url.as_deref(), &args.common.redis_prefix).await?;
            let trees = Arc::new(args.repos.trees()?);
            let api = trees.api.clone();
            let source: Arc<dyn quorum_scm::ChangeSource> = match &api {
                Some(a) => a.source(),
                None => Arc::new(quorum_scm::LocalRepos::parse(&args.repos.local_repos)?),
            };
            let shutdown = quorum_runtime::shutdown::on_signal();
            let operator_token = args.operator_token.clone().filter(|t| !t.is_empty());
            let mcp = match &args.mcp_repo {
                None => None,
                Some(dir) => {
                    let token = operator_token
                        .clone()
                        .context("--mcp-repo serves /mcp behind the operator token: set QUORUM_OPERATOR_TOKEN")?;
                    let (server, name) = quorum_cli::mcp_cmd::server(
                        dir,
                        args.mcp_name.as_deref(),
                        &quorum_cli::graph_cmd::default_cache(),
                        &args.search,
                        llm.clone(),
                        None,
                    )
                    .await?;
                    eprintln!("quorum up: MCP for `{name}` at /mcp");
                    let opts = quorum_mcp::HttpOptions {
                        token: Some(token),
                        allowed_hosts: args.mcp_allowed_hosts.clone(),
                    };
                    Some(quorum_mcp::http_router(server, opts, shutdown.clone()))
                }
            };
            let fleet = Fleet::start(
                FleetOptions {
                    ctx,
                    store,
                    source,
                    trees,
                    sink: api.as_ref().map(|a| a.sink()),
                    policy_source: api.as_ref().map(|a| a.trees()),
                    scm: api.as_ref().map(|a| a.provider()),
                    gitlab_webhook_token: args.gitlab_webhook_token.clone(),
                    gateway_addr: args.gateway_addr,
                    webhook_secret: args.webhook_secret.into_bytes(),
                    print_reviews: true,
                    aggregator_deadline: Duration::from_secs(args.deadline_secs),
                    publish_mode: args.publish_mode,
                    llm,
                    search: quorum_search::open_index(&args.search).await?,
                    memory_refresh: quorum_indexer::MemoryRefresh::from_api(api.as_ref(), 100),
                    operator_token,
                    mcp,
                },
                shutdown.clone(),
            )
            .await?;
            eprintln!("quorum up: gateway on http://{}", fleet.gateway);
            shutdown.cancelled().await;
            fleet.stop().await?;
        }
        Command::Broker { port } => {
            quorum_runtime::telemetry::init_logging(false);
            let broker = EmbeddedBroker::start_on_port(port)
                .await
                .context("starting the embedded broker")?;
            println!("{}", broker.bootstrap_servers());
            quorum_runtime::shutdown::on_signal().cancelled().await;
            drop(broker);
        }
        Command::Runs {
            redis_url,
            redis_prefix,
            limit,
        } => {
            if redis_url.as_deref().is_none_or(|u| u.trim().is_empty()) {
                anyhow::bail!(
                    "no REDIS_URL: without Redis, runs live in the memory of the process that reviewed them \
                     (`quorum up`, `demo`, `review`) and end with it. Point at the fleet's Redis: \
                     `REDIS_URL=redis://host:6379 quorum runs`"
                );
            }
            let store = quorum_store::connect(redis_url.as_deref(), &redis_prefix).await?;
            let jobs = store.list_jobs(&quorum_store::RunFilter::all(), 0, limit).await?;
            if jobs.is_empty() {
                eprintln!("no runs in this Redis (prefix `{redis_prefix}`) yet");
            }
            for id in jobs {
                let run = store.get_run(&id).await?;
                let state = run.as_ref().map(|r| r.state.as_str()).unwrap_or("unknown");
                let agents = run
                    .map(|r| {
                        r.agents
                            .iter()
                            .map(|(a, s)| format!("{a}={}", s.as_str()))
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_default();
                println!("{id}  {state:<10}  {agents}");
            }
        }
    }
    Ok(())
}
