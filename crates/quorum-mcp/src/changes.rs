//! Which change a tool looks at: uncommitted work (the default), the
//! staged part of it, a `BASE..HEAD` range of refs, or a unified diff sent
//! by the client. Each resolves to two commits of the local repository;
//! uncommitted work becomes an unreferenced snapshot commit on top of HEAD
//! (see `quorum_scm::snapshot`: no ref, index or file is touched).

use std::path::{Path, PathBuf};

use quorum_scm::{LocalGit, Snapshot, validate_ref};
use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

/// The change arguments `impact` and `review_diff` share.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ChangeArgs {
    pub repo: String,
    /// "worktree" (default: everything uncommitted), "staged", or "BASE..HEAD" (two refs).
    #[serde(default)]
    pub changes: Option<String>,
    /// A unified diff (`git diff` output) to apply on HEAD instead.
    #[serde(default)]
    pub diff: Option<String>,
}

/// Two commits to compare, and how the change was named (for answers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub base: String,
    pub head: String,
    pub label: String,
}

enum Spec {
    Snapshot(Snapshot),
    Refs(String, String),
}

fn parse(args: &ChangeArgs) -> Result<Spec, String> {
    match (args.changes.as_deref().map(str::trim), &args.diff) {
        (Some(_), Some(_)) => Err("give `changes` or `diff`, not both".into()),
        (None, Some(diff)) => Ok(Spec::Snapshot(Snapshot::Patch(diff.clone()))),
        (None | Some("worktree"), None) => Ok(Spec::Snapshot(Snapshot::Worktree)),
        (Some("staged"), None) => Ok(Spec::Snapshot(Snapshot::Staged)),
        (Some(range), None) => {
            if range.contains("...") {
                return Err(format!(
                    "`{range}`: three-dot ranges are not supported; give `BASE..HEAD` (e.g. `main..HEAD`)"
                ));
            }
            let Some((base, head)) = range.split_once("..") else {
                return Err(format!(
                    "`changes` is `{range}`: use \"worktree\", \"staged\" or \"BASE..HEAD\""
                ));
            };
            let head = if head.is_empty() { "HEAD" } else { head };
            for r in [base, head] {
                validate_ref(r).map_err(|e| quorum_core::error::chain(&e))?;
            }
            Ok(Spec::Refs(base.to_string(), head.to_string()))
        }
    }
}

/// The commits `args` names in the git repository at `dir` (`None`: the
/// server was started on a plain directory, which has no history).
pub async fn resolve(dir: Option<&Path>, args: &ChangeArgs) -> Result<Range, String> {
    let spec = parse(args)?;
    let Some(dir) = dir else {
        return Err("this server was started on a directory that is not a git repository: \
                    changes need history (start `quorum mcp --repo` on a git checkout)"
            .into());
    };
    let git = LocalGit::open(dir).map_err(|e| quorum_core::error::chain(&e))?;
    match spec {
        Spec::Refs(base, head) => {
            let label = format!("{base}..{head}");
            Ok(Range {
                base: git.resolve(&base).await.map_err(|e| quorum_core::error::chain(&e))?,
                head: git.resolve(&head).await.map_err(|e| quorum_core::error::chain(&e))?,
                label,
            })
        }
        Spec::Snapshot(what) => {
            let label = match &what {
                Snapshot::Staged => "staged changes",
                Snapshot::Worktree => "uncommitted changes",
                Snapshot::Patch(_) => "the given diff",
            }
            .to_string();
            let root: PathBuf = dir.to_path_buf();
            let head = tokio::task::spawn_blocking(move || quorum_scm::snapshot(&root, &what))
                .await
                .map_err(|e| format!("the snapshot task failed: {e}"))?
                .map_err(|e| quorum_core::error::chain(&e))?;
            Ok(Range {
                base: git.resolve("HEAD").await.map_err(|e| quorum_core::error::chain(&e))?,
                head,
                label,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(changes: Option<&str>, diff: Option<&str>) -> ChangeArgs {
        ChangeArgs {
            repo: "r".into(),
            changes: changes.map(str::to_string),
            diff: diff.map(str::to_string),
        }
    }

    #[test]
    fn change_specs_parse_or_say_what_is_accepted() {
        assert!(matches!(
            parse(&args(None, None)),
            Ok(Spec::Snapshot(Snapshot::Worktree))
        ));
        assert!(matches!(
            parse(&args(Some("staged"), None)),
            Ok(Spec::Snapshot(Snapshot::Staged))
        ));
        assert!(matches!(
            parse(&args(None, Some("d"))),
            Ok(Spec::Snapshot(Snapshot::Patch(_)))
        ));
        match parse(&args(Some("main.."), None)) {
            Ok(Spec::Refs(b, h)) => assert_eq!((b.as_str(), h.as_str()), ("main", "HEAD")),
            _ => panic!("main.. is main..HEAD"),
        }
        let err = |c: Option<&str>, d: Option<&str>| parse(&args(c, d)).err().unwrap();
        assert!(err(Some("staged"), Some("d")).contains("not both"));
        assert!(err(Some("main...HEAD"), None).contains("three-dot"));
        assert!(err(Some("yesterday"), None).contains("\"worktree\", \"staged\""));
        assert!(err(Some("--upload-pack=x..HEAD"), None).contains("not allowed"));
    }
}
