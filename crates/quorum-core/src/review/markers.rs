//! Fingerprints and the hidden markers that carry them in a posted comment:
//! a re-review after a push reads them back to skip what is already on the
//! pull request (F-PUB-3), and review memory reads the rule marker to tell
//! which kind of finding the team answered. Also how the markers are stripped
//! for a reader who does not need them.

use sha2::{Digest, Sha256};

use crate::finding::Finding;

/// The fingerprint of a finding: stable across pushes because it hashes the
/// file, the whitespace-normalised text of the anchored line and the rule (or
/// title), never the line number.
pub fn fingerprint(finding: &Finding, anchor_text: &str) -> String {
    let anchor: String = anchor_text.split_whitespace().collect::<Vec<_>>().join(" ");
    let rule = finding.rule.clone().unwrap_or_else(|| finding.title.to_lowercase());
    let mut h = Sha256::new();
    h.update(finding.file.as_bytes());
    h.update([0]);
    h.update(anchor.as_bytes());
    h.update([0]);
    h.update(rule.as_bytes());
    hex::encode(&h.finalize()[..8])
}

/// The hidden marker a fingerprint is carried in.
pub fn fingerprint_marker(fp: &str) -> String {
    format!("<!-- quorum:fp:{fp} -->")
}

/// The hidden marker naming the rule behind a comment, so review memory
/// can tell which kind of finding the team answered (after the fingerprint
/// marker, on the same line: older comments without it still parse).
pub fn rule_marker(rule: &str) -> String {
    format!("<!-- quorum:rule:{rule} -->")
}

/// The rule a comment's marker names, if it has one.
pub fn parse_rule_marker(text: &str) -> Option<String> {
    let start = text.find("<!-- quorum:rule:")? + "<!-- quorum:rule:".len();
    let end = text[start..].find(" -->")?;
    let rule = &text[start..start + end];
    let valid = !rule.is_empty()
        && rule
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/'));
    valid.then(|| rule.to_string())
}

/// Removes every Quorum marker (and a line it leaves empty).
pub fn strip_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let mut l = line.to_string();
        while let Some(start) = l.find("<!-- quorum:") {
            match l[start..].find(" -->") {
                Some(end) => l.replace_range(start..start + end + 4, ""),
                None => break,
            }
        }
        if l.trim().is_empty() && !line.trim().is_empty() {
            continue;
        }
        out.push_str(&l);
    }
    out
}

/// Extracts every fingerprint marker from a comment body already on the PR.
pub fn parse_fingerprints(text: &str) -> Vec<String> {
    text.match_indices("<!-- quorum:fp:")
        .filter_map(|(i, m)| {
            let rest = &text[i + m.len()..];
            let end = rest.find(" -->")?;
            let fp = &rest[..end];
            fp.chars().all(|c| c.is_ascii_hexdigit()).then(|| fp.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{diff, finding};
    use super::*;
    use crate::finding::Severity;
    use crate::review::{InlinePolicy, build_review};

    #[test]
    fn fingerprint_is_stable_across_line_moves_and_whitespace() {
        let a = fingerprint(&finding("a.py", 2, Severity::Major), "b  =  1");
        let b = fingerprint(&finding("a.py", 9, Severity::Major), " b = 1 ");
        assert_eq!(a, b);
        let c = fingerprint(&finding("a.py", 2, Severity::Major), "b = 2");
        assert_ne!(a, c);
    }

    #[test]
    fn a_rule_finding_carries_its_rule_in_a_marker_that_strips_away() {
        let mut f = finding("a.py", 2, Severity::Major);
        f.rule = Some("sql-string-building".into());
        let inline = build_review(&[f], &[diff()], &[], &InlinePolicy::default()).inline;
        let body = &inline[0].body;
        assert_eq!(parse_rule_marker(body).as_deref(), Some("sql-string-building"));
        assert_eq!(parse_fingerprints(body), vec![inline[0].fingerprint.clone()]);
        let shown = strip_markers(body);
        assert!(!shown.contains("<!--"), "{shown}");
        assert_eq!(parse_rule_marker("<!-- quorum:rule:a b -->"), None);
        assert_eq!(parse_rule_marker("no marker"), None);
    }
}
