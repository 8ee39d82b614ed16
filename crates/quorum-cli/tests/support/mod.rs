//! One storefront case through the whole in-process fleet with a model
//! configured, keeping the fleet's metrics for the test to read.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quorum_cli::fleet::{Fleet, FleetOptions, review_timeout, wait_for_review};
use quorum_cli::webhook::{open_pull_request, pull_request_payload};
use quorum_core::{AgentRole, Review};
use quorum_eval::{build_case_repo, case::load_case};
use quorum_events::AgentResult;
use quorum_llm::LlmConfig;
use quorum_runtime::{CancellationToken, Metrics, ServiceContext};
use quorum_scm::{LocalGit, LocalRepos};
use quorum_store::MemoryStore;

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture")
}

/// The file and line the case's first expected issue points at.
pub fn anchor_line(case_id: &str) -> (String, u32) {
    let root = fixture();
    let case = load_case(&root.join(format!("cases/{case_id}.json"))).unwrap();
    let exp = &case.expected[0];
    let mut text = std::fs::read_to_string(root.join(&exp.file)).unwrap();
    for e in case.edits.iter().filter(|e| e.file == exp.file) {
        text = text.replacen(&e.find, &e.replace, 1);
    }
    let at = text.find(&exp.anchor).expect("anchor in the edited file");
    (exp.file.clone(), text[..at].matches('\n').count() as u32 + 1)
}

/// Reviews `case_id` as a signed PR webhook through every service.
pub async fn review_case(case_id: &str, llm: LlmConfig) -> (Review, Metrics) {
    let (review, metrics, _) = review_case_with_results(case_id, llm).await;
    (review, metrics)
}

/// [`review_case`], with every agent's result as the store keeps it.
pub async fn review_case_with_results(
    case_id: &str,
    llm: LlmConfig,
) -> (Review, Metrics, BTreeMap<AgentRole, AgentResult>) {
    review_case_with_memory(case_id, llm, None).await
}

/// [`review_case_with_results`], with this review-memory state (JSON) in
/// the store for the repository first.
pub async fn review_case_with_memory(
    case_id: &str,
    llm: LlmConfig,
    memory: Option<String>,
) -> (Review, Metrics, BTreeMap<AgentRole, AgentResult>) {
    let root = fixture();
    let case = load_case(&root.join(format!("cases/{case_id}.json"))).unwrap();
    let repo = build_case_repo(&root, &case).unwrap();
    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let metrics = ctx.metrics.clone();
    let store: Arc<dyn quorum_store::StateStore> = Arc::new(MemoryStore::new());
    if let Some(state) = memory {
        store.put_memory("storefront/shop", &state).await.unwrap();
    }
    let repos = LocalRepos::new();
    repos.insert("storefront/shop", LocalGit::open(&repo.path).unwrap());
    let secret = b"model-fleet-secret".to_vec();
    let timeout = review_timeout(Some(&llm));
    let fleet = Fleet::start(
        FleetOptions {
            webhook_secret: secret.clone(),
            llm: Some(llm),
            ..FleetOptions::local(ctx, store.clone(), Arc::new(repos))
        },
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let body = pull_request_payload("storefront/shop", 1, &repo.base, &repo.head, &case.title, &case.body);
    let accepted = open_pull_request(&reqwest::Client::new(), fleet.gateway, &secret, body)
        .await
        .unwrap();
    let review = wait_for_review(store.as_ref(), &accepted.job_id, timeout)
        .await
        .unwrap();
    let results = store.get_results(&accepted.job_id).await.unwrap();
    fleet.stop().await.unwrap();
    (review, metrics, results)
}
