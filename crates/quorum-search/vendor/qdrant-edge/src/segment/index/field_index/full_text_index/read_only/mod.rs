// Deprecated storage placement params (`on_disk`, `always_ram`, `on_disk_payload`) are still
// handled here for backward compatibility with the new `memory` parameter
#![allow(deprecated)]

use crate::common::universal_io::UniversalRead;

use super::mutable_text_index::read_only::ReadOnlyAppendableFullTextIndex;
use super::on_disk_text_index::OnDiskFullTextIndex;
use crate::segment::index::field_index::full_text_index::immutable_text_index::ImmutableFullTextIndex;

mod lifecycle;
mod live_reload;
mod read_ops;

/// Read-only counterpart of [`FullTextIndex`][1], parameterised by a
/// [`UniversalRead`] storage.
///
/// Dispatches the [`FullTextIndexRead`][2] / [`PayloadFieldIndexRead`][3] read
/// surface to one of two backing formats:
/// - [`Appendable`][Self::Appendable] — the in-RAM appendable index loaded from
///   the gridstore (write) format;
/// - [`Immutable`][Self::Immutable] — reads directly from the immutable mmap
///   format.
///
/// Mirrors [`ReadOnlyMapIndex`][4]; the [`PayloadFieldIndexRead`] body (filter /
/// cardinality / payload blocks / condition checker) is shared with the
/// writable variant through the [`FullTextIndexRead`] trait and the free
/// functions in [`read_ops`][5]. Constructed via [`Self::open_appendable`] /
/// [`Self::open_immutable`] (see [`lifecycle`]); the upstream
/// [`ReadOnlyFieldIndex`][6] wiring follows in a separate PR.
///
/// [1]: super::FullTextIndex
/// [2]: super::full_text_index_read::FullTextIndexRead
/// [3]: crate::index::field_index::PayloadFieldIndexRead
/// [4]: crate::index::field_index::map_index::read_only::ReadOnlyMapIndex
/// [5]: super::read_ops
/// [6]: crate::index::field_index::field_index_base::read_only::ReadOnlyFieldIndex
pub enum ReadOnlyFullTextIndex<S: UniversalRead> {
    /// Loads into RAM from appendable storage format
    Appendable(Box<ReadOnlyAppendableFullTextIndex<S>>),
    /// Loads into RAM from immutable format
    Immutable(ImmutableFullTextIndex<S>),
    /// Directly reads from storage in immutable format
    OnDisk(OnDiskFullTextIndex<S>),
}

#[cfg(test)]
mod tests {
    use crate::common::ambient;
    use crate::common::bitvec::BitSlice;
    use crate::common::sorted_slice::SortedSlice;
    use crate::common::types::PointOffsetType;
    use crate::common::universal_io::{MmapFile, ReadOnly, UniversalRead, UniversalReadFs};
    use itertools::Itertools as _;
    use rstest::rstest;
    use tempfile::TempDir;

    use super::super::FullTextIndex;
    use super::ReadOnlyFullTextIndex;
    use crate::segment::data_types::index::{TextIndexParams, TextIndexType, TokenizerType};
    use crate::segment::index::field_index::{
        LiveReload, PayloadFieldIndex, PayloadFieldIndexRead, ValueIndexer,
    };
    use crate::segment::json_path::JsonPath;
    use crate::segment::types::{FieldCondition, Match, MatchPhrase, Memory};

    fn test_config() -> TextIndexParams {
        TextIndexParams {
            memory: None,
            r#type: TextIndexType::Text,
            tokenizer: TokenizerType::Word,
            min_token_len: None,
            max_token_len: None,
            lowercase: None,
            phrase_matching: None,
            on_disk: None,
            stopwords: None,
            stemmer: None,
            ascii_folding: None,
            enable_hnsw: None,
            scoring: None,
            nested: None,
        }
    }

    /// A record without a length cannot serve a scoring index. The read-only
    /// side has no payload to rebuild from, so it reports the index absent
    /// rather than answering a length of zero for every point.
    #[test]
    fn appendable_without_lengths_is_absent_under_scoring() {
        use super::super::mutable_text_index::read_only::ReadOnlyAppendableFullTextIndex;

        let dir = TempDir::with_prefix("ro_fulltext_no_lengths").unwrap();
        let config = test_config();
        let _scope = ambient::test_guard();

        // `test_config` sets no `scoring`, so nothing records a length.
        {
            let mut index =
                FullTextIndex::new_gridstore(dir.path().to_path_buf(), config.clone(), true)
                    .unwrap()
                    .unwrap();
            index
                .add_point(0, &[&serde_json::json!("the quick brown fox")])
                .unwrap();
            index.flusher()().unwrap();
        }

        type RoFs = <ReadOnly<MmapFile> as UniversalRead>::Fs;
        let fs = RoFs::from_context(Default::default()).unwrap();

        let without_scoring = ReadOnlyAppendableFullTextIndex::<ReadOnly<MmapFile>>::open(
            &fs,
            dir.path().to_path_buf(),
            PointOffsetType::MAX,
            BitSlice::empty(),
            config.clone(),
            false,
        )
        .unwrap();
        assert!(
            without_scoring.is_some(),
            "the same records open without scoring"
        );
        drop(without_scoring);

        let with_scoring = ReadOnlyAppendableFullTextIndex::<ReadOnly<MmapFile>>::open(
            &fs,
            dir.path().to_path_buf(),
            PointOffsetType::MAX,
            BitSlice::empty(),
            config,
            true,
        )
        .unwrap();
        assert!(
            with_scoring.is_none(),
            "records without lengths must not open under scoring",
        );
    }

    /// The immutable read-only open under scoring reports an index without a
    /// length sidecar absent: the read-only side cannot rebuild, so the field is
    /// dropped until the writer has, rather than served without lengths.
    /// Without scoring the same files open, and with the sidecar both do.
    #[rstest]
    fn immutable_without_lengths_is_absent_under_scoring(
        #[values(Memory::Cold, Memory::Pinned)] memory: Memory,
    ) {
        use crate::common::bitvec::BitVec;

        use crate::segment::data_types::index::TextScoringParams;
        use crate::segment::index::field_index::FieldIndexBuilderTrait as _;

        let config = |scoring: bool| TextIndexParams {
            scoring: scoring.then(TextScoringParams::default),
            ..test_config()
        };
        let deleted = BitVec::new();
        let _scope = ambient::test_guard();
        let build = |dir: &TempDir, scoring: bool| {
            let mut builder = FullTextIndex::builder_mmap(
                dir.path().to_path_buf(),
                test_config(),
                Memory::Cold,
                &deleted,
                scoring,
            );
            builder.init().unwrap();
            builder
                .add_many(0, vec!["the quick brown fox".to_string()])
                .unwrap();
            drop(builder.finalize().unwrap());
        };

        type RoFs = <ReadOnly<MmapFile> as UniversalRead>::Fs;
        let fs = RoFs::from_context(Default::default()).unwrap();
        let open = |dir: &TempDir, scoring: bool| {
            ReadOnlyFullTextIndex::<ReadOnly<MmapFile>>::open_immutable(
                &fs,
                dir.path().to_path_buf(),
                config(scoring),
                memory,
                &deleted,
            )
            .unwrap()
        };

        let without = TempDir::with_prefix("ro_fulltext_imm_no_lengths").unwrap();
        build(&without, false);
        assert!(open(&without, false).is_some(), "opens without scoring");
        assert!(
            open(&without, true).is_none(),
            "no sidecar under scoring must read as absent",
        );

        let with = TempDir::with_prefix("ro_fulltext_imm_lengths").unwrap();
        build(&with, true);
        assert!(open(&with, true).is_some(), "the sidecar serves scoring");
    }

    /// Build an appendable (Gridstore) full-text index on disk, then open it
    /// via the parent enum's [`ReadOnlyFullTextIndex::open_appendable`] over
    /// the write-enforced `ReadOnly<MmapFile>` backend. Verifies the
    /// dispatcher wraps into [`ReadOnlyFullTextIndex::Appendable`] and that
    /// the trait forwarders return the same hit set as the documents inserted.
    #[test]
    fn parent_open_appendable_round_trip() {
        let dir = TempDir::with_prefix("ro_fulltext_parent_gridstore").unwrap();
        let config = test_config();
        let _scope = ambient::test_guard();

        let payloads = [
            serde_json::json!("the quick brown fox jumps"),
            serde_json::json!("over the lazy dog"),
            serde_json::json!("the brown bear sleeps"),
        ];

        {
            let mut index =
                FullTextIndex::new_gridstore(dir.path().to_path_buf(), config.clone(), true)
                    .unwrap()
                    .unwrap();
            for (idx, payload) in payloads.iter().enumerate() {
                index.add_point(idx as u32, &[payload]).unwrap();
            }
            index.flusher()().unwrap();
        }

        // `S = ReadOnly<MmapFile>` → `S::Fs = ReadOnlyFs<MmapFs>`, named via the
        // associated-type projection since the wrapper type isn't exported.
        // The read-only filesystem context is `Default`.
        type RoFs = <ReadOnly<MmapFile> as UniversalRead>::Fs;
        let fs = RoFs::from_context(Default::default()).unwrap();
        let index: ReadOnlyFullTextIndex<ReadOnly<MmapFile>> =
            ReadOnlyFullTextIndex::open_appendable(
                &fs,
                dir.path().to_path_buf(),
                PointOffsetType::MAX,
                BitSlice::empty(),
                config,
            )
            .unwrap()
            .unwrap();

        // Dispatcher wraps the leaf into the right variant.
        assert!(matches!(index, ReadOnlyFullTextIndex::Appendable(_)));

        // Trait dispatch on the parent enum forwards into the leaf:
        // every document was indexed (3 points), and `brown` matches the two
        // that contain it while `lazy` matches only the second.
        assert_eq!(index.count_indexed_points().unwrap(), payloads.len());

        let key = JsonPath::new("test");
        let brown = FieldCondition::new_match(key.clone(), Match::new_text("brown"));
        let lazy = FieldCondition::new_match(key, Match::new_text("lazy"));

        assert_eq!(
            index.filter(&brown).unwrap().unwrap().collect_vec(),
            vec![0, 2],
        );
        assert_eq!(index.filter(&lazy).unwrap().unwrap().collect_vec(), vec![1]);
    }

    /// The incremental `LiveReload` path must land on exactly the same state as
    /// a fresh `open_appendable` over the post-write gridstore.
    ///
    /// A writer keeps mutating after the read-only view is open: one point is
    /// deleted and two are appended. `live_reload` is handed only that delta and
    /// replays the stored documents itself, so it re-runs the same
    /// post-tokenization indexing the write path runs. Both token-set matching
    /// and phrase matching are checked, because the phrase leg is the one that
    /// depends on the ordered document being indexed as well as the token set.
    #[rstest]
    fn live_reload_matches_fresh_open(#[values(false, true)] phrase_matching: bool) {
        let dir = TempDir::with_prefix("ro_fulltext_live_reload").unwrap();
        let mut config = test_config();
        config.phrase_matching = Some(phrase_matching);
        let _scope = ambient::test_guard();

        let initial = [
            serde_json::json!("the quick brown fox jumps"),
            serde_json::json!("over the lazy dog"),
            serde_json::json!("the brown bear sleeps"),
        ];
        // Appended after the read-only view is taken. The last one repeats a
        // term so the document is not just a set of distinct tokens.
        let appended = [
            serde_json::json!("a lazy brown moth"),
            serde_json::json!("the fox and the fox again"),
        ];

        let mut writer =
            FullTextIndex::new_gridstore(dir.path().to_path_buf(), config.clone(), true)
                .unwrap()
                .unwrap();
        for (idx, payload) in initial.iter().enumerate() {
            writer.add_point(idx as u32, &[payload]).unwrap();
        }
        writer.flusher()().unwrap();

        type RoFs = <ReadOnly<MmapFile> as UniversalRead>::Fs;
        let fs = RoFs::from_context(Default::default()).unwrap();

        // Read-only view of points 0..=2, taken before the writer continues.
        let mut reloaded: ReadOnlyFullTextIndex<ReadOnly<MmapFile>> =
            ReadOnlyFullTextIndex::open_appendable(
                &fs,
                dir.path().to_path_buf(),
                PointOffsetType::MAX,
                BitSlice::empty(),
                config.clone(),
            )
            .unwrap()
            .unwrap();

        // Writer's delta: drop point 1, append points 3 and 4.
        writer.remove_point(1).unwrap();
        for (offset, payload) in appended.iter().enumerate() {
            writer.add_point((3 + offset) as u32, &[payload]).unwrap();
        }
        writer.flusher()().unwrap();

        let deleted: [PointOffsetType; 1] = [1];
        let added: [PointOffsetType; 2] = [3, 4];
        reloaded
            .live_reload(
                &fs,
                &SortedSlice::new(&deleted).unwrap(),
                &SortedSlice::new(&added).unwrap(),
            )
            .unwrap();

        let fresh: ReadOnlyFullTextIndex<ReadOnly<MmapFile>> =
            ReadOnlyFullTextIndex::open_appendable(
                &fs,
                dir.path().to_path_buf(),
                PointOffsetType::MAX,
                BitSlice::empty(),
                config,
            )
            .unwrap()
            .unwrap();

        assert_eq!(
            reloaded.count_indexed_points().unwrap(),
            fresh.count_indexed_points().unwrap(),
        );

        let key = JsonPath::new("test");
        let mut conditions = vec![
            // Spans deleted, surviving and appended points.
            FieldCondition::new_match(key.clone(), Match::new_text("brown")),
            // Only ever present on the deleted point.
            FieldCondition::new_match(key.clone(), Match::new_text("dog")),
            // Only on appended points.
            FieldCondition::new_match(key.clone(), Match::new_text("moth")),
            // Repeated within one appended document.
            FieldCondition::new_match(key.clone(), Match::new_text("fox")),
            // Multi-token, so it exercises the posting intersection.
            FieldCondition::new_match(key.clone(), Match::new_text("lazy brown")),
        ];
        if phrase_matching {
            // Needs the ordered document, not just the token set: "brown fox"
            // is adjacent in point 0 but not in point 3 ("lazy brown moth").
            conditions.push(FieldCondition::new_match(
                key.clone(),
                Match::Phrase(MatchPhrase::from("brown fox")),
            ));
            conditions.push(FieldCondition::new_match(
                key,
                Match::Phrase(MatchPhrase::from("lazy brown")),
            ));
        }

        for condition in &conditions {
            let from_reload = reloaded.filter(condition).unwrap().unwrap().collect_vec();
            let from_fresh = fresh.filter(condition).unwrap().unwrap().collect_vec();
            assert_eq!(from_reload, from_fresh, "diverged for {condition:?}");
            // The deleted point must not survive in either.
            assert!(
                !from_reload.contains(&1),
                "point 1 resurrected by {condition:?}"
            );
        }

        // Guard the fixture: the comparisons above hold vacuously if nothing
        // matches, so pin the results that must come from the reloaded delta.
        let key = JsonPath::new("test");
        let expect = |condition: &FieldCondition, want: Vec<PointOffsetType>| {
            let got = reloaded.filter(condition).unwrap().unwrap().collect_vec();
            assert_eq!(got, want, "unexpected hits for {condition:?}");
        };

        // Appended point only.
        expect(
            &FieldCondition::new_match(key.clone(), Match::new_text("moth")),
            vec![3],
        );
        // Survivor plus both appended points.
        expect(
            &FieldCondition::new_match(key.clone(), Match::new_text("fox")),
            vec![0, 4],
        );
        // The deleted point was the only holder of this term.
        expect(
            &FieldCondition::new_match(key.clone(), Match::new_text("dog")),
            vec![],
        );

        if phrase_matching {
            // Adjacency has to survive the reload, not just term membership:
            // point 3 has "lazy brown" adjacent, point 0 has "brown fox".
            expect(
                &FieldCondition::new_match(
                    key.clone(),
                    Match::Phrase(MatchPhrase::from("lazy brown")),
                ),
                vec![3],
            );
            expect(
                &FieldCondition::new_match(key, Match::Phrase(MatchPhrase::from("brown fox"))),
                vec![0],
            );
        }
    }
}
