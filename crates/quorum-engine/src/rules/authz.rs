//! Removed authorization checks.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, added_lines, removed_with_anchor};
use crate::lang::Family;

/// A call or decorator that checks permissions was removed and not re-added
/// anywhere in the file.
pub struct AuthorizationRemoved;

static META: RuleMeta = RuleMeta {
    id: "authorization-check-removed",
    category: Category::Security,
    severity: Severity::Critical,
    confidence: 0.75,
    title: "Authorization check removed",
    rationale: "This change deletes a permission check and nothing in the changed code replaces it, so \
the code after it now runs for any caller. If the check moved elsewhere (a decorator, middleware), point \
to it; otherwise restore it.",
};

static AUTH_CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(@?\b[\w.]*(require|check|ensure|verify|assert|enforce|has)_?(role|roles|perm|permission|permissions|auth|authorization|access|admin|login|owner|scope)s?\w*|\b[\w.]*authori[sz]e\w*|@login_required|@permission_required|@requires_auth)\s*(\(|$)").unwrap()
});

impl Rule for AuthorizationRemoved {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        if !lang.is_code() || crate::lang::is_test_path(&file.path) {
            return vec![];
        }
        let added: Vec<&str> = added_lines(file).map(|(_, t)| t).collect();
        let mut hits = Vec::new();
        for h in &file.hunks {
            for (anchor, removed) in removed_with_anchor(h) {
                let t = removed.trim();
                if t.starts_with('#')
                    || t.starts_with("//")
                    || t.starts_with("def ")
                    || t.starts_with("import")
                    || t.starts_with("from ")
                {
                    continue;
                }
                let Some(m) = AUTH_CALL.captures(removed) else { continue };
                let name = m[1].trim_start_matches('@');
                let name = name.rsplit('.').next().unwrap_or(name);
                if added.iter().any(|a| a.contains(name)) {
                    continue;
                }
                hits.push(Hit::at(anchor, format!("removed `{t}`")));
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::hit_lines;

    fn lines(l: &[&str]) -> Vec<u32> {
        hit_lines(&AuthorizationRemoved, "h.py", l)
    }

    #[test]
    fn removed_checks() {
        assert_eq!(
            lines(&[
                " def delete(req, id):",
                "-    require_role(req.user, ADMIN)",
                "     db.delete(id)"
            ]),
            vec![2]
        );
        assert_eq!(
            lines(&["-@login_required", " def view(req):", "     return x"]),
            vec![1]
        );
        assert_eq!(
            lines(&[
                " def f(u):",
                "-    if not u.has_permission('x'):",
                "-        raise Denied",
                "     go()"
            ]),
            vec![2]
        );
        assert_eq!(
            lines(&[" def f(u):", "-    authorize(u, 'orders:write')", "     go()"]),
            vec![2]
        );
    }

    #[test]
    fn moved_or_unrelated() {
        assert!(
            lines(&[
                "-    require_role(req.user, ADMIN)",
                "+    require_role(request.user, ADMIN)"
            ])
            .is_empty()
        );
        assert!(lines(&["-    log.info('x')", "+    log.debug('x')"]).is_empty());
        assert!(
            lines(&[
                "-def require_role(user, role):",
                "+def require_role(user, role, strict=True):"
            ])
            .is_empty()
        );
        assert!(lines(&["-    # require_role(u, x) is done by middleware", " go()"]).is_empty());
    }
}
