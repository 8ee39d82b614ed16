//! Checks requests and responses against an OpenAPI 3.0 description (GitHub's
//! official REST description, cut to the review endpoints), so the emulated
//! GitHub can only say what the real one documents and Quorum is caught
//! sending what it does not accept.
//!
//! OpenAPI 3.0 schemas are JSON Schema draft 4 plus `nullable`; `nullable`
//! is rewritten to a `null` alternative before compiling.

use serde_json::{Value, json};

/// A loaded description.
pub struct OpenApi {
    doc: Value,
}

fn to_json_schema(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (k, val) in map {
                if k == "nullable" || k == "example" || k == "examples" {
                    continue;
                }
                out.insert(k.clone(), to_json_schema(val));
            }
            if map.get("nullable") == Some(&Value::Bool(true)) {
                match out.get("type").cloned() {
                    Some(Value::String(t)) => {
                        out.insert("type".into(), json!([t, "null"]));
                        if let Some(Value::Array(e)) = out.get_mut("enum") {
                            e.push(Value::Null);
                        }
                    }
                    _ => return json!({"anyOf": [Value::Object(out), {"type": "null"}]}),
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(to_json_schema).collect()),
        other => other.clone(),
    }
}

/// Whether a concrete path matches a template; a trailing `{path}`
/// parameter takes the rest of the path (GitHub's contents API).
fn matches(template: &str, path: &str) -> bool {
    let t: Vec<&str> = template.trim_matches('/').split('/').collect();
    let p: Vec<&str> = path.trim_matches('/').split('/').collect();
    for (i, seg) in t.iter().enumerate() {
        let is_param = seg.starts_with('{') && seg.ends_with('}');
        if is_param && i == t.len() - 1 && *seg == "{path}" {
            return p.len() >= t.len();
        }
        match p.get(i) {
            Some(actual) if is_param || actual == seg => {}
            _ => return false,
        }
    }
    t.len() == p.len()
}

impl OpenApi {
    pub fn new(doc: Value) -> OpenApi {
        OpenApi { doc }
    }

    /// GitHub's REST description (npm `@octokit/openapi` 23.0.2, MIT), cut
    /// to pulls, files, reviews, review comments, contents and App auth.
    pub fn github_review_subset() -> OpenApi {
        let text = include_str!("../fixtures/github/api.github.com.review-subset.json");
        OpenApi::new(serde_json::from_str(text).expect("the bundled description is JSON"))
    }

    fn resolve<'a>(&'a self, v: &'a Value) -> &'a Value {
        match v.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let pointer = r.trim_start_matches('#');
                self.resolve(self.doc.pointer(pointer).unwrap_or(&Value::Null))
            }
            None => v,
        }
    }

    /// The operation for `method` on a concrete path, if described.
    pub fn operation(&self, method: &str, path: &str) -> Option<(&str, &Value)> {
        let paths = self.doc["paths"].as_object()?;
        // `/pulls/comments` matches `/pulls/{pull_number}` too: the template
        // with the most literal segments is the one meant.
        paths
            .iter()
            .filter(|(template, _)| matches(template, path))
            .filter_map(|(template, ops)| ops.get(method.to_ascii_lowercase()).map(|op| (template.as_str(), op)))
            .max_by_key(|(template, _)| template.split('/').filter(|s| !s.starts_with('{')).count())
    }

    /// A named example (`components/examples/<name>`), resolved.
    pub fn example(&self, name: &str) -> Value {
        let e = &self.doc["components"]["examples"][name];
        self.resolve(e)["value"].clone()
    }

    fn validate(&self, schema: &Value, instance: &Value) -> Vec<String> {
        let root = json!({
            "components": to_json_schema(&self.doc["components"]),
            "allOf": [to_json_schema(schema)],
        });
        let validator = match jsonschema::options().with_draft(jsonschema::Draft::Draft4).build(&root) {
            Ok(v) => v,
            Err(e) => return vec![format!("the description's schema does not compile: {e}")],
        };
        validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }

    /// Problems with a request body; empty when it validates or when the
    /// operation is not in the description (see [`OpenApi::operation`]).
    pub fn check_request(&self, method: &str, path: &str, body: &Value) -> Vec<String> {
        let Some((template, op)) = self.operation(method, path) else {
            return vec![];
        };
        let rb = self.resolve(&op["requestBody"]);
        let schema = &rb["content"]["application/json"]["schema"];
        if schema.is_null() {
            return vec![];
        }
        self.validate(schema, body)
            .into_iter()
            .map(|e| format!("request {method} {template}: {e}"))
            .collect()
    }

    /// Problems with a response body for `status`.
    pub fn check_response(&self, method: &str, path: &str, status: u16, body: &Value) -> Vec<String> {
        let Some((template, op)) = self.operation(method, path) else {
            return vec![];
        };
        let Some(resp) = op["responses"].get(status.to_string()) else {
            return vec![format!(
                "response {method} {template}: status {status} is not described"
            )];
        };
        let resp = self.resolve(resp);
        let schema = &resp["content"]["application/json"]["schema"];
        if schema.is_null() {
            return vec![];
        }
        self.validate(schema, body)
            .into_iter()
            .map(|e| format!("response {status} to {method} {template}: {e}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_descriptions_own_examples_validate_and_bad_bodies_do_not() {
        let api = OpenApi::github_review_subset();
        let mut pr = api.example("pull-request");
        // GitHub's own example predates the required team `type` field: the
        // validator catches that, so the emulator sends no teams.
        assert!(!api.check_response("GET", "/repos/o/r/pulls/1", 200, &pr).is_empty());
        pr["requested_teams"] = json!([]);
        let problems = api.check_response("GET", "/repos/o/r/pulls/1", 200, &pr);
        assert!(problems.is_empty(), "{problems:#?}");
        let mut broken = pr.clone();
        broken["number"] = json!("one");
        assert!(!api.check_response("GET", "/repos/o/r/pulls/1", 200, &broken).is_empty());

        let ok = json!({"commit_id": "a", "body": "b", "event": "COMMENT",
                        "comments": [{"path": "x.py", "line": 3, "side": "RIGHT", "body": "c"}]});
        assert!(api.check_request("POST", "/repos/o/r/pulls/1/reviews", &ok).is_empty());
        let bad = json!({"event": "LGTM", "comments": [{"line": 3}]});
        let problems = api.check_request("POST", "/repos/o/r/pulls/1/reviews", &bad);
        assert!(problems.len() >= 2, "{problems:?}");

        let file = api.example("content-file-response-if-content-is-a-file");
        assert!(
            api.check_response("GET", "/repos/o/r/contents/src/a/b.py", 200, &file)
                .is_empty(),
            "{:?}",
            api.check_response("GET", "/repos/o/r/contents/src/a/b.py", 200, &file)
        );
        assert!(api.operation("GET", "/repos/o/r/check-runs").is_none());
    }
}
