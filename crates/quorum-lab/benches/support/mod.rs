//! What the fleet benchmarks (`burst`, `chaos`) share: the case they
//! review, the service binaries they start, a stand-in model and settings
//! from the environment.

#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use quorum_eval::case::load_case;
use quorum_testkit::scripted_model::{Scripted, ScriptedModel};
use serde_json::{Value, json};

pub const REPO: &str = "storefront/shop";
pub const CASE: &str = "01-sql-fstring-email-lookup";
/// Services that consume, with the group name their metrics carry.
pub const SERVICES: [&str; 8] = [
    "agent-static",
    "agent-reviewer",
    "agent-security",
    "agent-tests",
    "aggregator",
    "critic",
    "publisher",
    "indexer",
];

pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The stand-in model: one finding at the case's defect for every reviewer
/// role, "keep" for every finding the critic asks about; each answer after
/// `latency`.
pub async fn stand_in(latency: Duration, file: String, line: u32) -> ScriptedModel {
    ScriptedModel::respond(move |req: &Value, _| {
        let system = req["messages"][0]["content"].as_str().unwrap_or_default();
        let answer = if system.contains("critic of a code review bot") {
            let user = req["messages"][1]["content"].as_str().unwrap_or_default();
            let decisions: Vec<Value> = (0..user.matches("\"index\":").count())
                .map(|i| json!({"index": i, "keep": true, "reason": "stand-in", "confidence": 0.9, "severity": "critical"}))
                .collect();
            json!({"decisions": decisions})
        } else {
            json!({"findings": [{"file": file, "line": line, "start_line": null, "category": "security",
                "severity": "critical", "confidence": 0.9, "title": "User input reaches the SQL text",
                "explanation": "stand-in finding", "suggestion": null, "evidence": ["stand-in"]}]})
        };
        Scripted::content(&answer.to_string()).after(latency)
    })
    .await
}

/// The defect's line in the head version of the case's file.
pub fn anchor_line(fixture: &Path) -> anyhow::Result<(String, u32)> {
    let case = load_case(&fixture.join(format!("cases/{CASE}.json")))?;
    let exp = case.expected.first().context("the case has an expected finding")?;
    let mut text = std::fs::read_to_string(fixture.join(&exp.file))?;
    for e in case.edits.iter().filter(|e| e.file == exp.file) {
        text = text.replacen(&e.find, &e.replace, 1);
    }
    let at = text.find(&exp.anchor).context("anchor in the edited file")?;
    Ok((exp.file.clone(), text[..at].matches('\n').count() as u32 + 1))
}
