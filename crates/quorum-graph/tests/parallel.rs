//! Parallel parsing changes nothing but the time: the graph of a tree is the
//! same, byte for byte, on one thread or several, and progress counts every
//! file once.

mod common;

use quorum_graph::{blob, build_parallel};

/// Every file of the storefront fixture and of this crate's own sources: two
/// languages, a few hundred files' worth of symbols, calls and imports.
fn corpus() -> Vec<(String, String)> {
    common::read_repo_dirs(&[
        "storefront-fixture",
        "crates/quorum-graph/src",
        "crates/quorum-graph/tests",
    ])
}

#[test]
fn the_graph_is_the_same_bytes_whatever_the_thread_count() {
    let sources = corpus();
    assert!(sources.len() > 50, "a corpus worth splitting: {}", sources.len());
    let (one, one_stats) = build_parallel(sources.clone(), None, 1, &mut |_, _| {});
    assert!(one.symbol_count() > 100);
    let reference = blob::encode(&one);
    for threads in [2, 3, 8] {
        let (g, stats) = build_parallel(sources.clone(), None, threads, &mut |_, _| {});
        assert_eq!(stats, one_stats, "{threads} threads");
        assert!(
            blob::encode(&g) == reference,
            "{threads} threads built a different graph"
        );
    }
}

#[test]
fn incremental_parallel_builds_reuse_unchanged_files_and_agree_with_one_thread() {
    let mut sources = corpus();
    let (base, _) = build_parallel(sources.clone(), None, 4, &mut |_, _| {});
    let edited = sources.iter().position(|(p, _)| p.ends_with(".py")).unwrap();
    sources[edited]
        .1
        .push_str("\n\ndef added_by_the_test():\n    return 1\n");
    let (a, sa) = build_parallel(sources.clone(), Some(&base), 4, &mut |_, _| {});
    let (b, sb) = build_parallel(sources, Some(&base), 1, &mut |_, _| {});
    assert_eq!(sa.parsed, 1, "{sa:?}");
    assert_eq!(sa, sb);
    assert!(blob::encode(&a) == blob::encode(&b));
}

#[test]
fn progress_counts_each_file_once_up_to_the_total() {
    let sources = corpus();
    let total = sources.len();
    let mut seen = vec![];
    build_parallel(sources, None, 4, &mut |done, of| {
        assert_eq!(of, total);
        seen.push(done);
    });
    assert_eq!(seen, (1..=total).collect::<Vec<_>>());
}
