//! The `gateway` binary.

use std::sync::Arc;

use clap::Parser;
use quorum_gateway::{GatewayConfig, start};

#[derive(Parser)]
#[command(about = "Receives GitHub webhooks and enqueues review jobs")]
struct Args {
    #[command(flatten)]
    common: quorum_runtime::CommonArgs,
    /// The webhook secret configured on GitHub.
    #[arg(long, env = "GITHUB_WEBHOOK_SECRET", hide_env_values = true)]
    webhook_secret: String,
    /// Local repositories served as the change source: `owner/name=/path,...`.
    #[arg(long, env = "QUORUM_LOCAL_REPOS", default_value = "")]
    local_repos: String,
    /// `direct` posts reviews; `draft` stores them for `quorum approve`.
    #[arg(long, env = "QUORUM_PUBLISH_MODE", default_value = "direct")]
    publish_mode: quorum_core::PublishMode,
    /// Bearer token of the operator API (`/api/*`); unset turns the API off.
    #[arg(long, env = "QUORUM_OPERATOR_TOKEN", hide_env_values = true)]
    operator_token: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::telemetry::init_logging(!args.common.text_logs);
    let ctx = quorum_runtime::ServiceContext::from_args(&args.common)?;
    let store = quorum_store::connect(args.common.redis_url.as_deref(), &args.common.redis_prefix).await?;
    let source = Arc::new(quorum_scm::LocalRepos::parse(&args.local_repos)?);
    let mut config = GatewayConfig::new(args.common.http_addr, args.webhook_secret.into_bytes());
    config.policy.publish_mode = args.publish_mode;
    config.operator_token = args.operator_token;
    start(config, &ctx, store, source, quorum_runtime::shutdown::on_signal())
        .await?
        .wait()
        .await?;
    Ok(())
}
