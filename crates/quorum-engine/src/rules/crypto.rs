//! Cryptography: weak password hashing, disabled TLS verification, secrets in
//! source.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, added_lines, new_side};
use crate::lang::{Family, strip_comment};

/// MD5/SHA-1 (or a bare fast hash) where passwords are handled.
pub struct WeakPasswordHash;

static WEAK_META: RuleMeta = RuleMeta {
    id: "weak-password-hash",
    category: Category::Security,
    severity: Severity::Critical,
    confidence: 0.9,
    title: "Weak hash used for passwords",
    rationale: "MD5 and SHA-1 are fast, unsalted-by-default digests: a leaked table of them is cracked \
by brute force in hours. Passwords need a slow, salted KDF (PBKDF2 with a high iteration count, bcrypt, \
scrypt or Argon2).",
};

static WEAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)(hashlib\.(md5|sha1)\s*\(|hashlib\.new\(\s*["'](md5|sha1)["']|createHash\(\s*["'](md5|sha1)["']|md5\.(New|Sum)\(|sha1\.(New|Sum)\(|MessageDigest\.getInstance\(\s*"(MD5|SHA-?1)")"#).unwrap()
});
static PASSWORDISH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(passw|pwd|\bpw\b|_pw\b|\bpw_|passphrase|credential|secret)").unwrap());

impl Rule for WeakPasswordHash {
    fn meta(&self) -> &'static RuleMeta {
        &WEAK_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        let mut hits = Vec::new();
        for h in &file.hunks {
            let side = new_side(h);
            for (i, (n, text, added)) in side.iter().enumerate() {
                let code = strip_comment(text, lang);
                if !added || !WEAK.is_match(code) || code.contains("usedforsecurity=False") {
                    continue;
                }
                // Only password context within a few lines makes it a password
                // hash. Without it, MD5/SHA-1 is usually a checksum, an ETag or
                // a cache key, or a protocol that mandates it (HTTP digest
                // auth): on real code those are nearly all of its uses.
                let lo = i.saturating_sub(6);
                let hi = (i + 4).min(side.len());
                if side[lo..hi].iter().any(|(_, t, _)| PASSWORDISH.is_match(t)) {
                    hits.push(Hit::at(*n, *text));
                }
            }
        }
        hits
    }
}

/// TLS certificate verification turned off.
pub struct TlsVerifyDisabled;

static TLS_META: RuleMeta = RuleMeta {
    id: "tls-verify-disabled",
    category: Category::Security,
    severity: Severity::Major,
    confidence: 0.9,
    title: "TLS certificate verification disabled",
    rationale: "Without certificate verification anyone on the network path can impersonate the server \
and read or change the traffic. Fix the trust store (or pin the CA) instead of turning verification off.",
};

static TLS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\bverify\s*=\s*False\b|_create_unverified_context|CERT_NONE|check_hostname\s*=\s*False|rejectUnauthorized\s*:\s*false|InsecureSkipVerify\s*:\s*true|NODE_TLS_REJECT_UNAUTHORIZED)").unwrap()
});

impl Rule for TlsVerifyDisabled {
    fn meta(&self) -> &'static RuleMeta {
        &TLS_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        // Tests talk to local mock servers with throwaway certificates, and
        // option-parsing tests spell the insecure settings out on purpose.
        if crate::lang::is_test_path(&file.path) {
            return vec![];
        }
        added_lines(file)
            .filter(|(_, t)| TLS.is_match(strip_comment(t, lang)))
            .map(|(n, t)| Hit::at(n, t))
            .collect()
    }
}

/// Credentials committed in source.
pub struct HardcodedSecret;

static SECRET_META: RuleMeta = RuleMeta {
    id: "hardcoded-secret",
    category: Category::Security,
    severity: Severity::Major,
    confidence: 0.8,
    title: "Secret committed in source",
    rationale: "A credential in the repository is readable by everyone with access to it, forever (git \
history keeps it). Load it from the environment or a secret store, and rotate this one.",
};

static SECRET_ASSIGN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b(password|passwd|secret|api_?key|access_?key|auth_?token|private_?key)\w*\s*[:=]\s*["']([^"'\s]{8,})["']"#).unwrap()
});
static SECRET_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(AKIA[0-9A-Z]{16}|-----BEGIN (RSA |EC |OPENSSH )?PRIVATE KEY-----|ghp_[A-Za-z0-9]{36}|xox[bp]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9]{32,})").unwrap()
});
static PLACEHOLDER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(example|changeme|placeholder|dummy|xxx|your[_-]|<|\$\{|test|fake)").unwrap());
/// A template slot, not a value: `%(secret)s`, `%s`, `{secret}`, `{{ secret }}`.
static TEMPLATE_SLOT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"%\(\w+\)[sdr]|%[sdr]|\{\{?\s*[\w.]*\s*\}\}?").unwrap());

impl Rule for HardcodedSecret {
    fn meta(&self) -> &'static RuleMeta {
        &SECRET_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        if crate::lang::is_test_path(&file.path) {
            return vec![];
        }
        added_lines(file)
            .filter(|(_, t)| {
                let t = strip_comment(t, lang);
                SECRET_TOKEN.is_match(t)
                    || SECRET_ASSIGN
                        .captures(t)
                        .is_some_and(|c| !PLACEHOLDER.is_match(&c[2]) && !TEMPLATE_SLOT.is_match(&c[2]))
            })
            .map(|(n, t)| Hit::at(n, t))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::diff;

    fn hits(rule: &dyn Rule, path: &str, lines: &[&str]) -> Vec<Hit> {
        rule.check(&diff(path, lines), Family::of(path))
    }

    #[test]
    fn tls_verification_off_is_flagged_in_code_not_in_tests() {
        let line = ["+\tcfg := &tls.Config{InsecureSkipVerify: true}"];
        assert_eq!(hits(&TlsVerifyDisabled, "mysql/dsn.go", &line).len(), 1);
        assert!(hits(&TlsVerifyDisabled, "mysql/dsn_test.go", &line).is_empty());
        assert!(
            hits(
                &TlsVerifyDisabled,
                "tests/test_client.py",
                &["+    requests.get(url, verify=False)"]
            )
            .is_empty()
        );
        assert_eq!(
            hits(
                &TlsVerifyDisabled,
                "client.py",
                &["+    requests.get(url, verify=False)"]
            )
            .len(),
            1
        );
    }

    #[test]
    fn weak_hash_with_and_without_password_context() {
        let h = hits(
            &WeakPasswordHash,
            "auth.py",
            &[
                " def hash_password(password, salt):",
                "+    return hashlib.md5(salt + password).hexdigest()",
            ],
        );
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].severity, None, "full severity in password context");
        let h = hits(
            &WeakPasswordHash,
            "etag.py",
            &[" def etag(body):", "+    return hashlib.md5(body).hexdigest()"],
        );
        assert!(h.is_empty(), "a checksum is not a password hash: {h:?}");
        let h = hits(
            &WeakPasswordHash,
            "users.py",
            &[
                " def store(user, pw):",
                "+    user.digest = hashlib.sha1(pw.encode()).hexdigest()",
            ],
        );
        assert_eq!(h.len(), 1, "`pw` is a password");
        assert!(
            hits(
                &WeakPasswordHash,
                "cache.py",
                &[
                    " def key(power):",
                    "+    return hashlib.md5(power.encode()).hexdigest()"
                ]
            )
            .is_empty(),
            "`power` is not"
        );
        assert!(
            hits(
                &WeakPasswordHash,
                "auth.py",
                &[
                    " def check(password):",
                    "+    key = hashlib.md5(password, usedforsecurity=False)",
                ]
            )
            .is_empty()
        );
        assert!(
            hits(
                &WeakPasswordHash,
                "auth.py",
                &["+    return hashlib.pbkdf2_hmac('sha256', pw, salt, 200_000)"]
            )
            .is_empty()
        );
        assert_eq!(
            hits(
                &WeakPasswordHash,
                "a.js",
                &["+const pwHash = crypto.createHash('md5').update(password)"]
            )
            .len(),
            1
        );
    }

    #[test]
    fn tls() {
        assert_eq!(
            hits(
                &TlsVerifyDisabled,
                "a.py",
                &["+r = requests.get(url, verify=False, timeout=3)"]
            )
            .len(),
            1
        );
        assert_eq!(
            hits(&TlsVerifyDisabled, "a.go", &["+tls.Config{InsecureSkipVerify: true}"]).len(),
            1
        );
        assert!(
            hits(
                &TlsVerifyDisabled,
                "a.py",
                &["+r = requests.get(url, verify=True, timeout=3)"]
            )
            .is_empty()
        );
    }

    #[test]
    fn secrets() {
        assert_eq!(
            hits(
                &HardcodedSecret,
                "settings.py",
                &["+API_KEY = \"9f8e7d6c5b4a39281706\""]
            )
            .len(),
            1
        );
        assert_eq!(
            hits(&HardcodedSecret, "settings.py", &["+aws = 'AKIAIOSFODNN7EXAMPLE'"]).len(),
            1
        );
        assert!(hits(&HardcodedSecret, "settings.py", &["+API_KEY = os.environ[\"API_KEY\"]"]).is_empty());
        assert!(hits(&HardcodedSecret, "settings.py", &["+password = \"changeme-please\""]).is_empty());
        // Template slots filled in at render time.
        assert!(hits(&HardcodedSecret, "page.py", &["+      SECRET = \"%(secret)s\";"]).is_empty());
        assert!(hits(&HardcodedSecret, "page.py", &["+  api_key: '{{api_key}}'"]).is_empty());
        assert!(
            hits(
                &HardcodedSecret,
                "tests/test_x.py",
                &["+API_KEY = \"9f8e7d6c5b4a39281706\""]
            )
            .is_empty()
        );
    }
}
