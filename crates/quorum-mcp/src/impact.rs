//! The impact report of a change between two commits of a local
//! repository: the base graph with the changed files re-parsed on top
//! (`overlay`), then `quorum_graph::impact` — the same report the agents
//! get. `quorum impact` and the MCP `impact` tool both call this.

use quorum_core::FileStatus;
use quorum_graph::{Graph, ImpactOptions, ImpactReport, impact, overlay};
use quorum_scm::{Change, LocalGit, ScmError, TreeSource};

/// The impact of `change` (from `git.diff`) given the graph of its base.
pub async fn change_impact(git: &LocalGit, base: &Graph, change: &Change, hops: u8) -> Result<ImpactReport, ScmError> {
    let mut changes = vec![];
    for f in &change.files {
        let content = if f.status == FileStatus::Removed {
            None
        } else {
            git.read_file("local", &change.head_sha, &f.path).await?
        };
        changes.push((f.path.clone(), content));
        if let Some(old) = f.old_path.as_ref().filter(|o| **o != f.path) {
            changes.push((old.clone(), None));
        }
    }
    let (head, _) = overlay(base, &changes);
    let diffs: Vec<_> = change
        .files
        .iter()
        .filter(|f| f.patch.is_some())
        .map(|f| f.diff().0)
        .collect();
    Ok(impact(
        base,
        &head,
        &diffs,
        ImpactOptions {
            hops,
            ..ImpactOptions::default()
        },
    ))
}
