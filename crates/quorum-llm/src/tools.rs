//! The tools a model may call (F-AG-2): their strict JSON-schema
//! parameters, parsing a call's arguments, and the [`ToolBox`] trait the
//! agent implements over the code graph and the hybrid index. Every
//! failure is an answer the model can read, never a crash.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

/// One validated tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    GetCallers { symbol: String, hops: u8 },
    FindTests { symbol: String },
    ReadSnippet { path: String, start: u32, end: u32 },
    SearchCode { query: String, path_glob: Option<String> },
    SearchDocs { query: String },
}

impl ToolCall {
    pub fn name(&self) -> &'static str {
        match self {
            ToolCall::GetCallers { .. } => "get_callers",
            ToolCall::FindTests { .. } => "find_tests",
            ToolCall::ReadSnippet { .. } => "read_snippet",
            ToolCall::SearchCode { .. } => "search_code",
            ToolCall::SearchDocs { .. } => "search_docs",
        }
    }
}

/// Tool names, in the order they are offered.
pub const TOOL_NAMES: [&str; 5] = [
    "get_callers",
    "find_tests",
    "read_snippet",
    "search_code",
    "search_docs",
];

/// Answers tool calls for one job.
#[async_trait]
pub trait ToolBox: Send + Sync {
    /// The result text, or an error message for the model.
    async fn call(&self, call: &ToolCall) -> Result<String, String>;

    /// The tools offered to the model: a tool with no back-end (search
    /// before the repository is indexed) is not offered, so a small model
    /// does not spend its turns on it.
    fn offered(&self) -> Vec<&'static str> {
        TOOL_NAMES.to_vec()
    }
}

/// The hybrid index's side of `search_code` / `search_docs`.
#[async_trait]
pub trait SearchIndex: Send + Sync {
    /// Whether there is an index to search.
    fn available(&self) -> bool {
        true
    }
    async fn search_code(&self, query: &str, path_glob: Option<&str>) -> Result<String, String>;
    async fn search_docs(&self, query: &str) -> Result<String, String>;
}

/// What answers while the repository has no hybrid index.
pub struct NotIndexed;

#[async_trait]
impl SearchIndex for NotIndexed {
    fn available(&self) -> bool {
        false
    }
    async fn search_code(&self, _: &str, _: Option<&str>) -> Result<String, String> {
        Err(
            "not indexed: this repository has no code search index yet; use get_callers, find_tests or read_snippet"
                .into(),
        )
    }
    async fn search_docs(&self, _: &str) -> Result<String, String> {
        Err("not indexed: this repository has no docs search index yet".into())
    }
}

fn params(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "additionalProperties": false, "properties": properties, "required": required})
}

/// `(name, description, parameters)` of the tools in `offered`.
pub fn tool_specs(offered: &[&str]) -> Vec<(&'static str, &'static str, Value)> {
    let all = vec![
        (
            "get_callers",
            "Who calls this symbol, 1-3 hops out, and what it calls. Use a qualified name (pkg.module.func) or a unique bare name.",
            params(
                json!({"symbol": {"type": "string"}, "hops": {"type": "integer", "minimum": 1, "maximum": 3}}),
                &["symbol", "hops"],
            ),
        ),
        (
            "find_tests",
            "Which tests exercise this symbol.",
            params(json!({"symbol": {"type": "string"}}), &["symbol"]),
        ),
        (
            "read_snippet",
            "Lines start..end (1-based, at most 200) of a repository file at the PR head, numbered.",
            params(
                json!({"path": {"type": "string"}, "start": {"type": "integer", "minimum": 1},
                       "end": {"type": "integer", "minimum": 1}}),
                &["path", "start", "end"],
            ),
        ),
        (
            "search_code",
            "Where else the codebase does something similar (hybrid search over code chunks).",
            params(
                json!({"query": {"type": "string"}, "path_glob": {"type": ["string", "null"]}}),
                &["query", "path_glob"],
            ),
        ),
        (
            "search_docs",
            "What this repository's own docs say (README, CONTRIBUTING, ADRs, docs/).",
            params(json!({"query": {"type": "string"}}), &["query"]),
        ),
    ];
    all.into_iter().filter(|(n, _, _)| offered.contains(n)).collect()
}

/// The native `tools` array (strict function schemas).
pub fn native_tools(offered: &[&str]) -> Vec<Value> {
    tool_specs(offered)
        .into_iter()
        .map(|(name, description, parameters)| {
            json!({"type": "function", "function": {
                "name": name, "description": description, "parameters": parameters, "strict": true}})
        })
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallersArgs {
    symbol: String,
    #[serde(default = "two")]
    hops: u8,
}
fn two() -> u8 {
    2
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SymbolArgs {
    symbol: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SnippetArgs {
    path: String,
    start: u32,
    end: u32,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    path_glob: Option<String>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    query: String,
}

/// Parses a call by name and JSON arguments; the error is for the model.
pub fn parse_call(name: &str, arguments: &Value) -> Result<ToolCall, String> {
    fn args<T: serde::de::DeserializeOwned>(name: &str, v: &Value) -> Result<T, String> {
        serde_json::from_value(v.clone()).map_err(|e| format!("invalid arguments for {name}: {e}"))
    }
    let nonempty = |field: &str, s: String| {
        if s.trim().is_empty() {
            Err(format!("invalid arguments for {name}: `{field}` is empty"))
        } else {
            Ok(s)
        }
    };
    Ok(match name {
        "get_callers" => {
            let a: CallersArgs = args(name, arguments)?;
            ToolCall::GetCallers {
                symbol: nonempty("symbol", a.symbol)?,
                hops: a.hops,
            }
        }
        "find_tests" => {
            let a: SymbolArgs = args(name, arguments)?;
            ToolCall::FindTests {
                symbol: nonempty("symbol", a.symbol)?,
            }
        }
        "read_snippet" => {
            let a: SnippetArgs = args(name, arguments)?;
            ToolCall::ReadSnippet {
                path: a.path,
                start: a.start,
                end: a.end,
            }
        }
        "search_code" => {
            let a: SearchArgs = args(name, arguments)?;
            if let Some(g) = &a.path_glob {
                globset::Glob::new(g).map_err(|e| format!("invalid arguments for search_code: path_glob: {e}"))?;
            }
            ToolCall::SearchCode {
                query: nonempty("query", a.query)?,
                path_glob: a.path_glob.filter(|g| !g.trim().is_empty()),
            }
        }
        "search_docs" => {
            let a: QueryArgs = args(name, arguments)?;
            ToolCall::SearchDocs {
                query: nonempty("query", a.query)?,
            }
        }
        other => {
            return Err(format!(
                "no tool named `{other}`; the tools are {}",
                TOOL_NAMES.join(", ")
            ));
        }
    })
}

/// Parses a call whose arguments arrived as text.
pub fn parse_call_text(name: &str, arguments: &str) -> Result<ToolCall, String> {
    let v: Value = if arguments.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(arguments).map_err(|e| format!("arguments for {name} are not JSON: {e}"))?
    };
    parse_call(name, &v)
}

/// The action protocol's schema for a turn that must call tools.
pub fn tool_calls_schema(offered: &[&str]) -> Value {
    action_schema(true, offered)["anyOf"][0].clone()
}

/// The action protocol's per-turn schema: either tool calls or the final
/// findings (tools off on the last turn: findings only).
pub fn action_schema(tools: bool, offered: &[&str]) -> Value {
    let findings = json!({
        "type": "object", "additionalProperties": false, "required": ["findings"],
        "properties": {"findings": crate::schema::findings_schema()["properties"]["findings"].clone()}
    });
    if !tools {
        return findings;
    }
    let calls: Vec<Value> = tool_specs(offered)
        .into_iter()
        .map(|(name, _, parameters)| {
            json!({"type": "object", "additionalProperties": false, "required": ["name", "arguments"],
                   "properties": {"name": {"type": "string", "enum": [name]}, "arguments": parameters}})
        })
        .collect();
    let tool_turn = json!({
        "type": "object", "additionalProperties": false, "required": ["tool_calls"],
        "properties": {"tool_calls": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"anyOf": calls}}}
    });
    json!({"anyOf": [tool_turn, findings]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_validated_with_messages_a_model_can_act_on() {
        assert_eq!(
            parse_call_text("get_callers", r#"{"symbol":"a.b","hops":1}"#).unwrap(),
            ToolCall::GetCallers {
                symbol: "a.b".into(),
                hops: 1
            }
        );
        let e = parse_call_text("get_callers", r#"{"sym":"a"}"#).unwrap_err();
        assert!(e.contains("invalid arguments for get_callers"), "{e}");
        let e = parse_call_text("rm_rf", "{}").unwrap_err();
        assert!(e.contains("no tool named `rm_rf`"), "{e}");
        let e = parse_call_text("read_snippet", "{not json").unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
        let e = parse_call_text("search_code", r#"{"query":"x","path_glob":"a/[b"}"#).unwrap_err();
        assert!(e.contains("path_glob"), "{e}");
    }

    #[test]
    fn every_tool_has_a_strict_schema() {
        for t in native_tools(&TOOL_NAMES) {
            assert_eq!(t["function"]["strict"], true);
            assert_eq!(t["function"]["parameters"]["additionalProperties"], false);
        }
        assert_eq!(native_tools(&TOOL_NAMES).len(), TOOL_NAMES.len());
        let some = native_tools(&["find_tests"]);
        assert_eq!(some.len(), 1);
        assert_eq!(some[0]["function"]["name"], "find_tests");
    }
}
