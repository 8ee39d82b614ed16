//! The `quorum` operator CLI as a library, so tests drive the same code the
//! binary runs.

pub mod bench;
pub mod bench_console;
pub mod bench_index;
pub mod bench_retrieval;
pub mod bench_search;
pub mod demo;
pub mod docstrings;
pub mod drafts;
pub mod eval;
pub mod eval_chart;
pub mod eval_report;
pub mod fleet;
pub mod graph_cmd;
pub mod judge_cmd;
pub mod mcp_cmd;
pub mod memory_cmd;
pub mod memory_eval;
pub mod mutate;
pub mod prices;
pub mod progress;
pub mod review;
pub mod sampling;
pub mod search_cmd;
pub mod terminal;
pub mod webhook;
