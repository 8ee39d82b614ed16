// Deprecated storage placement params (`on_disk`, `always_ram`, `on_disk_payload`) are still
// handled here for backward compatibility with the new `memory` parameter
#![allow(deprecated)]

use crate::common::ambient;
use crate::common::types::PointOffsetType;
use rstest::rstest;
use tempfile::Builder;

use super::super::FullTextIndex;
use crate::segment::data_types::index::{TextIndexParams, TextIndexType, TokenizerType};
use crate::segment::index::field_index::{PayloadFieldIndex, ValueIndexer};
use crate::segment::json_path::JsonPath;
use crate::segment::types::{FieldCondition, Match};

fn filter_request(text: &str) -> FieldCondition {
    FieldCondition::new_match(JsonPath::new("text"), Match::new_text(text))
}

#[test]
fn test_full_text_indexing() {
    use crate::common::ambient;

    use crate::segment::index::field_index::{PayloadFieldIndex, PayloadFieldIndexRead, ValueIndexer};

    let payloads: Vec<_> = vec![
        serde_json::json!(
            "The celebration had a long way to go and even in the silent depths of Multivac's underground chambers, it hung in the air."
        ),
        serde_json::json!("If nothing else, there was the mere fact of isolation and silence."),
        serde_json::json!([
            "For the first time in a decade, technicians were not scurrying about the vitals of the giant computer, ",
            "the soft lights did not wink out their erratic patterns, the flow of information in and out had halted."
        ]),
        serde_json::json!(
            "It would not be halted long, of course, for the needs of peace would be pressing."
        ),
        serde_json::json!(
            "Yet now, for a day, perhaps for a week, even Multivac might celebrate the great time, and rest."
        ),
    ];

    let temp_dir = Builder::new().prefix("test_dir").tempdir().unwrap();
    let config = TextIndexParams {
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
    };

    {
        let mut index =
            gridstore_index(temp_dir.path().join("test_db"), config.clone(), true, true)
                .unwrap()
                .unwrap();

        let _scope = ambient::test_guard();

        for (idx, payload) in payloads.iter().enumerate() {
            index.add_point(idx as PointOffsetType, &[payload]).unwrap();
        }

        assert_eq!(index.count_indexed_points().unwrap(), payloads.len());

        let _scope = ambient::test_guard();

        let filter_condition = filter_request("multivac");
        let search_res: Vec<_> = index.filter(&filter_condition).unwrap().unwrap().collect();
        assert_eq!(search_res, vec![0, 4]);

        let filter_condition = filter_request("giant computer");
        let search_res: Vec<_> = index.filter(&filter_condition).unwrap().unwrap().collect();
        assert_eq!(search_res, vec![2]);

        let filter_condition = filter_request("the great time");
        let search_res: Vec<_> = index.filter(&filter_condition).unwrap().unwrap().collect();
        assert_eq!(search_res, vec![4]);

        index.remove_point(2).unwrap();
        index.remove_point(3).unwrap();

        let filter_condition = filter_request("giant computer");
        assert!(
            index
                .filter(&filter_condition)
                .unwrap()
                .unwrap()
                .next()
                .is_none()
        );

        assert_eq!(index.count_indexed_points().unwrap(), payloads.len() - 2);

        let payload = serde_json::json!([
            "The last question was asked for the first time, half in jest, on May 21, 2061,",
            "at a time when humanity first stepped into the light."
        ]);
        index.add_point(3, &[&payload]).unwrap();

        let payload = serde_json::json!([
            "The question came about as a result of a five dollar bet over highballs, and it happened this way: "
        ]);
        index.add_point(4, &[&payload]).unwrap();

        assert_eq!(index.count_indexed_points().unwrap(), payloads.len() - 1);

        index.flusher()().unwrap();
    }

    {
        let mut index = gridstore_index(temp_dir.path().join("test_db"), config, true, true)
            .unwrap()
            .unwrap();

        assert_eq!(index.count_indexed_points().unwrap(), 4);

        let _scope = ambient::test_guard();

        let filter_condition = filter_request("multivac");
        let search_res: Vec<_> = index.filter(&filter_condition).unwrap().unwrap().collect();
        assert_eq!(search_res, vec![0]);

        let filter_condition = filter_request("the");
        let search_res: Vec<_> = index.filter(&filter_condition).unwrap().unwrap().collect();
        assert_eq!(search_res, vec![0, 1, 3, 4]);

        // check deletion
        index.remove_point(0).unwrap();
        let filter_condition = filter_request("multivac");
        let search_res: Vec<_> = index.filter(&filter_condition).unwrap().unwrap().collect();
        assert!(search_res.is_empty());
        assert_eq!(index.count_indexed_points().unwrap(), 3);

        index.remove_point(3).unwrap();
        let filter_condition = filter_request("the");
        let search_res: Vec<_> = index.filter(&filter_condition).unwrap().unwrap().collect();
        assert_eq!(search_res, vec![1, 4]);
        assert_eq!(index.count_indexed_points().unwrap(), 2);

        // check deletion of non-existing point
        index.remove_point(3).unwrap();
        assert_eq!(index.count_indexed_points().unwrap(), 2);
    }
}

/// Build a gridstore index with length recording forced on or off,
/// independently of the params, so a test can pick any shape, including ones
/// params no longer produce (see [`length_config`]).
fn gridstore_index(
    path: std::path::PathBuf,
    config: TextIndexParams,
    create_if_missing: bool,
    scoring: bool,
) -> crate::segment::common::operation_error::OperationResult<Option<FullTextIndex>> {
    Ok(
        super::MutableFullTextIndex::open_gridstore(path, config, create_if_missing, scoring)?
            .map(FullTextIndex::Mutable),
    )
}

/// Reach the in-memory lengths of a gridstore-backed index.
fn doc_lens(index: &FullTextIndex) -> (Vec<u32>, u64) {
    let FullTextIndex::Mutable(index) = index else {
        panic!("expected a mutable (gridstore) index");
    };
    let inverted = &index.inner.inverted_index;
    let lens = inverted
        .point_to_doc_len
        .clone()
        .expect("index was built with scoring enabled");
    (lens, inverted.total_tokens)
}

/// Params with `phrase_matching` as given and `scoring` unset: the tests pass
/// the recording flag to [`gridstore_index`] themselves.
///
/// `length_config(false)` with recording on is **positions off, lengths on**:
/// `scoring` without `phrase_matching`, which counts term frequencies without
/// positions. Its gridstore records keep repeated tokens, where an index
/// without scoring stores them deduplicated.
fn length_config(phrase_matching: bool) -> TextIndexParams {
    TextIndexParams {
        r#type: TextIndexType::Text,
        tokenizer: TokenizerType::Whitespace,
        min_token_len: None,
        max_token_len: None,
        lowercase: None,
        phrase_matching: Some(phrase_matching),
        on_disk: None,
        memory: None,
        stopwords: None,
        stemmer: None,
        ascii_folding: None,
        enable_hnsw: None,
        scoring: None,
        nested: None,
    }
}

/// `phrase_matching: false` is the case at risk: without positions, the
/// gridstore record is the only place repeated tokens survive, so a record
/// stored deduplicated would reopen with distinct-term lengths and every term
/// frequency at 1. See [`length_config`].
#[rstest]
fn doc_len_survives_gridstore_reload(#[values(false, true)] phrase_matching: bool) {
    let temp_dir = Builder::new().prefix("doc_len_reload").tempdir().unwrap();
    let path = temp_dir.path().join("index");
    let _scope = ambient::test_guard();

    // Point 1 repeats "the" three times: 7 tokens, 5 distinct.
    let payloads = [
        serde_json::json!("alpha beta gamma"),
        serde_json::json!("the cat sat on the mat the"),
    ];
    let expected = vec![3u32, 7];

    {
        let mut index = gridstore_index(path.clone(), length_config(phrase_matching), true, true)
            .unwrap()
            .unwrap();
        for (idx, payload) in payloads.iter().enumerate() {
            index.add_point(idx as PointOffsetType, &[payload]).unwrap();
        }
        let (lens, total) = doc_lens(&index);
        assert_eq!(lens, expected, "lengths wrong before reload");
        assert_eq!(total, 10);
        assert_eq!(the_frequency(&index), Some(3));
        index.flusher()().unwrap();
    }

    let reopened = gridstore_index(path, length_config(phrase_matching), false, true)
        .unwrap()
        .unwrap();
    let (lens, total) = doc_lens(&reopened);
    assert_eq!(lens, expected, "lengths lost across reload");
    assert_eq!(total, 10);
    assert_eq!(
        the_frequency(&reopened),
        Some(3),
        "term frequency lost across reload",
    );
}

/// The term frequency of "the" in point 1 of [`doc_len_survives_gridstore_reload`].
fn the_frequency(index: &FullTextIndex) -> Option<u32> {
    let FullTextIndex::Mutable(index) = index else {
        panic!("expected a mutable (gridstore) index");
    };
    index.inner.inverted_index.term_frequency("the", 1)
}

/// Array boundary sentinels hold a position so phrases cannot match across two
/// elements, but they are not content and must not count toward length.
#[test]
fn doc_len_excludes_array_boundary_sentinels() {
    let temp_dir = Builder::new().prefix("doc_len_sentinel").tempdir().unwrap();
    let _scope = ambient::test_guard();

    // Two elements, three tokens each, one sentinel between them with phrase
    // matching on. The length must be six either way.
    let payload = serde_json::json!(["alpha beta gamma", "delta epsilon zeta"]);

    for phrase_matching in [false, true] {
        let path = temp_dir.path().join(format!("index_{phrase_matching}"));
        let mut index = gridstore_index(path, length_config(phrase_matching), true, true)
            .unwrap()
            .unwrap();
        index.add_point(0, &[&payload]).unwrap();

        let (lens, total) = doc_lens(&index);
        assert_eq!(lens, vec![6], "phrase_matching = {phrase_matching}");
        assert_eq!(total, 6, "phrase_matching = {phrase_matching}");
    }
}

/// An array whose values all tokenize to nothing is not a document, like a
/// single value that tokenizes to nothing. Otherwise its boundary sentinels
/// would count it in BM25's `N` and `avgdl` with phrase matching on.
#[rstest]
fn array_of_empty_values_is_not_a_document(#[values(false, true)] phrase_matching: bool) {
    use crate::segment::index::field_index::full_text_index::inverted_index::InvertedIndex;

    let temp_dir = Builder::new().prefix("doc_len_empty").tempdir().unwrap();
    let _scope = ambient::test_guard();

    let mut index = gridstore_index(
        temp_dir.path().join("index"),
        length_config(phrase_matching),
        true,
        true,
    )
    .unwrap()
    .unwrap();
    let payloads = [
        serde_json::json!("alpha beta"),
        serde_json::json!(""),
        serde_json::json!(["", ""]),
        serde_json::json!(["", "gamma", ""]),
    ];
    for (idx, payload) in payloads.iter().enumerate() {
        index.add_point(idx as PointOffsetType, &[payload]).unwrap();
    }

    // Every point offset has a length slot, so the empty ones read as zero.
    assert_eq!(doc_lens(&index), (vec![2, 0, 0, 1], 3));
    let FullTextIndex::Mutable(inner) = &index else {
        panic!("expected a mutable (gridstore) index");
    };
    // Only points 0 and 3 hold tokens, so they are the only documents.
    assert_eq!(inner.inner.inverted_index.points_count(), 2);
    assert!(inner.get_doc(2).unwrap().is_empty());
}

/// `tokenize_doc` does not strip the sentinel's own character from user text,
/// so those tokens are indexed and must be counted. Filtering the count by
/// value rather than by inserted count reads this document as two tokens long.
/// Positions off, lengths on: a TF-only tier guard, see [`length_config`].
#[test]
fn doc_len_counts_sentinel_characters_in_user_text() {
    let temp_dir = Builder::new().prefix("doc_len_nul").tempdir().unwrap();
    let _scope = ambient::test_guard();

    let mut index = gridstore_index(
        temp_dir.path().join("index"),
        length_config(false),
        true,
        true,
    )
    .unwrap()
    .unwrap();
    index
        .add_point(0, &[&serde_json::json!("hello \u{0} \u{0} \u{0} world")])
        .unwrap();

    let (lens, total) = doc_lens(&index);
    assert_eq!(lens, vec![5], "every indexed token counts");
    assert_eq!(total, 5);
}

/// Removing a point takes its length back out of the running total, so `avgdl`
/// is not inflated by documents that no longer exist. Positions off, lengths
/// on: a TF-only tier guard, see [`length_config`].
#[test]
fn removing_a_point_discounts_its_length() {
    let temp_dir = Builder::new().prefix("doc_len_remove").tempdir().unwrap();
    let _scope = ambient::test_guard();

    let mut index = gridstore_index(
        temp_dir.path().join("index"),
        length_config(false),
        true,
        true,
    )
    .unwrap()
    .unwrap();
    index
        .add_point(0, &[&serde_json::json!("alpha beta gamma")])
        .unwrap();
    index
        .add_point(1, &[&serde_json::json!("delta epsilon")])
        .unwrap();
    assert_eq!(doc_lens(&index), (vec![3, 2], 5));

    index.remove_point(1).unwrap();
    assert_eq!(doc_lens(&index), (vec![3, 0], 3));

    // Removing twice must not double-discount.
    index.remove_point(1).unwrap();
    assert_eq!(doc_lens(&index), (vec![3, 0], 3));
}

/// Overwriting a point replaces its length instead of adding to it. Built
/// positions off, lengths on (`new(false, true)`): a TF-only tier guard, see
/// [`length_config`].
#[test]
fn overwriting_a_point_replaces_its_length() {
    use crate::segment::index::field_index::full_text_index::inverted_index::mutable_inverted_index::MutableInvertedIndex;

    // Through the inverted index rather than `add_point`, which removes the
    // point first and so always hands `set_doc_len` a zeroed slot. Live reload
    // is the caller that overwrites in place.
    let mut index = MutableInvertedIndex::new(false, true);
    index
        .index_str_tokens(0, ["alpha", "beta", "gamma"], Some(3))
        .unwrap();
    assert_eq!(index.point_to_doc_len, Some(vec![3]));
    assert_eq!(index.total_tokens, 3);

    index
        .index_str_tokens(0, ["delta", "epsilon"], Some(2))
        .unwrap();
    assert_eq!(
        (index.point_to_doc_len.clone(), index.total_tokens),
        (Some(vec![2]), 2),
        "the previous length must be replaced, not added to",
    );

    // A record with no length zeroes the slot rather than leaving a stale one.
    index.index_str_tokens(0, ["zeta"], None).unwrap();
    assert_eq!(
        (index.point_to_doc_len, index.total_tokens),
        (Some(vec![0]), 0)
    );
}

/// With scoring off nothing is measured and nothing is stored: no in-memory
/// vector, and no `doc_len` key in the record.
#[rstest]
fn scoring_off_records_no_lengths(#[values(false, true)] phrase_matching: bool) {
    let temp_dir = Builder::new().prefix("doc_len_off").tempdir().unwrap();
    let path = temp_dir.path().join("index");
    let _scope = ambient::test_guard();

    {
        let mut index = gridstore_index(path.clone(), length_config(phrase_matching), true, false)
            .unwrap()
            .unwrap();
        index
            .add_point(0, &[&serde_json::json!("the cat sat on the mat the")])
            .unwrap();

        let FullTextIndex::Mutable(inner) = &index else {
            panic!("expected a mutable (gridstore) index");
        };
        assert!(
            inner.inner.inverted_index.point_to_doc_len.is_none(),
            "no length vector when scoring is off",
        );
        assert_eq!(inner.inner.inverted_index.total_tokens, 0);

        // The tokens still round-trip; only the length is absent.
        assert!(inner.get_doc(0).is_some_and(|tokens| !tokens.is_empty()));
        index.flusher()().unwrap();
    }

    // Scoped, so the store is never open twice: both handles are writable and
    // nothing locks the directory.
    {
        let reopened = gridstore_index(path.clone(), length_config(phrase_matching), false, false)
            .unwrap()
            .unwrap();
        let FullTextIndex::Mutable(inner) = &reopened else {
            panic!("expected a mutable (gridstore) index");
        };
        assert!(inner.inner.inverted_index.point_to_doc_len.is_none());
        assert_eq!(inner.get_doc_len(0), None, "no length reached the record");
    }

    // An index that does record lengths cannot use that record, and must not
    // read it as a zero-length document: that would be indistinguishable from
    // a stopword-only one. It reports itself absent so the caller rebuilds
    // from payload.
    let as_scoring = gridstore_index(path, length_config(phrase_matching), false, true).unwrap();
    assert!(
        as_scoring.is_none(),
        "records without lengths must not open under scoring",
    );
}

/// With phrase matching on, the code tokenizer's joined identifiers are each preceded by a
/// sentinel. The length counts the joined identifiers, but not those sentinels, so it is the same
/// with phrase matching on and off.
#[rstest]
fn doc_len_of_code_tokens(#[values(false, true)] phrase_matching: bool) {
    let temp_dir = Builder::new().prefix("doc_len_code").tempdir().unwrap();
    let _scope = ambient::test_guard();

    let config = TextIndexParams {
        tokenizer: TokenizerType::Code,
        ..length_config(phrase_matching)
    };
    let mut index = gridstore_index(temp_dir.path().join("index"), config, true, true)
        .unwrap()
        .unwrap();
    // get, user, name, hash, map, and the joined getusername, hashmap
    index
        .add_point(0, &[&serde_json::json!("getUserName HashMap")])
        .unwrap();

    assert_eq!(doc_lens(&index), (vec![7], 7));
}
