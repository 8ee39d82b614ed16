//! The `security` agent.

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    quorum_agent::main_for(quorum_core::AgentRole::Security).await
}
