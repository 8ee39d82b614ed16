//! `quorum-lab`: how well and how fast Quorum works, measured. The seeded-bug
//! eval and its report and charts, the memory eval, mutation testing of the
//! graph checks, the judge's agreement with labels, and the benchmarks. They
//! start the same fleet the operator CLI does (`quorum_cli::fleet`) but live
//! in their own binary, so the operator's `quorum` links none of it.

pub mod bench;
pub mod bench_console;
pub mod bench_index;
pub mod bench_retrieval;
pub mod bench_search;
pub mod calibrate_similarity;
pub mod docstrings;
pub mod eval;
pub mod eval_chart;
pub mod eval_report;
pub mod judge_cmd;
pub mod memory_eval;
pub mod mutate;
pub mod prices;
pub mod sampling;
