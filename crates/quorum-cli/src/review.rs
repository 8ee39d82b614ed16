//! `quorum review --repo DIR --base A --head B`: reviews a local git range
//! through the whole fleet (embedded), with the same normalised request the
//! gateway produces, and prints the published review.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use quorum_core::{JobPolicy, Provider, Review};
use quorum_gateway::intake::{ChangeRequest, Intake};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::LocalGit;
use quorum_store::MemoryStore;

use crate::fleet::{Fleet, FleetOptions, wait_for_review};

#[derive(Debug, Clone, clap::Args)]
pub struct ReviewArgs {
    /// The git repository.
    #[arg(long)]
    pub repo: PathBuf,
    /// Base ref (the PR's target).
    #[arg(long)]
    pub base: String,
    /// Head ref (the PR's tip).
    #[arg(long, default_value = "HEAD")]
    pub head: String,
    /// Title to review under (a PR title).
    #[arg(long, default_value = "Local change")]
    pub title: String,
    #[command(flatten)]
    pub llm: quorum_llm::LlmArgs,
}

/// `local/<directory name>`, made a valid repository name.
pub fn local_name(dir: &std::path::Path) -> String {
    let base = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "repo".into());
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let clean: String = clean.trim_start_matches(['-', '.']).chars().take(100).collect();
    if clean.is_empty() {
        "local/repo".into()
    } else {
        format!("local/{clean}")
    }
}

pub async fn run(args: ReviewArgs) -> anyhow::Result<Review> {
    let llm = args.llm.config()?;
    let store: Arc<dyn quorum_store::StateStore> = Arc::new(MemoryStore::new());
    let name = local_name(&args.repo);
    let review = review_range(&args.repo, &name, &args.base, &args.head, args.title, store, llm).await?;
    println!("{}", crate::terminal::render(&review));
    Ok(review)
}

/// Reviews `base..head` of a local repository through an embedded fleet on
/// `store`, as repository `name` (what the store keys memory and runs by).
pub async fn review_range(
    dir: &std::path::Path,
    name: &str,
    base: &str,
    head: &str,
    title: String,
    store: Arc<dyn quorum_store::StateStore>,
    llm: Option<quorum_llm::LlmConfig>,
) -> anyhow::Result<Review> {
    let timeout = crate::fleet::review_timeout(llm.as_ref());
    let git = LocalGit::open(dir)?;
    let ctx = ServiceContext::embedded(|_| {})?;
    let source = Arc::new(git);
    let fleet = Fleet::start(
        FleetOptions {
            llm,
            ..FleetOptions::local(ctx.clone(), store.clone(), source.clone())
        },
        CancellationToken::new(),
    )
    .await?;
    let intake = Intake::new(store.clone(), ctx.producer.clone(), source);
    let submitted = intake
        .submit(ChangeRequest {
            provider: Provider::Local,
            repo: name.to_string(),
            number: 0,
            title,
            body: String::new(),
            author: String::new(),
            base: base.to_string(),
            head: head.to_string(),
            policy: JobPolicy::default(),
            files: None,
            dedupe_suffix: None,
        })
        .await
        .context("submitting the change")?;
    let review = wait_for_review(store.as_ref(), &submitted.job_id, timeout).await?;
    fleet.stop().await?;
    Ok(review)
}

#[cfg(test)]
mod tests {
    #[test]
    fn local_names_are_valid_repository_names() {
        for dir in ["/tmp", "."] {
            let n = super::local_name(std::path::Path::new(dir));
            assert!(quorum_core::job::validate_repo_name(&n).is_ok(), "{n}");
        }
    }
}
