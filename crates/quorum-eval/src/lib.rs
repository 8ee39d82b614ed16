//! Eval cases (F-EVAL-1): loading the case format exactly as
//! `eval/CASE-FORMAT.md` defines it, applying a case's edits to a
//! fresh copy of a fixture, and building the base/head git repository a
//! review runs on. Scoring and the ablation harness build on this.

pub mod case;
pub mod explained;
pub mod repo;
pub mod score;

pub use case::{Case, CaseError, Edit, Expected, load_cases};
pub use repo::{CaseRepo, build_case_repo};
