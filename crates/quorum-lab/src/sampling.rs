//! Seeded choices that stay put: a key's place depends on the key and the
//! seed only, so adding or removing other items (a graph change that adds
//! or drops a mutation site, a new docstring) does not reshuffle the rest.

/// FNV-1a of `key`: stable across runs, platforms and Rust versions.
pub fn stable_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf29ce484222325_u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// The `n` items whose `(seed, key)` hash lowest: a uniform sample that
/// keeps every surviving item when others come and go.
pub fn stable_sample<T>(mut items: Vec<T>, n: usize, seed: u64, key: impl Fn(&T) -> &str) -> Vec<T> {
    items.sort_by_cached_key(|t| stable_hash(&format!("{seed}:{}", key(t))));
    items.truncate(n);
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_keeps_its_members_when_others_are_added_or_removed() {
        let all: Vec<String> = (0..200).map(|i| format!("pkg.mod.f{i}")).collect();
        let before = stable_sample(all.clone(), 40, 7, |s| s.as_str());
        let mut fewer = all.clone();
        fewer.retain(|s| s != "pkg.mod.f3" && s != "pkg.mod.f150");
        fewer.push("pkg.mod.new".into());
        let after = stable_sample(fewer, 40, 7, |s| s.as_str());
        let kept = before.iter().filter(|s| after.contains(s)).count();
        let dropped = before
            .iter()
            .filter(|s| *s == "pkg.mod.f3" || *s == "pkg.mod.f150")
            .count();
        assert!(kept + dropped + 1 >= 40, "kept {kept} of 40");
        assert_ne!(before, stable_sample(all, 40, 8, |s| s.as_str()), "the seed matters");
    }
}
