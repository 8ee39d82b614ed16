//! The review console (F-UI-3): one page, served by the gateway at
//! `/console`, over the operator API. Its assets are compiled into the
//! binary (no CDN, nothing fetched at run time) and served under a strict
//! Content-Security-Policy: scripts and styles from this origin only, no
//! inline code, no frames, requests to this origin only. The page holds no
//! data itself; it reads `/api/*` with the operator token the user types
//! (kept per tab), and sets every value as text.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const INDEX: &str = include_str!("console/index.html");
const APP_JS: &str = include_str!("console/app.js");
const APP_CSS: &str = include_str!("console/app.css");

/// The policy every console response carries.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

pub fn router() -> Router {
    Router::new()
        .route("/console", get(|| async { asset(INDEX, "text/html; charset=utf-8") }))
        .route(
            "/console/app.js",
            get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/console/app.css",
            get(|| async { asset(APP_CSS, "text/css; charset=utf-8") }),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_nothing_from_elsewhere_and_runs_no_inline_code() {
        for (name, text) in [("index.html", INDEX), ("app.js", APP_JS), ("app.css", APP_CSS)] {
            assert!(
                !text.contains("http://") && !text.contains("https://"),
                "{name} names another origin"
            );
        }
        let inline_handler = INDEX.match_indices(" on").any(|(i, _)| {
            let rest = &INDEX[i + 3..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
            !name.is_empty() && rest[name.len()..].starts_with('=')
        });
        assert!(
            !INDEX.contains("<script>") && !inline_handler,
            "inline script or handler in index.html"
        );
        // Values from the API are set as text, never parsed as HTML.
        assert!(!APP_JS.contains("innerHTML") && !APP_JS.contains("insertAdjacentHTML") && !APP_JS.contains("eval("));
        assert!(CSP.contains("default-src 'none'") && !CSP.contains("unsafe"));
    }
}
