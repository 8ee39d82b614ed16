//! The code graph (F-IDX-1..3): what a change can break, known before any
//! agent looks.
//!
//! - [`extract`]: tree-sitter facts per file (symbols, calls, imports, bases,
//!   tests), cached by content hash.
//! - `resolve` (private): cross-file resolution into edges; Python
//!   there, the other languages in `resolve::other_langs` (imports,
//!   exports, modules, qualifiers).
//! - [`build`](mod@build): full and incremental builds, and the PR-head overlay.
//! - [`blob`]: the compressed, versioned stored form.
//! - [`impact`](mod@impact): the impact report and the signature (arity) check.
//! - [`tools`]: the `get_callers` / `find_tests` / `read_snippet` back-ends.
//!
//! Pure: no IO. Sources come in as strings; storage is the caller's.

pub mod arg_swap;
pub mod blob;
pub mod build;
pub mod extract;
pub mod impact;
mod index;
pub mod lang;
pub mod model;
mod par;
pub mod query;
mod render;
mod resolve;
pub mod signature;
pub mod tools;

pub use build::{BuildStats, build, build_parallel, build_with_progress, default_threads, overlay};
pub use extract::SymbolKind;
pub use impact::{ImpactOptions, ImpactReport, impact};
pub use lang::Lang;
pub use model::{Edge, EdgeKind, Graph, SymbolInfo, Target};
pub use resolve::RESOLVED;
