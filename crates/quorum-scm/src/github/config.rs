//! GitHub settings: where the API is and who Quorum is there. Secrets come
//! from the environment or files and live in [`Secret`], which never prints.

use std::path::PathBuf;
use std::time::Duration;

use quorum_core::Secret;

use crate::ScmError;

/// The public API; GitHub Enterprise Server is `https://<host>/api/v3`.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// How Quorum authenticates.
#[derive(Debug, Clone)]
pub enum GitHubAuth {
    /// A personal access token (classic or fine-grained).
    Token(Secret),
    /// A GitHub App: a JWT signed with the App's private key buys an
    /// installation token per repository's installation.
    App { app_id: u64, private_key: Secret },
}

/// Everything the client needs.
#[derive(Debug, Clone)]
pub struct GitHubConfig {
    pub api_url: String,
    pub auth: GitHubAuth,
    /// One HTTP request, connect to last byte.
    pub timeout: Duration,
    /// Retries of one call after 5xx, timeouts and rate limits.
    pub retries: u32,
    /// First backoff; doubles per retry (with jitter), capped at 30 s.
    pub backoff: Duration,
    /// The longest a call waits for a rate limit to lift; a longer wait
    /// fails the call as unavailable so the runtime retries the message
    /// later instead of a worker sleeping for an hour.
    pub max_rate_limit_wait: Duration,
    /// The check run's (or commit status's) name: what a branch protection
    /// rule requires.
    pub check_name: String,
}

impl GitHubConfig {
    pub fn new(api_url: impl Into<String>, auth: GitHubAuth) -> Self {
        GitHubConfig {
            api_url: api_url.into().trim_end_matches('/').to_string(),
            auth,
            timeout: Duration::from_secs(30),
            retries: 4,
            backoff: Duration::from_millis(500),
            max_rate_limit_wait: Duration::from_secs(90),
            check_name: "Quorum".into(),
        }
    }
}

/// The GitHub flags every service that talks to GitHub flattens in.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GitHubArgs {
    /// GitHub's REST API (`https://<host>/api/v3` for Enterprise Server).
    /// Set with a token or an App: changes, files and reviews go through it.
    #[arg(long = "github-api-url", env = "GITHUB_API_URL")]
    pub api_url: Option<String>,
    /// A personal access token (contents: read, pull requests: write;
    /// commit statuses: write for the status check).
    #[arg(long = "github-token", env = "GITHUB_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A file holding the token (a mounted secret).
    #[arg(long = "github-token-file", env = "GITHUB_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// The GitHub App's id (instead of a token).
    #[arg(long = "github-app-id", env = "GITHUB_APP_ID")]
    pub app_id: Option<u64>,
    /// The App's private key (PEM).
    #[arg(
        long = "github-app-private-key",
        env = "GITHUB_APP_PRIVATE_KEY",
        hide_env_values = true
    )]
    pub app_private_key: Option<String>,
    /// A file holding the App's private key (PEM).
    #[arg(long = "github-app-private-key-file", env = "GITHUB_APP_PRIVATE_KEY_FILE")]
    pub app_private_key_file: Option<PathBuf>,
    /// How long one request to GitHub may take before it is abandoned and
    /// retried.
    /// (0, as in `Default`: the client's own 30 s.)
    #[arg(long = "github-timeout-secs", env = "GITHUB_TIMEOUT_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout_secs: u64,
}

pub(crate) fn one_of(value: &Option<String>, file: &Option<PathBuf>, flag: &str) -> Result<Option<Secret>, ScmError> {
    match (value.as_deref().filter(|v| !v.trim().is_empty()), file) {
        (Some(_), Some(_)) => Err(ScmError::Invalid(format!(
            "give {flag} once: as a value or as a file, not both"
        ))),
        (Some(v), None) => Ok(Some(Secret::new(v.trim()))),
        (None, Some(p)) => {
            let v = std::fs::read_to_string(p)
                .map_err(|e| ScmError::Invalid(format!("{flag} file {}: {e}", p.display())))?;
            if v.trim().is_empty() {
                return Err(ScmError::Invalid(format!("{flag} file {} is empty", p.display())));
            }
            Ok(Some(Secret::new(v.trim())))
        }
        (None, None) => Ok(None),
    }
}

impl GitHubArgs {
    /// `None` when GitHub is not configured (local repositories only).
    pub fn config(&self) -> Result<Option<GitHubConfig>, ScmError> {
        let token = one_of(&self.token, &self.token_file, "--github-token")?;
        let key = one_of(
            &self.app_private_key,
            &self.app_private_key_file,
            "--github-app-private-key",
        )?;
        let auth = match (token, self.app_id, key) {
            (Some(_), Some(_), _) => {
                return Err(ScmError::Invalid(
                    "configure a GitHub token or a GitHub App, not both".into(),
                ));
            }
            (Some(t), None, None) => GitHubAuth::Token(t),
            (None, Some(app_id), Some(private_key)) => GitHubAuth::App { app_id, private_key },
            (None, Some(_), None) => {
                return Err(ScmError::Invalid(
                    "--github-app-id is set but the App's private key (GITHUB_APP_PRIVATE_KEY[_FILE]) is not".into(),
                ));
            }
            (_, None, Some(_)) => {
                return Err(ScmError::Invalid(
                    "a GitHub App private key is set but --github-app-id (GITHUB_APP_ID) is not".into(),
                ));
            }
            (None, None, None) => {
                return match self.api_url.as_deref().filter(|u| !u.trim().is_empty()) {
                    Some(url) => Err(ScmError::Invalid(format!(
                        "GITHUB_API_URL is {url} but no credentials are set: give GITHUB_TOKEN or GITHUB_APP_ID with its private key"
                    ))),
                    None => Ok(None),
                };
            }
        };
        let url = self
            .api_url
            .as_deref()
            .filter(|u| !u.trim().is_empty())
            .unwrap_or(DEFAULT_API_URL);
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(ScmError::Invalid(format!(
                "GITHUB_API_URL `{url}` must start with https:// or http://"
            )));
        }
        let mut config = GitHubConfig::new(url, auth);
        if self.timeout_secs > 0 {
            config.timeout = Duration::from_secs(self.timeout_secs);
        }
        Ok(Some(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_app_and_missing_pieces() {
        let none = GitHubArgs::default();
        assert!(none.config().unwrap().is_none(), "nothing set: GitHub off");

        let token = GitHubArgs {
            token: Some(" ghp_secret \n".into()),
            ..Default::default()
        };
        let c = token.config().unwrap().unwrap();
        assert_eq!(c.api_url, DEFAULT_API_URL);
        assert!(matches!(&c.auth, GitHubAuth::Token(t) if t.expose() == "ghp_secret"));
        assert!(!format!("{c:?}").contains("ghp_secret"), "the token never prints");

        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key.pem");
        std::fs::write(&key, "-----BEGIN RSA PRIVATE KEY-----\nabc\n").unwrap();
        let app = GitHubArgs {
            api_url: Some("https://ghe.example.com/api/v3/".into()),
            app_id: Some(42),
            app_private_key_file: Some(key.clone()),
            ..Default::default()
        };
        let c = app.config().unwrap().unwrap();
        assert_eq!(c.api_url, "https://ghe.example.com/api/v3");
        assert!(matches!(c.auth, GitHubAuth::App { app_id: 42, .. }));
        assert!(!format!("{c:?}").contains("abc"), "the key never prints");

        for (args, says) in [
            (
                GitHubArgs {
                    api_url: Some("https://api.github.com".into()),
                    ..Default::default()
                },
                "no credentials",
            ),
            (
                GitHubArgs {
                    app_id: Some(1),
                    ..Default::default()
                },
                "private key",
            ),
            (
                GitHubArgs {
                    token: Some("t".into()),
                    app_id: Some(1),
                    ..Default::default()
                },
                "not both",
            ),
            (
                GitHubArgs {
                    token: Some("t".into()),
                    token_file: Some(key.clone()),
                    ..Default::default()
                },
                "once",
            ),
            (
                GitHubArgs {
                    token: Some("t".into()),
                    api_url: Some("ftp://x".into()),
                    ..Default::default()
                },
                "https://",
            ),
            (
                GitHubArgs {
                    token_file: Some(dir.path().join("missing")),
                    ..Default::default()
                },
                "missing",
            ),
        ] {
            let err = args.config().unwrap_err().to_string();
            assert!(err.contains(says), "{err} should say {says}");
        }
    }
}
