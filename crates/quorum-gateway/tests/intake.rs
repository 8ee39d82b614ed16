//! The intake's size budget on a real git change and the embedded broker:
//! a change too big to travel as one message is refused as invalid with a
//! clear reason — nothing is published and the dedupe claim is released — instead of failing as "retry later" forever.

use std::sync::Arc;
use std::time::Duration;

use quorum_core::budget::PatchBudget;
use quorum_core::{JobPolicy, Provider};
use quorum_events::Topic;
use quorum_gateway::intake::{ChangeRequest, Intake, IntakeError};
use quorum_runtime::ServiceContext;
use quorum_scm::LocalGit;
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::git;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_too_big_for_one_message_is_refused_as_invalid() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(repo.path().join("README"), "x\n").unwrap();
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "base"]);
    for i in 0..200 {
        std::fs::write(repo.path().join(format!("generated_{i:04}.py")), format!("V = {i}\n")).unwrap();
    }
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-qm", "head"]);

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let change = || ChangeRequest {
        provider: Provider::Local,
        repo: "local/big".into(),
        number: 1,
        title: "t".into(),
        body: String::new(),
        author: "a".into(),
        base: "HEAD~1".into(),
        head: "HEAD".into(),
        policy: JobPolicy::default(),
        files: None,
        dedupe_suffix: None,
    };
    // 200 file entries cannot fit in 8 KiB even with every patch left out.
    let tiny = Intake::new(
        store.clone(),
        ctx.producer.clone(),
        Arc::new(LocalGit::open(repo.path()).unwrap()),
    )
    .with_budget(PatchBudget {
        total_bytes: 1024,
        per_file_bytes: 1024,
        request_bytes: 8 * 1024,
    });
    let err = tiny.submit(change()).await.unwrap_err();
    match &err {
        IntakeError::Invalid(m) => assert!(m.contains("too large to review") && m.contains("200 files"), "{m}"),
        other => panic!("expected invalid, got {other:?}"),
    }
    let published = quorum_runtime::inspect::read_topic(&ctx.bus, Topic::ReviewRequested, Duration::from_secs(1))
        .await
        .unwrap();
    assert!(published.is_empty(), "nothing was published");

    // The claim was released: the same change goes through with the default budget.
    let roomy = Intake::new(
        store.clone(),
        ctx.producer.clone(),
        Arc::new(LocalGit::open(repo.path()).unwrap()),
    );
    let ok = roomy.submit(change()).await.unwrap();
    assert!(!ok.duplicate);
}
