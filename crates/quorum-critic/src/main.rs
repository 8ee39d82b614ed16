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
    #[command(flatten)]
    memory: quorum_context::memory::MemoryArgs,
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
            context: Some(Arc::new(
                quorum_context::ContextBuilder::new(index).with_memory_policy(args.memory.policy()),
            )),
            memory_policy: args.memory.policy(),
        };
        anyhow::Ok(quorum_critic::start(args.common.http_addr, &boot.ctx, boot.store, options, boot.shutdown).await?)
    })
    .await
}
