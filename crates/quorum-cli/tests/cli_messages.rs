//! Commands that used to be silent or cryptic say what is wrong and what to
//! do, and the terminal never shows the SCM's hidden markers.

use std::process::Command;

fn quorum(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_quorum"))
        .args(args)
        .env_remove("REDIS_URL")
        .env_remove("KAFKA_BROKERS")
        .output()
        .expect("run quorum")
}

#[test]
fn runs_without_redis_explains_where_runs_live() {
    let out = quorum(&["runs"]);
    assert!(!out.status.success(), "must not exit 0 with nothing to show");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("REDIS_URL") && err.contains("memory of the process"),
        "{err}"
    );
}

#[test]
fn an_unknown_demo_case_lists_the_cases() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../storefront-fixture");
    let out = quorum(&["demo", "--fixture", fixture, "--case", "nope"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("there is no case `nope`"), "{err}");
    assert!(
        err.contains("01-sql-fstring-email-lookup"),
        "the cases are listed: {err}"
    );
}

#[test]
fn the_demo_prints_no_fingerprint_markers() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../storefront-fixture");
    let out = quorum(&["demo", "--fixture", fixture, "--case", "01-sql-fstring-email-lookup"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SQL built by string interpolation"), "{text}");
    assert!(!text.contains("<!--"), "{text}");
    assert!(!text.contains('\x1b'), "piped, so no colour: {text:?}");
}

/// Colour is for terminals: forced with `CLICOLOR_FORCE` (what a terminal
/// gets), and `NO_COLOR` turns it off even then.
#[test]
fn the_review_is_coloured_unless_no_color_says_otherwise() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../storefront-fixture");
    let demo = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_quorum"));
        cmd.args(["demo", "--fixture", fixture, "--case", "01-sql-fstring-email-lookup"])
            .env_remove("REDIS_URL")
            .env_remove("KAFKA_BROKERS")
            .env_remove("NO_COLOR")
            .envs(env.iter().copied());
        let out = cmd.output().expect("run quorum");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let coloured = demo(&[("CLICOLOR_FORCE", "1")]);
    assert!(
        coloured.contains("\x1b[1;31m## Quorum review — request_changes\x1b[0m"),
        "{coloured:?}"
    );
    assert!(
        coloured.contains("**SQL built by string interpolation**\x1b[0m"),
        "{coloured:?}"
    );
    let plain = demo(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert!(plain.contains("SQL built by string interpolation"), "{plain}");
    assert!(!plain.contains('\x1b'), "NO_COLOR: {plain:?}");
}

/// `quorum up` with a bad SCM setup stops at once and says why, before any
/// webhook could be taken.
#[test]
fn up_says_what_is_missing_or_contradictory_in_the_scm_setup() {
    let up = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_quorum"));
        cmd.args(["up", "--gateway-addr", "127.0.0.1:0"]);
        for var in [
            "REDIS_URL",
            "KAFKA_BROKERS",
            "GITHUB_WEBHOOK_SECRET",
            "GITLAB_WEBHOOK_TOKEN",
            "GITHUB_TOKEN",
            "GITHUB_APP_ID",
            "GITLAB_TOKEN",
            "GITLAB_URL",
        ] {
            cmd.env_remove(var);
        }
        cmd.envs(env.iter().copied());
        let out = cmd.output().expect("run quorum");
        assert!(!out.status.success(), "{env:?} must not start");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = up(&[]);
    assert!(
        err.contains("GITHUB_WEBHOOK_SECRET") && err.contains("GITLAB_WEBHOOK_TOKEN"),
        "{err}"
    );
    let err = up(&[
        ("GITLAB_WEBHOOK_TOKEN", "t"),
        ("GITHUB_TOKEN", "ghp"),
        ("GITLAB_TOKEN", "glpat"),
    ]);
    assert!(err.contains("a fleet talks to one SCM"), "{err}");
    let err = up(&[
        ("GITLAB_WEBHOOK_TOKEN", "t"),
        ("GITLAB_URL", "https://gitlab.example.com"),
    ]);
    assert!(err.contains("no token is set"), "{err}");
    assert!(!err.contains("glpat"));
}
