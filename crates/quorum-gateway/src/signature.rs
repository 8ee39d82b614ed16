//! `X-Hub-Signature-256` verification (F-GW-1): HMAC-SHA256 of the raw body
//! with the webhook secret, hex, prefixed `sha256=`, compared in constant time.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Why a signature was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("missing X-Hub-Signature-256 header")]
    Missing,
    #[error("X-Hub-Signature-256 must be `sha256=<64 hex digits>`")]
    Malformed,
    #[error("signature does not match the payload")]
    Mismatch,
}

/// The header value GitHub would send for `body`.
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Checks `header` against `body`. The comparison is constant-time
/// (`Mac::verify_slice`).
pub fn verify(secret: &[u8], body: &[u8], header: Option<&str>) -> Result<(), SignatureError> {
    let header = header.ok_or(SignatureError::Missing)?;
    let hex_sig = header.trim().strip_prefix("sha256=").ok_or(SignatureError::Malformed)?;
    let expected = hex::decode(hex_sig).map_err(|_| SignatureError::Malformed)?;
    if expected.len() != 32 {
        return Err(SignatureError::Malformed);
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(body);
    mac.verify_slice(&expected).map_err(|_| SignatureError::Mismatch)
}

/// Why a plain webhook token (GitLab's `X-Gitlab-Token`) was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("missing X-Gitlab-Token header")]
    Missing,
    #[error("X-Gitlab-Token does not match the webhook's secret token")]
    Mismatch,
}

/// Compares a presented token with the expected one in constant time: both
/// are MACed and the MACs compared with `Mac::verify_slice`, so neither the
/// content nor the length of the secret leaks through timing.
pub fn verify_token(expected: &[u8], given: Option<&str>) -> Result<(), TokenError> {
    let given = given.ok_or(TokenError::Missing)?;
    let mac = |data: &[u8]| {
        let mut m = Hmac::<Sha256>::new_from_slice(b"quorum webhook token").expect("HMAC takes keys of any length");
        m.update(data);
        m
    };
    let want = mac(expected).finalize().into_bytes();
    mac(given.as_bytes())
        .verify_slice(&want)
        .map_err(|_| TokenError::Mismatch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitlab_tokens_must_match_exactly() {
        assert_eq!(verify_token(b"s3cret", Some("s3cret")), Ok(()));
        assert_eq!(verify_token(b"s3cret", None), Err(TokenError::Missing));
        for wrong in ["", "s3cre", "s3cret ", "S3CRET", "s3cret-and-more"] {
            assert_eq!(
                verify_token(b"s3cret", Some(wrong)),
                Err(TokenError::Mismatch),
                "{wrong:?}"
            );
        }
    }

    /// GitHub's documented test vector
    /// (`tests/fixtures/github/validating-webhook-deliveries.EXCERPT.md`, copied from GitHub's docs).
    const SECRET: &str = "It's a Secret to Everybody";
    const PAYLOAD: &str = "Hello, World!";
    const EXPECTED: &str = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

    #[test]
    fn githubs_test_vector_passes() {
        assert_eq!(sign(SECRET.as_bytes(), PAYLOAD.as_bytes()), EXPECTED);
        assert_eq!(verify(SECRET.as_bytes(), PAYLOAD.as_bytes(), Some(EXPECTED)), Ok(()));
    }

    #[test]
    fn the_vector_is_the_one_in_githubs_docs() {
        let doc = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/github/validating-webhook-deliveries.EXCERPT.md"
        ))
        .expect("the copied fixture");
        assert!(doc.contains(SECRET) && doc.contains(PAYLOAD) && doc.contains(EXPECTED));
    }

    #[test]
    fn refuses_missing_malformed_and_wrong_signatures() {
        let s = SECRET.as_bytes();
        let b = PAYLOAD.as_bytes();
        assert_eq!(verify(s, b, None), Err(SignatureError::Missing));
        assert_eq!(verify(s, b, Some("sha1=abc")), Err(SignatureError::Malformed));
        assert_eq!(verify(s, b, Some("sha256=zz")), Err(SignatureError::Malformed));
        assert_eq!(verify(s, b, Some("sha256=abcd")), Err(SignatureError::Malformed));
        assert_eq!(
            verify(b"other secret", b, Some(EXPECTED)),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(s, b"Hello, World?", Some(EXPECTED)),
            Err(SignatureError::Mismatch)
        );
    }
}
