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
    /// Review memory: distinct pull requests with evidence before a learned
    /// item is suggested or made active.
    #[arg(long, env = "QUORUM_MEMORY_MIN_PRS", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    memory_min_prs: u64,
    /// Days a learned item waits as suggested before it applies by itself.
    #[arg(long, env = "QUORUM_MEMORY_APPROVAL_DELAY_DAYS", default_value_t = 0)]
    memory_approval_delay_days: u32,
    /// Days without a match after which an active item is re-validated.
    #[arg(long, env = "QUORUM_MEMORY_STALE_AFTER_DAYS", default_value_t = 180)]
    memory_stale_after_days: u32,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // Checked before anything connects (it logs nothing).
    let llm = args.llm.config()?;
    quorum_runtime::serve(&args.common, |boot| async move {
        let trees = Arc::new(args.repos.trees()?);
        let index = Arc::new(quorum_context::GraphIndex::new(boot.store.clone(), trees));
        let options = quorum_critic::CriticOptions {
            llm,
            context: Some(Arc::new(quorum_context::ContextBuilder::new(index))),
            memory_policy: quorum_memory::Policy {
                min_prs: args.memory_min_prs as usize,
                approval_delay_days: args.memory_approval_delay_days.into(),
                stale_after_days: args.memory_stale_after_days.into(),
            },
        };
        anyhow::Ok(quorum_critic::start(args.common.http_addr, &boot.ctx, boot.store, options, boot.shutdown).await?)
    })
    .await
}
