//! How `quorum review` and `quorum demo` print a review: coloured at a
//! terminal, plain when piped or redirected.

use std::fmt::Write as _;
use std::io::IsTerminal;

use quorum_core::{Review, Severity};

/// Whether to colour: never with `NO_COLOR` set to anything but the empty
/// string (<https://no-color.org>); always with `CLICOLOR_FORCE` set (and
/// not `0`); otherwise when stdout is a terminal that is not `TERM=dumb`.
/// `var` reads an environment variable.
pub fn use_colour(stdout_is_terminal: bool, var: impl Fn(&str) -> Option<String>) -> bool {
    if var("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    if var("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0") {
        return true;
    }
    stdout_is_terminal && var("TERM").as_deref() != Some("dumb")
}

/// The review as this process should print it on stdout.
pub fn render(review: &Review) -> String {
    let env = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    if use_colour(std::io::stdout().is_terminal(), env) {
        paint_terminal(&review.render_terminal())
    } else {
        review.render_terminal()
    }
}

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";

fn severity_style(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "\x1b[1;91m",
        Severity::Major => "\x1b[1;31m",
        Severity::Minor => "\x1b[1;33m",
        Severity::Nitpick => "\x1b[1;36m",
    }
}

fn verdict_style(v: &str) -> &'static str {
    match v {
        "approve" => "\x1b[1;32m",
        "comment" => "\x1b[1;33m",
        _ => "\x1b[1;31m",
    }
}

/// Colours the plain terminal rendering line by line (the layout is
/// `quorum_core::review`'s: `render_body`, `render_markdown`, the comment
/// bodies): the verdict heading in its colour, each finding's title in its
/// severity's, `file:line`s dim. Without the escape codes it is the plain
/// rendering, character for character.
pub fn paint_terminal(plain: &str) -> String {
    let mut out = String::with_capacity(plain.len() + plain.len() / 4);
    for line in plain.split_inclusive('\n') {
        let (text, nl) = match line.strip_suffix('\n') {
            Some(t) => (t, "\n"),
            None => (line, ""),
        };
        if let Some(v) = text.strip_prefix("## Quorum review — ") {
            let _ = write!(out, "{}{text}{RESET}", verdict_style(v.trim()));
        } else if text.starts_with("### ") || text.starts_with("> **Warning:**") {
            let style = if text.starts_with('>') { "\x1b[33m" } else { BOLD };
            let _ = write!(out, "{style}{text}{RESET}");
        } else if text.starts_with("<details>") || text.starts_with("</details>") {
            let _ = write!(out, "{DIM}{text}{RESET}");
        } else {
            out.push_str(&paint_title(&dim_locations(text)));
        }
        out.push_str(nl);
    }
    out
}

/// Dims every code span that is a `file:line` or `file:start-end`.
fn dim_locations(text: &str) -> String {
    let is_location = |span: &str| {
        span.rsplit_once(':').is_some_and(|(path, lines)| {
            !path.is_empty()
                && !path.contains(char::is_whitespace)
                && !lines.is_empty()
                && lines
                    .split('-')
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        let span = &rest[open..open + len + 2];
        out.push_str(&rest[..open]);
        if is_location(&span[1..span.len() - 1]) {
            let _ = write!(out, "{DIM}{span}{RESET}");
        } else {
            out.push_str(span);
        }
        rest = &rest[open + len + 2..];
    }
    out.push_str(rest);
    out
}

/// A finding's `**title** (severity, …` in the severity's colour.
fn paint_title(text: &str) -> String {
    let Some(start) = text.find("**") else {
        return text.to_string();
    };
    let Some(len) = text[start + 2..].find("** (") else {
        return text.to_string();
    };
    let end = start + 2 + len + 2;
    let severity = text[end + 2..].split(',').next().and_then(|w| match w {
        "critical" => Some(Severity::Critical),
        "major" => Some(Severity::Major),
        "minor" => Some(Severity::Minor),
        "nitpick" => Some(Severity::Nitpick),
        _ => None,
    });
    match severity {
        Some(sev) => format!(
            "{}{}{}{RESET}{}",
            &text[..start],
            severity_style(sev),
            &text[start..end],
            &text[end..]
        ),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{paint_terminal, use_colour};
    use quorum_core::diff::{FileStatus, parse_file_patch};
    use quorum_core::review::{InlinePolicy, Verdict, build_review};
    use quorum_core::{Review, Severity};
    use quorum_testkit::finding;

    fn without_ansi(s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("\x1b[") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let m = after.find('m').expect("an SGR sequence ends in m");
            rest = &after[m + 1..];
        }
        out.push_str(rest);
        out
    }

    #[test]
    fn the_coloured_terminal_rendering_is_the_plain_one_with_colours() {
        let diff = parse_file_patch("a.py", None, FileStatus::Modified, "@@ -1,2 +1,3 @@\n a\n+b\n c\n").0;
        let mut minor = finding("a.py", 2, "Edge case");
        minor.severity = Severity::Minor;
        minor.explanation = "See `helper()` and **bold** (text).".into();
        let kept = [
            finding("a.py", 2, "Tax parameter added"),
            minor,
            finding("b.py", 9, "Caller not updated"),
        ];
        let placed = build_review(&kept, &[diff], &[], &InlinePolicy::default());
        let review = Review {
            location: None,
            job_id: "j".into(),
            verdict: Verdict::RequestChanges,
            summary: "3 finding(s) kept.".into(),
            inline: placed.inline,
            body_comments: placed.body_comments,
            agents: vec![],
            rejected: vec![],
            kept: kept.to_vec(),
            not_reviewed: vec![],
            notices: vec![],
            notes: placed.notes,
        };
        let plain = review.render_terminal();
        assert!(!plain.contains('\x1b'), "no escape codes when plain: {plain:?}");
        let coloured = paint_terminal(&review.render_terminal());
        assert_eq!(without_ansi(&coloured), plain, "the same text");
        for styled in [
            "\x1b[1;31m## Quorum review — request_changes\x1b[0m",
            "#### \x1b[2m`a.py:2`\x1b[0m",
            "\x1b[1;31m**Tax parameter added**\x1b[0m (major,",
            "\x1b[1;33m**Edge case**\x1b[0m (minor,",
            "- \x1b[2m`b.py:9`\x1b[0m \x1b[1;31m**Caller not updated**\x1b[0m",
            "\x1b[1m### Outside the diff\x1b[0m",
        ] {
            assert!(coloured.contains(styled), "{styled:?} missing from {coloured:?}");
        }
        assert!(
            coloured.contains("See `helper()` and **bold** (text)."),
            "code that is not a location, and bold that is not a title, stay as they are: {coloured:?}"
        );
    }

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|(name, _)| *name == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn colour_at_a_terminal_only_and_never_with_no_color() {
        assert!(use_colour(true, env(&[])), "a terminal");
        assert!(!use_colour(false, env(&[])), "a pipe or a file");
        assert!(!use_colour(true, env(&[("NO_COLOR", "1")])), "NO_COLOR disables");
        assert!(use_colour(true, env(&[("NO_COLOR", "")])), "an empty NO_COLOR does not");
        assert!(!use_colour(true, env(&[("TERM", "dumb")])));
        assert!(use_colour(false, env(&[("CLICOLOR_FORCE", "1")])), "forced");
        assert!(!use_colour(false, env(&[("CLICOLOR_FORCE", "0")])));
        assert!(
            !use_colour(true, env(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])),
            "NO_COLOR wins"
        );
    }
}
