//! How `quorum review` and `quorum demo` print a review: coloured at a
//! terminal, plain when piped or redirected.

use std::io::IsTerminal;

use quorum_core::Review;

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
        review.render_terminal_coloured()
    } else {
        review.render_terminal()
    }
}

#[cfg(test)]
mod tests {
    use super::use_colour;

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
