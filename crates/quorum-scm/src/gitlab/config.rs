//! GitLab settings: where the instance is and the token Quorum uses there.

use std::path::PathBuf;
use std::time::Duration;

use quorum_core::Secret;

use crate::ScmError;
use crate::github::config::one_of;

/// GitLab.com; a self-managed instance is `https://<host>`.
pub const DEFAULT_URL: &str = "https://gitlab.com";

/// Everything the client needs.
#[derive(Debug, Clone)]
pub struct GitLabConfig {
    /// The instance (`https://gitlab.example.com`); the API is under `/api/v4`.
    pub url: String,
    /// A project, group or personal access token with the `api` scope
    /// (Developer role: it posts discussions and commit statuses).
    pub token: Secret,
    /// One HTTP request, connect to last byte.
    pub timeout: Duration,
    /// Retries of one call after 5xx, timeouts and rate limits.
    pub retries: u32,
    /// First backoff; doubles per retry (with jitter), capped at 30 s.
    pub backoff: Duration,
    /// The longest a call waits for a rate limit to lift (then the call
    /// fails as unavailable and the runtime retries the message later).
    pub max_rate_limit_wait: Duration,
    /// The commit status's name: what a merge check can require.
    pub status_name: String,
}

impl GitLabConfig {
    pub fn new(url: impl Into<String>, token: Secret) -> Self {
        GitLabConfig {
            url: url.into().trim_end_matches('/').to_string(),
            token,
            timeout: Duration::from_secs(30),
            retries: 4,
            backoff: Duration::from_millis(500),
            max_rate_limit_wait: Duration::from_secs(90),
            status_name: "Quorum".into(),
        }
    }
}

/// The GitLab flags every service that talks to GitLab flattens in.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GitLabArgs {
    /// The GitLab instance (`https://gitlab.com` when only a token is given).
    /// Set with a token: merge requests, files and reviews go through it.
    #[arg(id = "gitlab_url", value_name = "URL", long = "gitlab-url", env = "GITLAB_URL")]
    pub url: Option<String>,
    /// An access token with the `api` scope (Developer role on the projects).
    #[arg(
        id = "gitlab_token",
        value_name = "TOKEN",
        long = "gitlab-token",
        env = "GITLAB_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// A file holding the token (a mounted secret).
    #[arg(
        id = "gitlab_token_file",
        value_name = "FILE",
        long = "gitlab-token-file",
        env = "GITLAB_TOKEN_FILE"
    )]
    pub token_file: Option<PathBuf>,
}

impl GitLabArgs {
    /// `None` when GitLab is not configured.
    pub fn config(&self) -> Result<Option<GitLabConfig>, ScmError> {
        let url = self.url.as_deref().map(str::trim).filter(|u| !u.is_empty());
        let Some(token) = one_of(&self.token, &self.token_file, "--gitlab-token")? else {
            return match url {
                Some(url) => Err(ScmError::Invalid(format!(
                    "GITLAB_URL is {url} but no token is set: give GITLAB_TOKEN (or GITLAB_TOKEN_FILE)"
                ))),
                None => Ok(None),
            };
        };
        let url = url.unwrap_or(DEFAULT_URL);
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(ScmError::Invalid(format!(
                "GITLAB_URL `{url}` must start with https:// or http://"
            )));
        }
        Ok(Some(GitLabConfig::new(url.trim_end_matches("/api/v4"), token)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_url_and_missing_pieces() {
        assert!(
            GitLabArgs::default().config().unwrap().is_none(),
            "nothing set: GitLab off"
        );
        let c = GitLabArgs {
            token: Some(" glpat-secret\n".into()),
            ..Default::default()
        }
        .config()
        .unwrap()
        .unwrap();
        assert_eq!(c.url, DEFAULT_URL);
        assert_eq!(c.token.expose(), "glpat-secret");
        assert!(!format!("{c:?}").contains("glpat-secret"), "the token never prints");
        let c = GitLabArgs {
            url: Some("https://git.example.com/api/v4".into()),
            token: Some("t".into()),
            ..Default::default()
        }
        .config()
        .unwrap()
        .unwrap();
        assert_eq!(c.url, "https://git.example.com", "the API suffix is Quorum's to add");
        for (args, says) in [
            (
                GitLabArgs {
                    url: Some("https://gitlab.com".into()),
                    ..Default::default()
                },
                "no token",
            ),
            (
                GitLabArgs {
                    url: Some("gitlab.com".into()),
                    token: Some("t".into()),
                    ..Default::default()
                },
                "https://",
            ),
        ] {
            let err = args.config().unwrap_err().to_string();
            assert!(err.contains(says), "{err} should say {says}");
        }
    }
}
