//! `POST /webhooks/github` and `POST /webhooks/gitlab`: verify, parse,
//! apply the repository's policy, submit. Pull-request (merge-request)
//! events and `/review` commands become jobs; pushes to the default branch
//! and new installations become index requests.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use quorum_core::{AgentRole, ContextMode, Provider};
use quorum_runtime::Metrics;
use quorum_scm::{ChangeSource, ScmError};
use serde_json::json;

use crate::github::{Command, CommandEvent, Event, PullRequestEvent};
use crate::intake::{ChangeRequest, Intake, IntakeError};
use crate::policy::{CONFIG_PATH, Policy, PrFacts, ServerDefaults, Trigger};
use crate::{Admission, GatewayConfig, signature};

#[derive(Clone)]
pub(crate) struct AppState {
    pub config: Arc<GatewayConfig>,
    pub intake: Arc<Intake>,
    pub source: Arc<dyn ChangeSource>,
    pub producer: quorum_runtime::BusProducer,
    pub admission: Admission,
    pub metrics: Metrics,
}

fn reply(metrics: &Metrics, status: StatusCode, body: serde_json::Value) -> Response {
    metrics.gateway_requests.with_label_values(&[status.as_str()]).inc();
    (status, axum::Json(body)).into_response()
}

fn unavailable(m: &Metrics, e: impl std::fmt::Display) -> Response {
    let mut r = reply(m, StatusCode::SERVICE_UNAVAILABLE, json!({ "error": e.to_string() }));
    r.headers_mut()
        .insert("retry-after", "5".parse().expect("valid header"));
    r
}

/// A change source's failure as the webhook's answer: the change's fault
/// (422), or try again later (503 + Retry-After; GitHub redelivers).
fn scm_failure(m: &Metrics, e: ScmError) -> Response {
    match e {
        ScmError::Invalid(e) => reply(m, StatusCode::UNPROCESSABLE_ENTITY, json!({ "error": e })),
        ScmError::Unavailable(e) => unavailable(m, e),
    }
}

impl AppState {
    /// The repository's policy from `.quorum.yml` on its default branch. A
    /// file that cannot be read now is a retry (GitHub redelivers); a file
    /// that is invalid is the defaults plus a warning in the review.
    async fn policy(&self, repo: &str, default_branch: Option<&str>) -> Result<Policy, ScmError> {
        let server = ServerDefaults {
            review_drafts: self.config.review_drafts,
            review_bots: self.config.review_bots,
            job: self.config.policy.clone(),
        };
        let (Some(trees), Some(branch)) = (&self.config.policy_source, default_branch) else {
            return Ok(Policy::defaults(&server));
        };
        let text = trees.read_file(repo, branch, CONFIG_PATH).await?;
        let (mut policy, warning) = Policy::from_file(&server, text.as_deref());
        if let Some(w) = warning {
            tracing::warn!(repo, warning = %w, "repository policy");
            policy.job.warnings.push(w);
        }
        Ok(policy)
    }

    async fn index(&self, provider: Provider, repos: &[String], git_ref: &str) -> Response {
        self.index_with(provider, repos, git_ref, vec![]).await
    }

    async fn index_with(
        &self,
        provider: Provider,
        repos: &[String],
        git_ref: &str,
        memory_pull_requests: Vec<u64>,
    ) -> Response {
        for repo in repos {
            let msg = quorum_events::IndexRequested {
                schema_version: quorum_events::SCHEMA_VERSION,
                repo: quorum_core::RepoRef {
                    provider,
                    full_name: repo.clone(),
                },
                git_ref: git_ref.to_string(),
                memory_pull_requests: memory_pull_requests.clone(),
            };
            if let Err(e) = self.producer.publish(&msg).await {
                return unavailable(&self.metrics, e);
            }
        }
        reply(
            &self.metrics,
            StatusCode::ACCEPTED,
            json!({ "index": repos, "ref": git_ref, "memory_pull_requests": memory_pull_requests }),
        )
    }

    async fn submit(&self, change: ChangeRequest) -> Response {
        let m = &self.metrics;
        if let Err(e) = self.admission.check() {
            m.gateway_requests.with_label_values(&["503"]).inc();
            return Admission::refusal(e);
        }
        match self.intake.submit(change).await {
            Ok(s) if s.duplicate => reply(m, StatusCode::OK, json!({ "job_id": s.job_id, "duplicate": true })),
            Ok(s) => reply(
                m,
                StatusCode::ACCEPTED,
                json!({ "job_id": s.job_id, "duplicate": false }),
            ),
            Err(IntakeError::Skipped(reason)) => reply(
                m,
                StatusCode::ACCEPTED,
                json!({ "ignored": "pull_request", "reason": reason }),
            ),
            Err(IntakeError::Invalid(e)) => reply(m, StatusCode::UNPROCESSABLE_ENTITY, json!({ "error": e })),
            Err(IntakeError::Unavailable(e)) => unavailable(m, e),
        }
    }

    async fn pull_request(&self, provider: Provider, pr: PullRequestEvent) -> Response {
        let m = &self.metrics;
        let policy = match self.policy(&pr.repo, pr.default_branch.as_deref()).await {
            Ok(p) => p,
            Err(e) => return scm_failure(m, e),
        };
        let facts = PrFacts {
            draft: pr.draft,
            author_is_bot: pr.author_is_bot,
            labels: pr.labels.clone(),
        };
        if let Err(reason) = policy.admit(&facts, Trigger::Event) {
            return reply(
                m,
                StatusCode::ACCEPTED,
                json!({ "ignored": "pull_request", "reason": reason }),
            );
        }
        self.submit(ChangeRequest {
            provider,
            repo: pr.repo,
            number: pr.number,
            title: pr.title,
            body: pr.body,
            author: pr.author,
            base: pr.base_sha,
            head: pr.head_sha,
            policy: policy.job.clone(),
            files: Some(policy),
            dedupe_suffix: None,
        })
        .await
    }

    async fn command(&self, provider: Provider, c: CommandEvent) -> Response {
        let m = &self.metrics;
        let ignored = |reason: String| {
            reply(
                m,
                StatusCode::ACCEPTED,
                json!({ "ignored": "issue_comment", "reason": reason }),
            )
        };
        match self.source.can_write(&c.repo, &c.user).await {
            Ok(true) => {}
            Ok(false) => return ignored(format!("{} has no write access to {}", c.user, c.repo)),
            Err(e) => return scm_failure(m, e),
        }
        let pr = match self.source.pull_request(&c.repo, c.number).await {
            Ok(pr) => pr,
            Err(e) => return scm_failure(m, e),
        };
        if !pr.open {
            return ignored(format!("{} {} is closed", c.repo, c.number));
        }
        let policy = match self.policy(&c.repo, c.default_branch.as_deref()).await {
            Ok(p) => p,
            Err(e) => return scm_failure(m, e),
        };
        let facts = PrFacts {
            draft: pr.draft,
            author_is_bot: pr.author_is_bot,
            labels: pr.labels.clone(),
        };
        if let Err(reason) = policy.admit(&facts, Trigger::Command) {
            return ignored(reason);
        }
        let mut job = policy.job.clone();
        match c.command {
            Command::Review => {}
            Command::Full => {
                job.agents = AgentRole::ALL.to_vec();
                job.context_mode = ContextMode::FullFiles;
            }
            Command::Security => job.agents = vec![AgentRole::Security],
        }
        tracing::info!(repo = %c.repo, pr = c.number, user = %c.user, command = ?c.command, "review requested by comment");
        self.submit(ChangeRequest {
            provider,
            repo: c.repo,
            number: c.number,
            title: pr.title,
            body: pr.body,
            author: pr.author,
            base: pr.base_sha,
            head: pr.head_sha,
            policy: job,
            files: Some(policy),
            dedupe_suffix: Some(format!("comment-{}", c.comment_id)),
        })
        .await
    }

    /// A hook from an SCM this gateway does not read changes from: the
    /// change would be looked up in the wrong place.
    fn other_scm(&self, provider: Provider) -> Option<Response> {
        let configured = self.config.scm.filter(|p| *p != provider)?;
        let name = |p: Provider| match p {
            Provider::Github => "GitHub",
            Provider::Gitlab => "GitLab",
            Provider::Local => "local repositories",
        };
        Some(reply(
            &self.metrics,
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({ "error": format!(
                "this gateway reads changes from {}, not {}: run a fleet of its own for {}",
                name(configured),
                name(provider),
                name(provider)
            ) }),
        ))
    }

    async fn dispatch(&self, provider: Provider, event: Event) -> Response {
        let m = &self.metrics;
        if !matches!(event, Event::Ignored { .. } | Event::Ping)
            && let Some(refused) = self.other_scm(provider)
        {
            return refused;
        }
        match event {
            Event::Ping => reply(m, StatusCode::OK, json!({ "ok": true })),
            Event::Ignored { event, action } => {
                reply(m, StatusCode::ACCEPTED, json!({ "ignored": event, "action": action }))
            }
            Event::Push { repo, branch } => self.index(provider, &[repo], &branch).await,
            Event::ReviewThread { repo, number, branch } => {
                tracing::info!(
                    repo,
                    number,
                    "review thread state changed; memory re-reads the pull request"
                );
                self.index_with(provider, &[repo], &branch, vec![number]).await
            }
            Event::Installed { repos } => {
                tracing::info!(?repos, "installed on repositories; indexing them");
                self.index(provider, &repos, "HEAD").await
            }
            Event::PullRequest(pr) => self.pull_request(provider, pr).await,
            Event::Command(c) => self.command(provider, c).await,
        }
    }
}

pub(crate) async fn github_webhook(State(app): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let m = &app.metrics;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if app.config.webhook_secret.is_empty() {
        return reply(
            m,
            StatusCode::NOT_FOUND,
            json!({ "error": "GitHub webhooks are not enabled on this gateway: set GITHUB_WEBHOOK_SECRET" }),
        );
    }
    if let Err(e) = signature::verify(&app.config.webhook_secret, &body, header("x-hub-signature-256")) {
        return reply(m, StatusCode::UNAUTHORIZED, json!({ "error": e.to_string() }));
    }
    let Some(event) = header("x-github-event") else {
        return reply(
            m,
            StatusCode::BAD_REQUEST,
            json!({ "error": "missing X-GitHub-Event header" }),
        );
    };
    match crate::github::parse(event, &body) {
        Ok(e) => app.dispatch(Provider::Github, e).await,
        Err(e) => reply(m, StatusCode::BAD_REQUEST, json!({ "error": e })),
    }
}

/// GitLab sends the hook's secret token as it is (`X-Gitlab-Token`); it is
/// compared in constant time before the body is read.
pub(crate) async fn gitlab_webhook(State(app): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let m = &app.metrics;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let Some(expected) = &app.config.gitlab_webhook_token else {
        return reply(
            m,
            StatusCode::NOT_FOUND,
            json!({ "error": "GitLab webhooks are not enabled on this gateway: set GITLAB_WEBHOOK_TOKEN" }),
        );
    };
    if let Err(e) = signature::verify_token(expected, header("x-gitlab-token")) {
        return reply(m, StatusCode::UNAUTHORIZED, json!({ "error": e.to_string() }));
    }
    let Some(event) = header("x-gitlab-event") else {
        return reply(
            m,
            StatusCode::BAD_REQUEST,
            json!({ "error": "missing X-Gitlab-Event header" }),
        );
    };
    match crate::gitlab::parse(event, &body) {
        Ok(e) => app.dispatch(Provider::Gitlab, e).await,
        Err(e) => reply(m, StatusCode::BAD_REQUEST, json!({ "error": e })),
    }
}
