//! The `critic` binary.

use std::sync::Arc;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Judges aggregated findings and writes the verdict")]
struct Args {
    #[command(flatten)]
    common: quorum_runtime::CommonArgs,
    /// Repository access, to check claims about call sites outside the diff
    /// against the impact report.
    #[command(flatten)]
    repos: quorum_scm::TreeArgs,
    #[command(flatten)]
    llm: quorum_llm::LlmArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::telemetry::init_logging(!args.common.text_logs);
    let llm = args.llm.config()?;
    let ctx = quorum_runtime::ServiceContext::from_args(&args.common)?;
    let store = quorum_store::connect(args.common.redis_url.as_deref(), &args.common.redis_prefix).await?;
    let trees = Arc::new(args.repos.trees()?);
    let index = Arc::new(quorum_context::GraphIndex::new(store.clone(), trees));
    let options = quorum_critic::CriticOptions {
        llm,
        context: Some(Arc::new(quorum_context::ContextBuilder::new(index))),
    };
    quorum_critic::start(
        args.common.http_addr,
        &ctx,
        store,
        options,
        quorum_runtime::shutdown::on_signal(),
    )
    .await?
    .wait()
    .await?;
    Ok(())
}
