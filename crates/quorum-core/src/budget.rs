//! The size budget of one review request. A PR can carry megabytes of diff
//! (lock files, vendored or generated code) while the request travels as one
//! Kafka message (1 MB by default). Rather than fail the whole review, the
//! patches that do not fit are left out, each marked with why, and the
//! review lists them as not reviewed.

use crate::FileChange;

/// How much patch text one request may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchBudget {
    /// All patches together, in bytes.
    pub total_bytes: usize,
    /// One file's patch, in bytes: larger is almost always generated.
    pub per_file_bytes: usize,
    /// The whole encoded request: a change over this even without its
    /// patches (tens of thousands of files) cannot be reviewed.
    pub request_bytes: usize,
}

impl Default for PatchBudget {
    /// Kafka's default `message.max.bytes` is 1,048,588, and the request
    /// travels again inside the aggregated and completed messages with up
    /// to four agents' findings (at most 50 each): 600 KB for the request
    /// leaves room for them.
    fn default() -> Self {
        PatchBudget {
            total_bytes: 384 * 1024,
            per_file_bytes: 128 * 1024,
            request_bytes: 600_000,
        }
    }
}

/// Drops the patches that do not fit `budget`, marking each file's
/// `omitted`; returns how many were dropped. Files over the per-file limit
/// go first; of the rest, the smallest are kept, so as many files as
/// possible are reviewed. File order is unchanged.
pub fn fit_patches(files: &mut [FileChange], budget: PatchBudget) -> usize {
    let size = |f: &FileChange| f.patch.as_ref().map_or(0, String::len);
    let mut order: Vec<usize> = (0..files.len()).filter(|&i| size(&files[i]) > 0).collect();
    order.sort_by_key(|&i| (size(&files[i]), i));
    let mut used = 0usize;
    let mut dropped = 0;
    for i in order {
        let n = size(&files[i]);
        let reason = if n > budget.per_file_bytes {
            Some(format!(
                "patch of {} KiB is over the per-file limit of {} KiB",
                n.div_ceil(1024),
                budget.per_file_bytes / 1024
            ))
        } else if used + n > budget.total_bytes {
            Some(format!(
                "patch of {} KiB did not fit the review's {} KiB budget",
                n.div_ceil(1024),
                budget.total_bytes / 1024
            ))
        } else {
            used += n;
            None
        };
        if let Some(reason) = reason {
            files[i].patch = None;
            files[i].omitted = Some(reason);
            dropped += 1;
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileStatus;

    fn file(path: &str, bytes: usize) -> FileChange {
        FileChange {
            path: path.into(),
            old_path: None,
            status: FileStatus::Modified,
            patch: Some("x".repeat(bytes)),
            omitted: None,
        }
    }

    #[test]
    fn keeps_the_smallest_patches_that_fit_and_says_why_the_rest_are_out() {
        let mut files = vec![
            file("big.lock", 500),
            file("a.py", 40),
            file("b.py", 30),
            file("c.py", 50),
            file("vendor.js", 2000),
        ];
        let budget = PatchBudget {
            total_bytes: 100,
            per_file_bytes: 1000,
            request_bytes: 1 << 20,
        };
        assert_eq!(fit_patches(&mut files, budget), 3);
        let kept: Vec<&str> = files
            .iter()
            .filter(|f| f.patch.is_some())
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(kept, ["a.py", "b.py"], "30 + 40 fit in 100; 50 more would not");
        assert!(files[0].omitted.as_deref().unwrap().contains("did not fit"));
        assert!(files[3].omitted.as_deref().unwrap().contains("did not fit"));
        assert!(files[4].omitted.as_deref().unwrap().contains("per-file limit"));
        assert_eq!(files[4].path, "vendor.js", "order unchanged");
    }

    #[test]
    fn a_change_within_budget_is_untouched() {
        let mut files = vec![file("a.py", 10), file("b.py", 10)];
        let before = files.clone();
        assert_eq!(fit_patches(&mut files, PatchBudget::default()), 0);
        assert_eq!(files, before);
    }
}
