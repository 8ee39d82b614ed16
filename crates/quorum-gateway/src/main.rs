//! The `gateway` binary.

use std::sync::Arc;

use clap::Parser;
use quorum_gateway::{GatewayConfig, start};

#[derive(Parser)]
#[command(about = "Receives GitHub and GitLab webhooks and enqueues review jobs")]
struct Args {
    #[command(flatten)]
    common: quorum_runtime::CommonArgs,
    /// The webhook secret configured on GitHub (unset: no GitHub webhooks).
    #[arg(long, env = "GITHUB_WEBHOOK_SECRET", hide_env_values = true, default_value = "")]
    webhook_secret: String,
    /// The secret token of GitLab's webhooks (unset: no GitLab webhooks).
    #[arg(long, env = "GITLAB_WEBHOOK_TOKEN", hide_env_values = true)]
    gitlab_webhook_token: Option<String>,
    /// Where changes come from: GitHub's or GitLab's API when configured
    /// (GITHUB_TOKEN, a GitHub App, or GITLAB_TOKEN), otherwise the local
    /// repositories.
    #[command(flatten)]
    repos: quorum_scm::TreeArgs,
    /// `direct` posts reviews; `draft` stores them for `quorum approve`.
    #[arg(long, env = "QUORUM_PUBLISH_MODE", default_value = "direct")]
    publish_mode: quorum_core::PublishMode,
    /// Bearer token of the operator API (`/api/*`); unset turns the API off.
    #[arg(long, env = "QUORUM_OPERATOR_TOKEN", hide_env_values = true)]
    operator_token: Option<String>,
    #[command(flatten)]
    memory: quorum_memory::learn::MemoryArgs,
    /// Answer 503 to new reviews while more requests than this wait for the
    /// slowest agent group (0 turns the limit off).
    #[arg(long, env = "QUORUM_MAX_BACKLOG", default_value_t = 1000)]
    max_backlog: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::serve(&args.common, |boot| async move {
        let trees = args.repos.trees()?;
        let mut config = GatewayConfig::new(args.common.http_addr, args.webhook_secret.into_bytes());
        config.gitlab_webhook_token = args
            .gitlab_webhook_token
            .filter(|t| !t.trim().is_empty())
            .map(|t| t.trim().as_bytes().to_vec());
        let source: Arc<dyn quorum_scm::ChangeSource> = match trees.api.clone() {
            Some(api) => {
                config.policy_source = Some(api.trees());
                config.scm = Some(api.provider());
                api.source()
            }
            None => Arc::new(trees.local),
        };
        config.policy.publish_mode = args.publish_mode;
        config.operator_token = args.operator_token;
        config.memory_policy = args.memory.policy();
        config.max_backlog = (args.max_backlog > 0).then_some(args.max_backlog);
        anyhow::Ok(start(config, &boot.ctx, boot.store, source, boot.shutdown).await?)
    })
    .await
}
