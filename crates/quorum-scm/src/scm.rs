//! The one SCM a fleet talks to: GitHub or GitLab, chosen by configuration.
//!
//! A fleet serves one SCM API at a time: agents and the indexer name a
//! repository by its path alone, and `acme/shop` could be on either. The
//! gateway answers webhooks of the other SCM with a clear refusal instead of
//! reading the wrong repository.

use std::sync::Arc;

use quorum_core::Provider;

use crate::github::{GitHub, GitHubArgs};
use crate::gitlab::{GitLab, GitLabArgs};
use crate::{ChangeSource, ReviewSink, ScmError, TreeSource};

/// The SCM flags of every service that talks to one; flatten into clap.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ScmArgs {
    #[command(flatten)]
    pub github: GitHubArgs,
    #[command(flatten)]
    pub gitlab: GitLabArgs,
}

impl ScmArgs {
    /// The configured SCM; `None` for local repositories only. Must run
    /// inside a tokio runtime (the GitHub client's).
    pub fn api(&self) -> Result<Option<ScmApi>, ScmError> {
        match (self.github.config()?, self.gitlab.config()?) {
            (Some(_), Some(_)) => Err(ScmError::Invalid(
                "both GitHub (GITHUB_TOKEN or a GitHub App) and GitLab (GITLAB_TOKEN) are configured; a fleet talks to one SCM — run one fleet per SCM".into(),
            )),
            (Some(c), None) => Ok(Some(ScmApi::GitHub(Arc::new(GitHub::new(c)?)))),
            (None, Some(c)) => Ok(Some(ScmApi::GitLab(Arc::new(GitLab::new(c)?)))),
            (None, None) => Ok(None),
        }
    }
}

/// A configured SCM client.
#[derive(Debug, Clone)]
pub enum ScmApi {
    GitHub(Arc<GitHub>),
    GitLab(Arc<GitLab>),
}

impl ScmApi {
    pub fn provider(&self) -> Provider {
        match self {
            ScmApi::GitHub(_) => Provider::Github,
            ScmApi::GitLab(_) => Provider::Gitlab,
        }
    }

    pub fn source(&self) -> Arc<dyn ChangeSource> {
        match self {
            ScmApi::GitHub(g) => g.clone(),
            ScmApi::GitLab(g) => g.clone(),
        }
    }

    pub fn sink(&self) -> Arc<dyn ReviewSink> {
        match self {
            ScmApi::GitHub(g) => g.clone(),
            ScmApi::GitLab(g) => g.clone(),
        }
    }

    pub fn trees(&self) -> Arc<dyn TreeSource> {
        match self {
            ScmApi::GitHub(g) => g.clone(),
            ScmApi::GitLab(g) => g.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GitHub's and GitLab's flags live side by side in every binary: clap
    /// refuses (at start, in debug builds) two arguments with one id.
    #[test]
    fn both_scms_flags_fit_in_one_command() {
        use clap::CommandFactory;
        #[derive(clap::Parser)]
        struct Binary {
            #[command(flatten)]
            trees: crate::TreeArgs,
        }
        Binary::command().debug_assert();
    }

    #[tokio::test]
    async fn one_scm_per_fleet() {
        let both = ScmArgs {
            github: GitHubArgs {
                token: Some("ghp".into()),
                ..Default::default()
            },
            gitlab: GitLabArgs {
                token: Some("glpat".into()),
                ..Default::default()
            },
        };
        assert!(both.api().unwrap_err().to_string().contains("one SCM"));
        let gitlab = ScmArgs {
            gitlab: both.gitlab.clone(),
            ..Default::default()
        };
        assert_eq!(gitlab.api().unwrap().unwrap().provider(), Provider::Gitlab);
        assert!(ScmArgs::default().api().unwrap().is_none());
    }
}
