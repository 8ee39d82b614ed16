//! Building and sending a GitHub `pull_request` delivery, the way GitHub
//! does it: JSON body, `X-GitHub-Event`, `X-GitHub-Delivery` and the HMAC
//! signature header.

use std::net::SocketAddr;

use anyhow::Context;
use serde_json::json;

/// A `pull_request` `opened` payload with the fields the gateway reads.
pub fn pull_request_payload(repo: &str, number: u64, base: &str, head: &str, title: &str, body: &str) -> Vec<u8> {
    let (owner, name) = repo.split_once('/').unwrap_or((repo, repo));
    serde_json::to_vec(&json!({
        "action": "opened",
        "number": number,
        "pull_request": {
            "number": number,
            "title": title,
            "body": body,
            "draft": false,
            "user": { "login": "octocat", "type": "User" },
            "head": { "sha": head, "ref": "feature" },
            "base": { "sha": base, "ref": "main" },
        },
        "repository": { "full_name": repo, "name": name, "owner": { "login": owner } },
        "sender": { "login": "octocat", "type": "User" },
    }))
    .expect("JSON")
}

/// The gateway's answer to a delivery.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Accepted {
    pub job_id: String,
    pub duplicate: bool,
}

/// Signs and posts a delivery; returns the status and body.
pub async fn deliver(
    client: &reqwest::Client,
    gateway: SocketAddr,
    secret: &[u8],
    event: &str,
    body: Vec<u8>,
) -> anyhow::Result<(u16, serde_json::Value)> {
    let sig = quorum_gateway::signature::sign(secret, &body);
    let resp = client
        .post(format!("http://{gateway}/webhooks/github"))
        .header("content-type", "application/json")
        .header("x-github-event", event)
        .header("x-github-delivery", uuid::Uuid::new_v4().to_string())
        .header("x-hub-signature-256", sig)
        .body(body)
        .send()
        .await
        .context("posting the webhook")?;
    let status = resp.status().as_u16();
    let value = resp.json().await.unwrap_or(serde_json::Value::Null);
    Ok((status, value))
}

/// Delivers a `pull_request` event and returns the job it was accepted as;
/// any answer but 202 is an error that carries the gateway's reply.
pub async fn open_pull_request(
    client: &reqwest::Client,
    gateway: SocketAddr,
    secret: &[u8],
    body: Vec<u8>,
) -> anyhow::Result<Accepted> {
    let (status, reply) = deliver(client, gateway, secret, "pull_request", body).await?;
    anyhow::ensure!(status == 202, "gateway answered {status}: {reply}");
    Ok(serde_json::from_value(reply)?)
}
