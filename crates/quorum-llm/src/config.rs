//! Model endpoint settings (F-AG-4): flags and environment, validated once at
//! start-up. No model URL means no model: the offline engine reviews.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use quorum_core::AgentRole;

/// How the loop asks for tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ToolMode {
    /// The API's native `tools` / `tool_calls`.
    #[default]
    Native,
    /// A schema-constrained action protocol: each turn the model answers
    /// `{"tool_calls": [...]}` or `{"findings": [...]}` under
    /// `response_format`, for servers whose native tool calls are unreliable
    /// (llama.cpp with small models).
    Json,
}

pub use quorum_core::Secret;

/// Everything the client and the loop need to talk to one endpoint.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// The OpenAI-compatible base URL, up to and including `/v1`.
    pub base_url: String,
    pub api_key: Option<Secret>,
    pub model: String,
    /// Used on refusal or when the primary model keeps failing.
    pub fallback_model: Option<String>,
    pub temperature: f32,
    /// Completion tokens per call.
    pub max_tokens: u32,
    /// Sampling seed sent with every call (servers that honour it answer
    /// the same request the same way).
    pub seed: Option<u64>,
    /// Where model responses are recorded and replayed from
    /// ([`crate::cache`]); `None`: every call is live.
    pub cache_dir: Option<PathBuf>,
    /// One HTTP request, connect to last byte.
    pub timeout: Duration,
    /// Retries of one call (429, 5xx that can pass, timeouts).
    pub retries: u32,
    pub tool_mode: ToolMode,
    /// Whether the server takes `response_format: json_schema`.
    pub structured_output: bool,
    /// Turns per role (the last one without tools); at most
    /// [`MAX_TURNS`].
    pub turns: BTreeMap<AgentRole, u8>,
    /// Prompt budget for the impact report and full files, in tokens.
    pub context_tokens: usize,
    /// The first turn must call a tool (`tool_choice: "required"`, or a
    /// tool-calls-only schema in the action protocol): small models
    /// otherwise answer at once without looking.
    pub first_turn_tools: bool,
}

/// The loop's hard ceiling (F-AG-3).
pub const MAX_TURNS: u8 = 8;

impl LlmConfig {
    /// A config for `base_url` and `model` with the defaults.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> LlmConfig {
        LlmConfig {
            base_url: base_url.into().trim_end_matches('/').to_string(),
            api_key: None,
            model: model.into(),
            fallback_model: None,
            temperature: 0.0,
            max_tokens: 2048,
            seed: None,
            cache_dir: None,
            timeout: Duration::from_secs(120),
            retries: 3,
            tool_mode: ToolMode::Native,
            structured_output: true,
            turns: default_turns(),
            context_tokens: 6000,
            first_turn_tools: false,
        }
    }

    /// Turns `role` may take.
    pub fn turns_for(&self, role: AgentRole) -> u8 {
        self.turns.get(&role).copied().unwrap_or(MAX_TURNS).clamp(1, MAX_TURNS)
    }

    /// Whether `role` calls the model at all: an effort of 0 turns keeps a
    /// role on its offline rules (a cheaper run, or a role the model does
    /// badly).
    pub fn uses_model(&self, role: AgentRole) -> bool {
        role != AgentRole::Static && self.turns.get(&role) != Some(&0)
    }
}

fn default_turns() -> BTreeMap<AgentRole, u8> {
    BTreeMap::from([
        (AgentRole::Reviewer, 8),
        (AgentRole::Security, 6),
        (AgentRole::Tests, 4),
    ])
}

/// A setting that cannot be used, named.
#[derive(Debug, thiserror::Error)]
#[error("model settings: {0}")]
pub struct ConfigError(pub String);

/// The model flags every service and the CLI share (flatten into a clap
/// parser). With no `--model-url` there is no model.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LlmArgs {
    /// OpenAI-compatible endpoint, e.g. `http://127.0.0.1:8081/v1`; unset:
    /// the offline engine reviews.
    #[arg(long, env = "QUORUM_MODEL_URL")]
    pub model_url: Option<String>,
    /// Model name sent to the endpoint.
    #[arg(long, env = "QUORUM_MODEL")]
    pub model: Option<String>,
    /// API key (prefer `--model-api-key-file`; never logged).
    #[arg(long, env = "QUORUM_MODEL_API_KEY", hide_env_values = true)]
    pub model_api_key: Option<String>,
    /// File holding the API key (a mounted secret).
    #[arg(long, env = "QUORUM_MODEL_API_KEY_FILE")]
    pub model_api_key_file: Option<PathBuf>,
    /// Model used when the primary refuses or keeps failing.
    #[arg(long, env = "QUORUM_FALLBACK_MODEL")]
    pub fallback_model: Option<String>,
    #[arg(long, env = "QUORUM_MODEL_TEMPERATURE", default_value_t = 0.0)]
    pub model_temperature: f32,
    /// Completion tokens per call.
    #[arg(long, env = "QUORUM_MODEL_MAX_TOKENS", default_value_t = 2048)]
    pub model_max_tokens: u32,
    /// Sampling seed sent with every model call.
    #[arg(long, env = "QUORUM_MODEL_SEED")]
    pub model_seed: Option<u64>,
    /// Record model responses in DIR and replay them for identical requests
    /// (an eval re-run re-scores without calling the model); off when unset.
    #[arg(long, env = "QUORUM_LLM_CACHE")]
    pub llm_cache: Option<PathBuf>,
    /// Seconds one model request may take.
    #[arg(long, env = "QUORUM_MODEL_TIMEOUT_SECS", default_value_t = 120)]
    pub model_timeout_secs: u64,
    /// Retries per call on 429, 5xx and timeouts.
    #[arg(long, env = "QUORUM_MODEL_RETRIES", default_value_t = 3)]
    pub model_retries: u32,
    /// `native` tool calls, or `json` (a schema-constrained action protocol
    /// for servers whose native tool calls are unreliable).
    #[arg(long, env = "QUORUM_MODEL_TOOLS", value_enum, default_value_t = ToolMode::Native)]
    pub model_tools: ToolMode,
    /// Do not send `response_format: json_schema` (the answer is still
    /// validated).
    #[arg(long, env = "QUORUM_MODEL_NO_SCHEMA")]
    pub model_no_schema: bool,
    /// Turns per role, e.g. `reviewer=8,security=6,tests=4` (1-8; 0 keeps
    /// the role on its offline rules).
    #[arg(long, env = "QUORUM_MODEL_EFFORT")]
    pub model_effort: Option<String>,
    /// Prompt budget for the impact report and full files, in tokens.
    #[arg(long, env = "QUORUM_MODEL_CONTEXT_TOKENS", default_value_t = 6000)]
    pub model_context_tokens: usize,
    /// Require a tool call on the first turn (for small models that
    /// otherwise answer without looking).
    #[arg(long, env = "QUORUM_MODEL_FIRST_TURN_TOOLS")]
    pub model_first_turn_tools: bool,
}

impl LlmArgs {
    /// The validated config, or `None` when no model URL is set.
    pub fn config(&self) -> Result<Option<LlmConfig>, ConfigError> {
        let Some(url) = self.model_url.as_deref().filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ConfigError(format!(
                "--model-url `{url}` must start with http:// or https://"
            )));
        }
        let model = self
            .model
            .as_deref()
            .filter(|m| !m.trim().is_empty())
            .ok_or_else(|| ConfigError("--model-url is set but --model (QUORUM_MODEL) is not".into()))?;
        let mut c = LlmConfig::new(url, model);
        c.api_key = match (&self.model_api_key, &self.model_api_key_file) {
            (Some(_), Some(_)) => {
                return Err(ConfigError(
                    "give the API key once: --model-api-key or --model-api-key-file".into(),
                ));
            }
            (Some(k), None) => Some(Secret::new(k.trim())),
            (None, Some(p)) => {
                let k = std::fs::read_to_string(p)
                    .map_err(|e| ConfigError(format!("--model-api-key-file {}: {e}", p.display())))?;
                Some(Secret::new(k.trim()))
            }
            (None, None) => None,
        };
        c.fallback_model = self.fallback_model.clone().filter(|m| !m.trim().is_empty());
        if !(0.0..=2.0).contains(&self.model_temperature) {
            return Err(ConfigError(format!(
                "--model-temperature {} is outside 0-2",
                self.model_temperature
            )));
        }
        c.temperature = self.model_temperature;
        if self.model_max_tokens == 0 {
            return Err(ConfigError("--model-max-tokens must be at least 1".into()));
        }
        c.max_tokens = self.model_max_tokens;
        c.seed = self.model_seed;
        c.cache_dir = self.llm_cache.clone().filter(|d| !d.as_os_str().is_empty());
        if self.model_timeout_secs == 0 {
            return Err(ConfigError("--model-timeout-secs must be at least 1".into()));
        }
        c.timeout = Duration::from_secs(self.model_timeout_secs);
        c.retries = self.model_retries;
        c.tool_mode = self.model_tools;
        c.structured_output = !self.model_no_schema;
        c.context_tokens = self.model_context_tokens;
        c.first_turn_tools = self.model_first_turn_tools;
        if let Some(effort) = &self.model_effort {
            c.turns.extend(parse_effort(effort)?);
        }
        Ok(Some(c))
    }
}

/// `reviewer=8,security=6` → turns per role.
pub fn parse_effort(s: &str) -> Result<BTreeMap<AgentRole, u8>, ConfigError> {
    let mut out = BTreeMap::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (role, turns) = part
            .split_once('=')
            .ok_or_else(|| ConfigError(format!("--model-effort `{part}`: expected role=turns")))?;
        let role: AgentRole = role
            .trim()
            .parse()
            .map_err(|e| ConfigError(format!("--model-effort `{part}`: {e}")))?;
        if role == AgentRole::Static {
            return Err(ConfigError("--model-effort: the static agent uses no model".into()));
        }
        let turns: u8 = turns
            .trim()
            .parse()
            .ok()
            .filter(|t| (0..=MAX_TURNS).contains(t))
            .ok_or_else(|| {
                ConfigError(format!(
                    "--model-effort `{part}`: turns must be 0 (offline rules only) to {MAX_TURNS}"
                ))
            })?;
        out.insert(role, turns);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(url: &str, model: Option<&str>) -> LlmArgs {
        LlmArgs {
            model_url: Some(url.into()),
            model: model.map(Into::into),
            model_temperature: 0.0,
            model_max_tokens: 100,
            model_timeout_secs: 5,
            model_context_tokens: 1000,
            ..Default::default()
        }
    }

    #[test]
    fn no_url_means_no_model() {
        assert!(LlmArgs::default().config().unwrap().is_none());
    }

    #[test]
    fn bad_settings_are_named() {
        let e = args("ftp://x", Some("m")).config().unwrap_err().to_string();
        assert!(e.contains("must start with http"), "{e}");
        let e = args("http://x/v1", None).config().unwrap_err().to_string();
        assert!(e.contains("--model"), "{e}");
        let mut a = args("http://x/v1", Some("m"));
        a.model_effort = Some("reviewer=9".into());
        assert!(
            a.config()
                .unwrap_err()
                .to_string()
                .contains("0 (offline rules only) to 8")
        );
        a.model_effort = Some("static=2".into());
        assert!(a.config().unwrap_err().to_string().contains("no model"));
        a.model_effort = Some("tests=2,security=3".into());
        let c = a.config().unwrap().unwrap();
        assert_eq!(c.turns_for(AgentRole::Tests), 2);
        assert_eq!(c.turns_for(AgentRole::Reviewer), 8);
        assert!(c.uses_model(AgentRole::Reviewer) && c.uses_model(AgentRole::Tests));
        assert!(!c.uses_model(AgentRole::Static));
        a.model_effort = Some("security=0,reviewer=2".into());
        let c = a.config().unwrap().unwrap();
        assert!(!c.uses_model(AgentRole::Security), "0 turns keeps security offline");
        assert!(c.uses_model(AgentRole::Reviewer));
    }

    #[test]
    fn the_key_is_read_from_a_file_and_never_printed() {
        let dir = tempdir();
        let p = dir.join("key");
        std::fs::write(&p, "sk-very-secret\n").unwrap();
        let mut a = args("http://x/v1/", Some("m"));
        a.model_api_key_file = Some(p);
        let c = a.config().unwrap().unwrap();
        assert_eq!(c.api_key.as_ref().unwrap().expose(), "sk-very-secret");
        assert_eq!(c.base_url, "http://x/v1");
        let printed = format!("{c:?}");
        assert!(!printed.contains("sk-very-secret"), "{printed}");
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("quorum-llm-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
