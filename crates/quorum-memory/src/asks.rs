//! What a reviewer asked a change not to do, read from a past review
//! comment deterministically — the conventions a team keeps only in its
//! review threads. Two forms:
//!
//! - words around a code span: "use `logger` **instead of** `print`",
//!   "**don't use** `datetime.utcnow()`", "**prefer** `a` **over** `b`",
//!   "**avoid** `x`", "**no** `print()` in shop code", "**remove the**
//!   `console.log` calls", "**never** `float`";
//! - a GitHub suggestion block: calls on the commented line that the
//!   suggestion no longer makes (`time.sleep(30)` → `await asyncio.sleep(30)`
//!   asks to avoid `time.sleep`).
//!
//! Each ask is a dotted identifier; the convention it becomes matches it as
//! a whole word on added lines. One ask is a one-off: an item needs asks in
//! several merged pull requests by trusted reviewers (the same gates as
//! every learned item).

use std::collections::BTreeSet;

/// Words that, right before a code span, ask not to use it.
const BEFORE: &[&str] = &[
    "instead of",
    "don't use",
    "do not use",
    "dont use",
    "don't call",
    "do not call",
    "never use",
    "never call",
    "stop using",
    "avoid using",
    "avoid calling",
    "avoid",
    "never",
    "no",
    "remove the",
    "remove",
    "drop the",
    "over",
];

/// The identifiers a comment asks to avoid (`datetime.utcnow`, `print`).
pub fn avoid_asks(body: &str, diff_hunk: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (prose, suggestions) = split_suggestions(body);
    for (before, span) in spans(&prose) {
        let words = before.to_lowercase();
        let words = words.trim_end();
        let asked = BEFORE.iter().any(|cue| {
            words.ends_with(cue)
                && words[..words.len() - cue.len()]
                    .chars()
                    .last()
                    .is_none_or(|c| !c.is_alphanumeric())
        });
        // "prefer `a` over `b`": only what follows "over" is avoided, and
        // only in a sentence that prefers.
        let over_without_prefer = words.ends_with("over") && !words.contains("prefer");
        if asked
            && !over_without_prefer
            && let Some(id) = identifier(&span)
        {
            out.insert(id);
        }
    }
    if let Some(line) = commented_line(diff_hunk) {
        let before = calls(line);
        for s in suggestions {
            let after = calls(&s);
            out.extend(before.difference(&after).cloned());
        }
    }
    out
}

/// Prose and the bodies of ```suggestion blocks.
fn split_suggestions(body: &str) -> (String, Vec<String>) {
    let mut prose = String::new();
    let mut blocks = vec![];
    let mut inside: Option<String> = None;
    for line in body.lines() {
        let t = line.trim_start();
        match &mut inside {
            Some(b) if t.starts_with("```") => {
                blocks.push(std::mem::take(b));
                inside = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
            None if t.starts_with("```suggestion") => inside = Some(String::new()),
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    (prose, blocks)
}

/// `(text before, code)` for each `code` span; the text before is the
/// sentence so far.
fn spans(prose: &str) -> Vec<(String, String)> {
    let mut out = vec![];
    let mut parts = prose.split('`');
    // Everything before the span, earlier spans included ("prefer `a` over").
    let mut before = parts.next().unwrap_or("").to_string();
    while let (Some(code), Some(after)) = (parts.next(), parts.next()) {
        let sentence = before.rsplit(['!', '?', ';', ':', '\n']).next().unwrap_or("");
        // A full stop ends a sentence only outside code (`a.b`).
        let sentence = sentence.rsplit(". ").next().unwrap_or(sentence);
        out.push((sentence.to_string(), code.to_string()));
        before.push_str(code);
        before.push_str(after);
    }
    out
}

/// The dotted identifier a span names (`datetime.utcnow()` → `datetime.utcnow`);
/// `None` for paths, sentences and very short names.
fn identifier(span: &str) -> Option<String> {
    let s = span.trim();
    let end = s.find('(').unwrap_or(s.len());
    let (name, rest) = s.split_at(end);
    let is_ident = |p: &str| {
        let mut c = p.chars();
        c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
            && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
    };
    let ok = name.len() >= 3 && name.split('.').all(is_ident) && (rest.is_empty() || rest.ends_with(')'));
    ok.then(|| name.to_string())
}

/// The line a review comment sits on: the last line of its diff hunk.
fn commented_line(hunk: &str) -> Option<&str> {
    let last = hunk.lines().last()?;
    match last.chars().next() {
        Some('+' | ' ') => Some(&last[1..]),
        _ => None,
    }
}

/// Dotted names called on a line (`time.sleep(30)` → `time.sleep`).
fn calls(line: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            let name = line[start..i].trim_end_matches('.');
            if b.get(i) == Some(&b'(') && name.len() >= 3 {
                out.insert(name.to_string());
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The regex a convention matches an ask with: the name as a whole word.
pub fn pattern_for(identifier: &str) -> String {
    format!(r"\b{}\b", identifier.replace('.', r"\."))
}

/// The identifier back from a pattern made by [`pattern_for`].
pub fn identifier_of(pattern: &str) -> String {
    pattern
        .trim_start_matches(r"\b")
        .trim_end_matches(r"\b")
        .replace(r"\.", ".")
}

/// The area an ask speaks for: the top-level directory of the file.
pub fn scope_for(path: &str) -> String {
    match path.split_once('/') {
        Some((top, _)) => format!("{top}/**"),
        None => "**".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asks(body: &str) -> Vec<String> {
        avoid_asks(body, "").into_iter().collect()
    }

    #[test]
    fn words_before_a_code_span_ask_to_avoid_it() {
        assert_eq!(asks("Please use `logger.info` instead of `print` here."), ["print"]);
        assert_eq!(asks("Don't use `datetime.utcnow()`: it is naive."), ["datetime.utcnow"]);
        assert_eq!(asks("Prefer `Decimal` over `float` for money."), ["float"]);
        assert_eq!(asks("no `print()` in shop code, use `logger`"), ["print"]);
        assert_eq!(
            asks("Please remove the `console.log` calls; `log.debug` if you need it."),
            ["console.log"]
        );
    }

    #[test]
    fn spans_that_are_not_asks_are_not_taken() {
        // Named, used, paths, prose in backticks, "over" without "prefer".
        assert!(asks("Use the `log` helper from `util/log`.").is_empty());
        assert!(asks("This runs over `items` twice").is_empty());
        assert!(asks("Why `no`?").is_empty());
        assert!(asks("Avoid `it`").is_empty(), "too short to be a convention");
        assert!(asks("I know `print` is used in `scripts/`").is_empty());
        assert!(asks("Casino `print`").is_empty(), "a cue must be a whole word");
    }

    #[test]
    fn a_suggestion_that_drops_a_call_asks_to_avoid_it() {
        let hunk = "@@ -10,3 +10,5 @@ async def poll(client):\n     while True:\n+        time.sleep(30)";
        let body = "```suggestion\n        await asyncio.sleep(30)\n```";
        assert_eq!(avoid_asks(body, hunk).into_iter().collect::<Vec<_>>(), ["time.sleep"]);
        // A suggestion that keeps every call (a rename of an argument) asks nothing.
        let keep = "```suggestion\n        time.sleep(delay)\n```";
        assert!(avoid_asks(keep, hunk).is_empty());
    }

    #[test]
    fn patterns_and_scopes() {
        assert_eq!(pattern_for("datetime.utcnow"), r"\bdatetime\.utcnow\b");
        let re = regex::Regex::new(&pattern_for("print")).unwrap();
        assert!(re.is_match("    print(x)") && !re.is_match("blueprint(x)"));
        assert_eq!(scope_for("shop/a/b.py"), "shop/**");
        assert_eq!(scope_for("setup.py"), "**");
    }
}
