//! Order-preserving parallel map on scoped threads: the graph build's one
//! way to use several cores. Work is handed out an index at a time (files
//! differ in size by orders of magnitude, so fixed chunks would leave a
//! thread idle), and results come back in input order, so whatever the
//! thread count the output is the same.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f(0..n)` on up to `threads` threads, results in index order.
/// `done(k)` is called on the calling thread as results arrive (k = how many
/// so far), so a progress callback need not be `Send`.
pub(crate) fn map_ordered<R, F>(n: usize, threads: usize, f: F, done: &mut dyn FnMut(usize)) -> Vec<R>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
{
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        return (0..n)
            .map(|i| {
                let r = f(i);
                done(i + 1);
                r
            })
            .collect();
    }
    let mut out: Vec<Option<R>> = Vec::with_capacity(n);
    out.resize_with(n, || None);
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (tx, next, f) = (tx.clone(), &next, &f);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n || tx.send((i, f(i))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (k, (i, r)) in rx.into_iter().enumerate() {
            out[i] = Some(r);
            done(k + 1);
        }
    });
    out.into_iter()
        .map(|r| r.expect("every index is mapped exactly once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_input_order_whatever_the_thread_count() {
        let expected: Vec<u64> = (0..500u64).map(|i| i * i).collect();
        for threads in [1, 2, 3, 8] {
            let mut calls = 0;
            let got = map_ordered(500, threads, |i| (i as u64) * (i as u64), &mut |_| calls += 1);
            assert_eq!(got, expected, "{threads} threads");
            assert_eq!(calls, 500);
        }
        assert!(map_ordered(0, 4, |i| i, &mut |_| {}).is_empty());
    }
}
