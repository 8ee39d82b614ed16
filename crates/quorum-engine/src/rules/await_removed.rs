//! An `await` the change removed from a call: the line is otherwise the
//! same, so the caller now holds a coroutine, promise or future where it
//! had the value, the call may never run (a Python coroutine or Rust future
//! that is never awaited does nothing), and its errors reach no one.
//!
//! Removing an `await` is right when the thing awaited stopped being
//! asynchronous, so the rule stands back when the change dropped `async`
//! from the callee (in any file of the change: [`made_sync`]) or from the
//! function the call is in, when (JavaScript) the head file defines the
//! callee as a plain synchronous function, and for JavaScript's
//! `return await f()` → `return f()` (the promise is returned either way).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::scope::{enclosing_braces, enclosing_def, lines_of};
use super::{Context, Hit, Rule, RuleMeta, new_side, similar_pairs};
use crate::lang::{Family, strip_comment};

pub struct AwaitRemoved;

static META: RuleMeta = RuleMeta {
    id: "await-removed",
    category: Category::Bug,
    severity: Severity::Major,
    confidence: 0.8,
    title: "`await` removed from a call",
    rationale: "The call is no longer awaited: the code now holds a coroutine, promise or future \
instead of its result, the work may never run or may finish after the code that depends on it, and \
its errors reach no handler. Await it, or make the callee synchronous if that was the intent.",
};

/// `await ` before an expression (JavaScript/TypeScript, Python).
static AWAIT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bawait\s+").unwrap());
/// The name a definition line defines, if it is one: Python `def f`,
/// JavaScript `function f`, a method `f(…) {`, `const f = async (…) =>`,
/// Rust `fn f`.
static DEFINES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:\bdef\s+|\bfunction\s*\*?\s*|\bfn\s+|\b(?:const|let|var)\s+)([\w$]+)|^\s*(?:(?:static|public|private|protected|override)\s+)*([\w$]+)\s*(?:<[^>]*>)?\s*\(",
    )
    .unwrap()
});
/// A line that opens a function's body in a brace language.
static FUNCTION_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bfunction\b|=>\s*\{\s*$|^\s*(?:(?:static|public|private|protected|override|async)\s+)*[\w$]+\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^{=]+)?\{\s*$").unwrap()
});
/// Rust: a function (`fn name`), or a closure's block (`|x| {`), which
/// is not `async` unless an `async` block wraps it. A match arm's `=> {`
/// is neither.
static RUST_FUNCTION_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bfn\s+\w|\|[^|]*\|\s*(?:->\s*[^{]+)?\{\s*$").unwrap());
static ASYNC_BLOCK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\basync\s+(?:move\s*)?\{\s*$").unwrap());
static CONTROL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:\}\s*)?(?:if|else|for|while|switch|catch|try|do|with|return)\b").unwrap());

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `line` with its first `async` keyword dropped, when it has one.
fn without_async(line: &str) -> Option<String> {
    let at = line.find("async ")?;
    let before_ok = at == 0 || !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
    before_ok.then(|| format!("{}{}", &line[..at], &line[at + "async ".len()..]))
}

/// Names of the functions whose definition lost its `async` in `diffs`.
pub fn made_sync(diffs: &[FileDiff]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for h in diffs.iter().flat_map(|f| &f.hunks) {
        for (removed, _, added) in similar_pairs(h) {
            let Some(sync) = without_async(removed) else { continue };
            if squash(&sync) != squash(added) {
                continue;
            }
            if let Some(c) = DEFINES.captures(added) {
                let name = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// The awaited expression's callee, the last name before its `(`
/// (`await self.client.fetch(x)` → `fetch`), or `None` for a plain value.
fn callee_after(expr: &str) -> Option<&str> {
    let end = expr.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))?;
    if !expr[end..].starts_with('(') {
        return None;
    }
    expr[..end].rsplit('.').next().filter(|n| !n.is_empty())
}

/// Rust: the callee of the call just before `.await` (`self.get(x).await` → `get`).
fn callee_before(expr: &str) -> Option<&str> {
    let expr = expr.trim_end();
    let inner = expr.strip_suffix(')')?;
    let mut depth = 1;
    let open = inner.char_indices().rev().find_map(|(i, c)| {
        match c {
            ')' => depth += 1,
            '(' => depth -= 1,
            _ => {}
        }
        (depth == 0).then_some(i)
    })?;
    let head = &inner[..open];
    let start = head
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    Some(&head[start..]).filter(|n| !n.is_empty())
}

/// The removed `await`: the pair's lines are the same but for it. Gives
/// the callee's name, if the awaited thing is a call.
fn await_dropped<'a>(lang: Family, removed: &'a str, added: &str) -> Option<Option<&'a str>> {
    match lang {
        Family::Python | Family::JavaScript => {
            let m = AWAIT.find(removed)?;
            let rest = format!("{}{}", &removed[..m.start()], &removed[m.end()..]);
            (squash(&rest) == squash(added)).then(|| callee_after(&removed[m.end()..]))
        }
        Family::Rust => {
            let at = removed.find(".await")?;
            let rest = format!("{}{}", &removed[..at], &removed[at + ".await".len()..]);
            (squash(&rest) == squash(added)).then(|| callee_before(&removed[..at]))
        }
        _ => None,
    }
}

/// Whether the function `line` (1-based) sits in is `async`, read from
/// the head; `None` when no function header is found.
fn in_async_function(lang: Family, head: &str, line: u32) -> Option<bool> {
    if lang == Family::Python {
        let def = enclosing_def(head, line)?;
        return Some(
            head.lines()
                .nth(def.open as usize - 1)?
                .trim_start()
                .starts_with("async "),
        );
    }
    let mut block = enclosing_braces(head, line)?;
    for _ in 0..8 {
        let first = lines_of(head, block).first().copied()?;
        // Rust's `async move {` block awaits inside a function that is not
        // `async` itself (`fn f() -> impl Future { async move { … } }`).
        if ASYNC_BLOCK.is_match(first) {
            return Some(true);
        }
        let header: &Regex = if lang == Family::Rust {
            &RUST_FUNCTION_HEADER
        } else {
            &FUNCTION_HEADER
        };
        if header.is_match(first) && !CONTROL.is_match(first) {
            return Some(first.contains("async"));
        }
        block = enclosing_braces(head, block.open)?;
    }
    None
}

/// JavaScript: whether the head file defines `name` as a plain
/// synchronous function — declared without `async`, and no line of it
/// returns a call or mentions a promise — so awaiting it waited for
/// nothing. Python's and Rust's `await` on a call proves the call returns
/// an awaitable (anything else fails at run or compile time), so there a
/// callee without `async` proves nothing and is not asked.
fn plain_sync_js(head: &str, name: &str) -> bool {
    let pattern = format!(
        r"^\s*(?:export\s+)?(async\s+)?function\s*\*?\s*{}\s*\(",
        regex::escape(name)
    );
    let Ok(re) = Regex::new(&pattern) else { return false };
    let mut found = false;
    for (i, line) in head.lines().enumerate() {
        let Some(c) = re.captures(line) else { continue };
        if c.get(1).is_some() {
            return false;
        }
        // The body: the block the definition line opens.
        let Some(body) = enclosing_braces(head, i as u32 + 2) else {
            return false;
        };
        if body.open != i as u32 + 1 {
            return false;
        }
        let hands_back_work = lines_of(head, body)
            .iter()
            .any(|l| l.contains("Promise") || l.contains(".then(") || RETURNS_CALL.is_match(l));
        if hands_back_work {
            return false;
        }
        found = true;
    }
    found
}

/// `return f(…)` / `return this.f(…)`: a result that may be a promise.
static RETURNS_CALL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\breturn\s+(?:new\s+)?[\w$.]+\s*\(").unwrap());

impl Rule for AwaitRemoved {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        self.check_in(file, lang, &Context::default())
    }
    fn check_in(&self, file: &FileDiff, lang: Family, ctx: &Context<'_>) -> Vec<Hit> {
        if !matches!(lang, Family::Python | Family::JavaScript | Family::Rust) {
            return vec![];
        }
        // `run_rules` computes it over every file of the change; a lone
        // `check` has only this file.
        let own;
        let synced = match ctx.made_sync {
            Some(all) => all,
            None => {
                own = made_sync(std::slice::from_ref(file));
                &own
            }
        };
        let mut hits = Vec::new();
        for h in &file.hunks {
            for (removed, n, added) in similar_pairs(h) {
                if strip_comment(added, lang).trim().is_empty() {
                    continue;
                }
                let Some(callee) = await_dropped(lang, removed, added) else {
                    continue;
                };
                // `return await f()` → `return f()`: the same promise returned.
                if lang == Family::JavaScript && added.trim_start().starts_with("return ") {
                    continue;
                }
                if let Some(name) = callee
                    && (synced.contains(name)
                        || (lang == Family::JavaScript && ctx.head.is_some_and(|head| plain_sync_js(head, name))))
                {
                    continue;
                }
                // The function the call is in: from the head, or else from
                // the hunk's new side when its header is in the hunk.
                let in_async = match ctx.head {
                    Some(head) => in_async_function(lang, head, n),
                    None => {
                        let side = new_side(h);
                        let text: Vec<&str> = side.iter().map(|(_, t, _)| *t).collect();
                        in_async_function(lang, &text.join("\n"), n + 1 - h.new_start)
                    }
                };
                if in_async == Some(false) {
                    continue;
                }
                let what = match lang {
                    Family::Python => "a coroutine that never runs",
                    Family::Rust => "a future that is never polled",
                    _ => "a promise whose result and errors go unobserved",
                };
                let mut hit = Hit::at(
                    n,
                    format!("`{}` → `{}`: the call now gives {what}", removed.trim(), added.trim()),
                );
                if lang == Family::JavaScript && callee.is_none() {
                    // `await value` on something that may not be a promise.
                    hit.confidence = Some(0.6);
                }
                hits.push(hit);
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::{diff, hit_lines};

    #[test]
    fn an_await_dropped_from_a_call_in_each_language() {
        let py = [
            " async def pay(order):",
            "-    receipt = await gateway.charge(order)",
            "+    receipt = gateway.charge(order)",
            "     return receipt.id",
        ];
        assert_eq!(hit_lines(&AwaitRemoved, "p.py", &py), [2]);
        let ts = [
            " async function load(id) {",
            "-  const row = await db.find(id);",
            "+  const row = db.find(id);",
            "   return row.name;",
            " }",
        ];
        assert_eq!(hit_lines(&AwaitRemoved, "p.ts", &ts), [2]);
        let rs = [
            " async fn load(id: u32) -> Row {",
            "-    let row = db.find(id).await?;",
            "+    let row = db.find(id)?;",
            "     row",
            " }",
        ];
        assert_eq!(hit_lines(&AwaitRemoved, "p.rs", &rs), [2]);
        // Inside an `async move` block of a function that is not `async`.
        let block = [
            " fn load(id: u32) -> impl Future<Output = Row> {",
            "     async move {",
            "-        db.find(id).await",
            "+        db.find(id)",
            "     }",
            " }",
        ];
        assert_eq!(hit_lines(&AwaitRemoved, "p.rs", &block), [3]);
        // In a match arm of an `async fn` (the arm's `=> {` is not a function).
        let arm = [
            " async fn connect(self, dst: Uri) -> Result<Conn, Error> {",
            "     match self.inner {",
            "         Inner::Http(mut http) => {",
            "-            let io = http.call(dst).await?;",
            "+            let io = http.call(dst)?;",
            "             Ok(io)",
            "         }",
            "     }",
            " }",
        ];
        assert_eq!(hit_lines(&AwaitRemoved, "p.rs", &arm), [4]);
    }

    #[test]
    fn an_await_that_had_to_go_is_not_reported() {
        // The function it is in became synchronous.
        let py = [
            "-async def pay(order):",
            "-    receipt = await charge(order)",
            "+def pay(order):",
            "+    receipt = charge(order)",
            "     return receipt.id",
        ];
        assert!(hit_lines(&AwaitRemoved, "p.py", &py).is_empty());
        // The callee became synchronous in another file of the change.
        let callee = diff(
            "lib.ts",
            &[
                "-export async function find(id) {",
                "+export function find(id) {",
                "   return cache.get(id);",
                " }",
            ],
        );
        let caller = diff("p.ts", &["-  const row = await find(id);", "+  const row = find(id);"]);
        let synced = made_sync(&[callee, caller.clone()]);
        assert!(synced.contains("find"), "{synced:?}");
        let ctx = Context {
            head: None,
            made_sync: Some(&synced),
        };
        assert!(AwaitRemoved.check_in(&caller, Family::JavaScript, &ctx).is_empty());
        assert_eq!(AwaitRemoved.check(&caller, Family::JavaScript).len(), 1);
        // The head defines the callee as a plain synchronous function: a
        // redundant await removed.
        let head = "function find(id) {\n  const row = cache[id];\n  return row;\n}\nasync function load(id) {\n  const row = find(id);\n}\n";
        let ctx = Context {
            head: Some(head),
            made_sync: None,
        };
        assert!(AwaitRemoved.check_in(&caller, Family::JavaScript, &ctx).is_empty());
        // A function without `async` that returns a call may return a
        // promise (undici's style): the removed await still counts.
        let promising = head.replace("  return row;", "  return fetchRow(row);");
        let ctx = Context {
            head: Some(&promising),
            made_sync: None,
        };
        assert_eq!(AwaitRemoved.check_in(&caller, Family::JavaScript, &ctx).len(), 1);
        // In Python an `await f()` that ran proves `f()` gives an awaitable,
        // whatever its `def` says.
        let py = diff("p.py", &["-    row = await find(k)", "+    row = find(k)"]);
        let py_head =
            "def find(k):\n    return loop.run_in_executor(None, get, k)\nasync def load(k):\n    row = find(k)\n";
        let ctx = Context {
            head: Some(py_head),
            made_sync: None,
        };
        assert_eq!(AwaitRemoved.check_in(&py, Family::Python, &ctx).len(), 1);
        // `return await f()` → `return f()` returns the same promise.
        assert!(
            hit_lines(
                &AwaitRemoved,
                "p.js",
                &["-  return await find(id);", "+  return find(id);"]
            )
            .is_empty()
        );
        // Any other edit on the line is not this rule's business.
        assert!(hit_lines(&AwaitRemoved, "p.py", &["-    x = await f(a)", "+    x = g(a)"]).is_empty());
    }

    #[test]
    fn callees_are_read_from_either_side_of_the_await() {
        assert_eq!(callee_after("self.client.fetch(x)"), Some("fetch"));
        assert_eq!(callee_after("ready"), None);
        assert_eq!(callee_before("self.get(a, (b, c))"), Some("get"));
        assert_eq!(callee_before("fut"), None);
    }
}
