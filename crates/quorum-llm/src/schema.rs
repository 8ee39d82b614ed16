//! The answer a model must give (SPEC §4 finding fields), as a strict JSON
//! schema for `response_format` and as the validator run on every answer
//! whatever the server promised.

use quorum_core::{AgentRole, Category, Evidence, Finding, Severity};
use serde::Deserialize;
use serde_json::{Value, json};

/// Findings one answer may carry (the agent caps what it reports anyway).
pub const MAX_MODEL_FINDINGS: usize = 50;

fn category_names() -> Vec<&'static str> {
    Category::ALL.iter().map(|c| c.as_str()).collect()
}

fn severity_names() -> Vec<&'static str> {
    [Severity::Critical, Severity::Major, Severity::Minor, Severity::Nitpick]
        .iter()
        .map(|s| s.as_str())
        .collect()
}

/// One finding's schema. Every property is required and nullable where
/// optional: OpenAI's strict mode requires that form.
pub fn finding_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["file", "line", "start_line", "category", "severity", "confidence",
                     "title", "explanation", "suggestion", "evidence"],
        "properties": {
            "file": {"type": "string", "description": "repository-relative path of a changed file"},
            "line": {"type": "integer", "minimum": 1, "description": "new-side line number from the diff margin"},
            "start_line": {"type": ["integer", "null"], "minimum": 1, "description": "first line of a range, or null"},
            "category": {"type": "string", "enum": category_names()},
            "severity": {"type": "string", "enum": severity_names()},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "title": {"type": "string", "description": "one line naming the problem"},
            "explanation": {"type": "string", "description": "what goes wrong, for whom, and why"},
            "suggestion": {"type": ["string", "null"], "description": "replacement text for the line range, or null"},
            "evidence": {"type": "array", "items": {"type": "string"},
                         "description": "the diff lines or tool results the finding rests on"}
        }
    })
}

/// `{"findings": [...]}`.
pub fn findings_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["findings"],
        "properties": {
            "findings": {"type": "array", "maxItems": MAX_MODEL_FINDINGS, "items": finding_schema()}
        }
    })
}

/// `response_format` for a schema.
pub fn response_format(name: &str, schema: Value) -> Value {
    json!({"type": "json_schema", "json_schema": {"name": name, "strict": true, "schema": schema}})
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFinding {
    file: String,
    line: u32,
    #[serde(default)]
    start_line: Option<u32>,
    category: Category,
    severity: Severity,
    confidence: f64,
    title: String,
    explanation: String,
    #[serde(default)]
    suggestion: Option<String>,
    #[serde(default)]
    evidence: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelAnswer {
    findings: Vec<ModelFinding>,
}

/// Parses and validates a final answer. The error says exactly what is
/// wrong, so one repair request can quote it back.
pub fn parse_findings(text: &str, role: AgentRole, model: &str) -> Result<Vec<Finding>, String> {
    let json = extract_json(text).ok_or_else(|| "the answer is not a JSON object".to_string())?;
    let answer: ModelAnswer =
        serde_json::from_str(json).map_err(|e| format!("the answer does not match the schema: {e}"))?;
    findings_from(answer.findings, role, model)
}

/// Findings from an already-parsed `findings` array (the action protocol).
pub fn findings_from_value(v: &Value, role: AgentRole, model: &str) -> Result<Vec<Finding>, String> {
    let list: Vec<ModelFinding> =
        serde_json::from_value(v.clone()).map_err(|e| format!("`findings` does not match the schema: {e}"))?;
    findings_from(list, role, model)
}

fn findings_from(list: Vec<ModelFinding>, role: AgentRole, model: &str) -> Result<Vec<Finding>, String> {
    if list.len() > MAX_MODEL_FINDINGS {
        return Err(format!("{} findings; at most {MAX_MODEL_FINDINGS}", list.len()));
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, m) in list.into_iter().enumerate() {
        let file = m.file.trim().trim_start_matches("./").to_string();
        if file.starts_with('/') || file.split('/').any(|c| c == "..") {
            return Err(format!("findings[{i}].file `{file}` is not a repository-relative path"));
        }
        let mut evidence: Vec<Evidence> = m
            .evidence
            .into_iter()
            .filter(|e| !e.trim().is_empty())
            .map(|detail| Evidence {
                source: format!("model:{model}"),
                detail,
            })
            .collect();
        evidence.truncate(8);
        let f = Finding {
            file,
            line: m.line,
            start_line: m.start_line.filter(|s| *s != m.line),
            category: m.category,
            severity: m.severity,
            confidence: m.confidence,
            title: m.title.trim().to_string(),
            explanation: m.explanation.trim().to_string(),
            suggestion: m.suggestion.filter(|s| !s.trim().is_empty()),
            rule: None,
            agent: role,
            evidence,
            agreed_by: vec![],
        };
        f.validate().map_err(|e| format!("findings[{i}]: {e}"))?;
        out.push(f);
    }
    Ok(out)
}

/// The JSON object in an answer: the whole text, or the first fenced or
/// braced block when a model wrapped it in prose or a code fence.
pub fn extract_json(text: &str) -> Option<&str> {
    let t = text.trim();
    if t.starts_with('{') && t.ends_with('}') {
        return Some(t);
    }
    let start = t.find('{')?;
    let end = t.rfind('}')?;
    (end > start).then(|| &t[start..=end])
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"{"findings":[{"file":"app/db.py","line":12,"start_line":null,"category":"security",
        "severity":"critical","confidence":0.9,"title":"SQL built from input","explanation":"e",
        "suggestion":null,"evidence":["+ cur.execute(f\"...{email}\")"]}]}"#;

    #[test]
    fn a_valid_answer_becomes_findings_with_model_evidence() {
        let f = parse_findings(ONE, AgentRole::Security, "qwen").unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].agent, AgentRole::Security);
        assert_eq!(f[0].rule, None);
        assert_eq!(f[0].evidence[0].source, "model:qwen");
    }

    #[test]
    fn fenced_json_is_found() {
        let fenced = format!("Here you go:\n```json\n{ONE}\n```");
        assert_eq!(parse_findings(&fenced, AgentRole::Reviewer, "m").unwrap().len(), 1);
    }

    #[test]
    fn invalid_answers_say_what_is_wrong() {
        let e = parse_findings("I cannot help with that", AgentRole::Reviewer, "m").unwrap_err();
        assert!(e.contains("not a JSON object"), "{e}");
        let e = parse_findings(&ONE.replace("critical", "huge"), AgentRole::Reviewer, "m").unwrap_err();
        assert!(e.contains("schema"), "{e}");
        let e = parse_findings(&ONE.replace("\"line\":12", "\"line\":0"), AgentRole::Reviewer, "m").unwrap_err();
        assert!(e.contains("line 0"), "{e}");
        let e = parse_findings(&ONE.replace("app/db.py", "/etc/passwd"), AgentRole::Reviewer, "m").unwrap_err();
        assert!(e.contains("repository-relative"), "{e}");
        let e = parse_findings(
            &ONE.replace("\"title\"", "\"extra\":1,\"title\""),
            AgentRole::Reviewer,
            "m",
        )
        .unwrap_err();
        assert!(e.contains("unknown field"), "{e}");
    }

    #[test]
    fn the_schema_lists_every_category_and_severity() {
        let s = findings_schema().to_string();
        for c in Category::ALL {
            assert!(s.contains(&format!("\"{}\"", c.as_str())));
        }
        assert!(s.contains("\"nitpick\""));
    }
}
