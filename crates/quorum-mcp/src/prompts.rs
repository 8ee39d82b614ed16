//! MCP prompts: the three questions a developer asks before opening a pull
//! request, each spelled out as the tool calls that answer it, so any
//! client's agent runs the same recipe.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{PromptMessage, Role};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{prompt, prompt_router};
use serde::Deserialize;

use crate::QuorumMcp;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewAsArgs {
    /// The reviewer's login (GitHub) or username (GitLab).
    pub login: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WhatBreaksArgs {
    /// A qualified name (`pkg.module.func`, `Class.method`) or a unique bare name.
    pub symbol: String,
}

fn user(text: String) -> Vec<PromptMessage> {
    vec![PromptMessage::new_text(Role::User, text)]
}

#[prompt_router(vis = "pub(crate)")]
impl QuorumMcp {
    #[prompt(
        name = "review-staged",
        description = "Review my staged changes with Quorum before I commit."
    )]
    async fn review_staged(&self) -> Vec<PromptMessage> {
        let repo = &self.repo_name();
        user(format!(
            "Review my staged changes in `{repo}` before I commit.\n\
             1. Call `review_diff` with repo=\"{repo}\" and changes=\"staged\".\n\
             2. Call `impact` with the same arguments to see who calls what I changed.\n\
             3. For each finding, read the code around it with `read_snippet` and say whether \
             you can confirm it; drop what you cannot.\n\
             Answer with the confirmed findings first (file:line, why it matters, the fix), then \
             the callers or tests I should look at, then what the critic rejected if it matters."
        ))
    }

    #[prompt(
        name = "review-as",
        description = "Review my uncommitted changes as a given teammate would, from their past reviews."
    )]
    async fn review_as(&self, Parameters(a): Parameters<ReviewAsArgs>) -> Vec<PromptMessage> {
        let repo = &self.repo_name();
        let login = a.login.trim().trim_start_matches('@');
        user(format!(
            "Review my uncommitted changes in `{repo}` as @{login} would.\n\
             1. Call `review_diff` with repo=\"{repo}\" (changes defaults to the working tree) for the \
             findings Quorum itself makes.\n\
             2. For each changed file, call `past_reviews` with repo=\"{repo}\", as_person=\"{login}\", \
             file=<the file> and query=<the changed code> to see what @{login} has asked for before.\n\
             3. Comment as @{login}: only on what their past threads show they care about, quoting the \
             thread (its URL) that shows it. If they have no past threads here, say so and do not invent \
             a persona."
        ))
    }

    #[prompt(
        name = "what-breaks",
        description = "What breaks if I change a symbol: callers, tests and similar code."
    )]
    async fn what_breaks(&self, Parameters(a): Parameters<WhatBreaksArgs>) -> Vec<PromptMessage> {
        let repo = &self.repo_name();
        let symbol = a.symbol.trim();
        user(format!(
            "What breaks in `{repo}` if I change `{symbol}` (its signature, return value or behaviour)?\n\
             1. Call `get_callers` with repo=\"{repo}\", symbol=\"{symbol}\", hops=2.\n\
             2. Call `find_tests` with the same symbol.\n\
             3. Call `search_code` with repo=\"{repo}\" and the symbol's last name, to find uses the call \
             graph cannot resolve (dynamic calls, strings, other languages).\n\
             4. Read each direct caller with `read_snippet` and say how it uses the result or arguments.\n\
             Answer with the callers that would break and why, the tests to run, and the uses you could \
             not confirm."
        ))
    }
}
