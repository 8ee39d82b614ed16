// Deprecated storage placement params (`on_disk`, `always_ram`, `on_disk_payload`) are still
// handled here for backward compatibility with the new `memory` parameter
#![allow(deprecated)]

mod test_congruence;

use std::path::PathBuf;

use crate::common::ambient;
use crate::common::bitvec::BitVec;
use crate::common::types::PointOffsetType;
use tempfile::Builder;

use crate::segment::data_types::index::{TextIndexParams, TextIndexType, TokenizerType};
use crate::segment::index::field_index::full_text_index::FullTextIndex;
use crate::segment::index::field_index::full_text_index::full_text_index_read::FullTextIndexRead;
use crate::segment::index::field_index::{
    FieldIndex, FieldIndexBuilderTrait as _, PayloadFieldIndexRead, ValueIndexer,
};
use crate::segment::types::Memory;

fn movie_titles() -> Vec<String> {
    vec![
        "2430 A.D.".to_string(),
        "The Acquisitive Chuckle".to_string(),
        "Author! Author!".to_string(),
        "The Bicentennial Man".to_string(),
        "Big Game".to_string(),
        "The Billiard Ball".to_string(),
        "Birth of a Notion".to_string(),
        "Black Friar of the Flame".to_string(),
        "Blank!".to_string(),
        "Blind Alley".to_string(),
        "Breeds There a Man...?".to_string(),
        "Button, Button".to_string(),
        "Buy Jupiter".to_string(),
        "C-Chute".to_string(),
        "Cal".to_string(),
        "The Callistan Menace".to_string(),
        "Catch That Rabbit".to_string(),
        "Christmas on Ganymede".to_string(),
        "Darwinian Pool Room".to_string(),
        "Day of the Hunters".to_string(),
        "Death Sentence".to_string(),
        "Does a Bee Care?".to_string(),
        "Dreaming Is a Private Thing".to_string(),
        "The Dust of Death".to_string(),
        "The Dying Night".to_string(),
        "Each an Explorer".to_string(),
        "Escape!".to_string(),
        "Everest".to_string(),
        "Evidence".to_string(),
        "The Evitable Conflict".to_string(),
        "Exile to Hell".to_string(),
        "Eyes Do More Than See".to_string(),
        "The Feeling of Power".to_string(),
        "Feminine Intuition".to_string(),
        "First Law".to_string(),
        "Flies".to_string(),
        "For the Birds".to_string(),
        "Founding Father".to_string(),
        "The Fun They Had".to_string(),
        "Galley Slave".to_string(),
        "The Gentle Vultures".to_string(),
        "Getting Even".to_string(),
        "Gimmicks Three".to_string(),
        "Gold".to_string(),
        "Good Taste".to_string(),
        "The Greatest Asset".to_string(),
        "Green Patches".to_string(),
        "Half-Breed".to_string(),
        "Half-Breeds on Venus".to_string(),
        "Hallucination".to_string(),
        "The Hazing".to_string(),
        "Hell-Fire".to_string(),
        "Heredity".to_string(),
        "History".to_string(),
        "Homo Sol".to_string(),
        "Hostess".to_string(),
        "I Just Make Them Up, See!".to_string(),
        "I'm in Marsport Without Hilda".to_string(),
        "The Imaginary".to_string(),
        "The Immortal Bard".to_string(),
        "In a Good Cause—".to_string(),
        "Insert Knob A in Hole B".to_string(),
        "The Instability".to_string(),
        "It's Such a Beautiful Day".to_string(),
        "The Key".to_string(),
        "Kid Stuff".to_string(),
        "The Last Answer".to_string(),
        "The Last Question".to_string(),
        "The Last Trump".to_string(),
        "Left to Right".to_string(),
        "Legal Rites".to_string(),
        "Lenny".to_string(),
        "Lest We Remember".to_string(),
        "Let's Not".to_string(),
        "Liar!".to_string(),
        "Light Verse".to_string(),
        "Little Lost Robot".to_string(),
        "The Little Man on the Subway".to_string(),
        "Living Space".to_string(),
        "A Loint of Paw".to_string(),
        "The Magnificent Possession".to_string(),
        "Marching In".to_string(),
        "Marooned off Vesta".to_string(),
        "The Message".to_string(),
        "Mirror Image".to_string(),
        "Mother Earth".to_string(),
        "My Son, the Physicist".to_string(),
        "No Connection".to_string(),
        "No Refuge Could Save".to_string(),
        "Nobody Here But—".to_string(),
        "Not Final!".to_string(),
        "Obituary".to_string(),
        "Old-fashioned".to_string(),
        "Pâté de Foie Gras".to_string(),
        "The Pause".to_string(),
        "Ph as in Phony".to_string(),
        "The Portable Star".to_string(),
        "The Proper Study".to_string(),
        "Rain, Rain, Go Away".to_string(),
        "Reason".to_string(),
        "The Red Queen's Race".to_string(),
        "Rejection Slips".to_string(),
        "Ring Around the Sun".to_string(),
        "Risk".to_string(),
        "Robot AL-76 Goes Astray".to_string(),
        "Robot Dreams".to_string(),
        "Runaround".to_string(),
        "Sally".to_string(),
        "Satisfaction Guaranteed".to_string(),
        "The Secret Sense".to_string(),
        "Shah Guido G.".to_string(),
        "Silly Asses".to_string(),
        "The Singing Bell".to_string(),
        "Sixty Million Trillion Combinations".to_string(),
        "Spell My Name with an S".to_string(),
        "Star Light".to_string(),
        "A Statue for Father".to_string(),
        "Strikebreaker".to_string(),
        "Super-Neutron".to_string(),
        "Take a Match".to_string(),
        "The Talking Stone".to_string(),
        ". . . That Thou Art Mindful of Him".to_string(),
        "Thiotimoline".to_string(),
        "Time Pussy".to_string(),
        "Trends".to_string(),
        "Truth to Tell".to_string(),
        "The Ugly Little Boy".to_string(),
        "The Ultimate Crime".to_string(),
        "Unto the Fourth Generation".to_string(),
        "The Up-to-Date Sorcerer".to_string(),
        "Waterclap".to_string(),
        "The Watery Place".to_string(),
        "The Weapon".to_string(),
        "The Weapon Too Dreadful to Use".to_string(),
        "What If—".to_string(),
        "What Is This Thing Called Love?".to_string(),
        "What's in a Name?".to_string(),
        "The Winnowing".to_string(),
    ]
}

#[test]
fn test_prefix_search() {
    let temp_dir = Builder::new().prefix("test_dir").tempdir().unwrap();
    let config = TextIndexParams {
        memory: None,
        r#type: TextIndexType::Text,
        tokenizer: TokenizerType::Prefix,
        min_token_len: None,
        max_token_len: None,
        lowercase: None,
        phrase_matching: None,
        stopwords: None,
        on_disk: None,
        stemmer: None,
        ascii_folding: None,
        enable_hnsw: None,
        scoring: None,
        nested: None,
    };

    let mut index =
        FullTextIndex::new_gridstore(temp_dir.path().to_path_buf(), config.clone(), true)
            .unwrap()
            .unwrap();

    let _scope = ambient::test_guard();

    let texts = movie_titles();

    for (i, text) in texts.iter().enumerate() {
        index
            .add_many(i as PointOffsetType, vec![text.clone()])
            .unwrap();
    }

    let res: Vec<_> = index.query("ROBO").unwrap().collect();

    let query = index.parse_text_query("ROBO").unwrap().unwrap();

    for idx in res.iter().copied() {
        assert!(index.check_match(&query, idx).unwrap());
    }

    assert_eq!(res.len(), 3);

    let res: Vec<_> = index.query("q231").unwrap().collect();
    assert!(res.is_empty());

    assert!(index.parse_text_query("q231").unwrap().is_none());
}

#[test]
fn test_phrase_matching() {
    let _scope = ambient::test_guard();

    // Create a text index with phrase matching enabled
    let temp_dir = Builder::new().prefix("test_dir").tempdir().unwrap();
    let config = TextIndexParams {
        memory: None,
        r#type: TextIndexType::Text,
        tokenizer: TokenizerType::default(),
        min_token_len: None,
        max_token_len: None,
        lowercase: Some(true),
        on_disk: None,
        phrase_matching: Some(true), // Enable phrase matching
        stopwords: None,
        stemmer: None,
        ascii_folding: None,
        enable_hnsw: None,
        scoring: None,
        nested: None,
    };

    let mut mutable_index =
        FullTextIndex::builder_gridstore(temp_dir.path().to_path_buf(), config.clone(), false)
            .make_empty()
            .unwrap();

    let empty_deleted = BitVec::new();
    let mut mmap_builder = FullTextIndex::builder_mmap(
        temp_dir.path().to_path_buf(),
        config.clone(),
        Memory::Cold,
        &empty_deleted,
        true,
    );
    mmap_builder.init().unwrap();

    // Add some test documents with phrases
    let documents = vec![
        (0, "the quick brown fox jumps over the lazy dog".to_string()),
        (1, "brown fox quick the jumps over lazy dog".to_string()),
        (2, "quick brown fox runs fast".to_string()),
        (3, "the lazy dog sleeps peacefully".to_string()),
        (4, "the brown brown fox".to_string()),
    ];

    for (point_id, text) in documents {
        mutable_index
            .add_many(point_id, vec![text.clone()])
            .unwrap();
        mmap_builder.add_many(point_id, vec![text]).unwrap();
    }

    let mmap_index = mmap_builder.finalize().unwrap();

    let check_matching = |index: FullTextIndex| {
        // Test regular text matching (should match documents containing all tokens regardless of order)
        let text_query = index.parse_text_query("quick brown fox").unwrap().unwrap();
        assert!(index.check_match(&text_query, 0).unwrap());
        assert!(index.check_match(&text_query, 1).unwrap());
        assert!(index.check_match(&text_query, 2).unwrap());

        let text_results: Vec<_> = index.filter_query(text_query).unwrap().collect();

        // Should match documents 0, 1, and 2 (all contain "quick", "brown", "fox")
        assert_eq!(text_results.len(), 3);
        assert!(text_results.contains(&0));
        assert!(text_results.contains(&1));
        assert!(text_results.contains(&2));

        // Test phrase matching (should only match documents with exact phrase in order)
        let phrase_query = index
            .parse_phrase_query("quick brown fox")
            .unwrap()
            .unwrap();
        assert!(index.check_match(&phrase_query, 0).unwrap());
        assert!(index.check_match(&phrase_query, 2).unwrap());

        let phrase_results: Vec<_> = index.filter_query(phrase_query).unwrap().collect();

        // Should only match documents 0 and 2 (contain "quick brown fox" in that exact order)
        assert_eq!(phrase_results.len(), 2);
        assert!(phrase_results.contains(&0));
        assert!(phrase_results.contains(&2));
        assert!(!phrase_results.contains(&1)); // Document 1 has the words but not in the right order

        // Test phrase that doesn't exist
        let missing_query = index
            .parse_phrase_query("fox brown quick")
            .unwrap()
            .unwrap();
        let missing_results: Vec<_> = index.filter_query(missing_query).unwrap().collect();

        // Should match no documents (no document contains this exact phrase)
        assert_eq!(missing_results.len(), 0);

        // Test valid phrase up to a token that doesn't exist
        let query_with_unknown_token = index.parse_phrase_query("quick brown bird").unwrap();
        // the phrase query is not valid because it contains an unknown token
        assert!(query_with_unknown_token.is_none());

        // Test repeated words
        let phrase_query = index
            .parse_phrase_query("brown brown fox")
            .unwrap()
            .unwrap();
        assert!(index.check_match(&phrase_query, 4).unwrap());

        // Should only match document 4
        let filter_results: Vec<_> = index.filter_query(phrase_query).unwrap().collect();
        assert_eq!(filter_results.len(), 1);
        assert!(filter_results.contains(&4));
    };

    check_matching(mutable_index);
    check_matching(mmap_index);
}

#[test]
fn test_ascii_folding_in_full_text_index_word() {
    let _scope = ambient::test_guard();

    let temp_dir = Builder::new().prefix("test_dir").tempdir().unwrap();
    let config_enabled = TextIndexParams {
        memory: None,
        r#type: TextIndexType::Text,
        tokenizer: TokenizerType::Word,
        min_token_len: None,
        max_token_len: None,
        lowercase: None,
        on_disk: None,
        phrase_matching: None,
        stopwords: None,
        stemmer: None,
        ascii_folding: Some(true),
        enable_hnsw: None,
        scoring: None,
        nested: None,
    };
    let config_disabled = TextIndexParams {
        ascii_folding: Some(false),
        ..config_enabled.clone()
    };

    // Index with folding enabled
    let mut index_enabled =
        FullTextIndex::new_gridstore(temp_dir.path().to_path_buf(), config_enabled.clone(), true)
            .unwrap()
            .unwrap();

    // Index with folding disabled (separate storage path)
    let temp_dir2 = Builder::new().prefix("test_dir").tempdir().unwrap();
    let mut index_disabled = FullTextIndex::new_gridstore(
        temp_dir2.path().to_path_buf(),
        config_disabled.clone(),
        true,
    )
    .unwrap()
    .unwrap();

    // Documents containing accents
    let docs = vec![
        (0, "ação no coração".to_string()),
        (1, "café com leite".to_string()),
    ];

    for (id, text) in &docs {
        index_enabled
            .add_many(*id as PointOffsetType, vec![text.clone()])
            .unwrap();
        index_disabled
            .add_many(*id as PointOffsetType, vec![text.clone()])
            .unwrap();
    }

    // ASCII-only queries should match only when folding is enabled
    let query_enabled = index_enabled.parse_text_query("acao").unwrap().unwrap();
    assert!(index_enabled.check_match(&query_enabled, 0).unwrap());

    let results_enabled: Vec<_> = index_enabled.filter_query(query_enabled).unwrap().collect();
    assert!(results_enabled.contains(&0));

    let query_disabled_opt = index_disabled.parse_text_query("acao").unwrap();
    // Query might still parse, but should not match anything
    if let Some(query_disabled) = query_disabled_opt {
        let results_disabled: Vec<_> = index_disabled
            .filter_query(query_disabled)
            .unwrap()
            .collect();
        assert!(!results_disabled.contains(&0));
    }

    // Non-folded query must work in both
    let query_acento = index_enabled.parse_text_query("ação").unwrap().unwrap();
    assert!(index_enabled.check_match(&query_acento, 0).unwrap());
    let results_acento: Vec<_> = index_enabled.filter_query(query_acento).unwrap().collect();
    assert!(results_acento.contains(&0));

    let query_acento2 = index_disabled.parse_text_query("ação").unwrap().unwrap();
    let results_acento2: Vec<_> = index_disabled
        .filter_query(query_acento2)
        .unwrap()
        .collect();
    assert!(results_acento2.contains(&0));
}

/// Regression test for <https://github.com/qdrant/qdrant/issues/8936>
///
/// `MatchTextAny` inside a nested condition must use the full-text index
/// tokenizer for matching, not naive substring `contains`.  In the bug,
/// `special_check_condition` did not handle `Match::TextAny`, so the
/// nested-condition code path fell back to `ValueChecker::check_match`
/// which uses `String::contains`, making "good" match "goodness".
#[test]
fn test_special_check_condition_match_text_any() {
    use crate::segment::json_path::JsonPath;
    use crate::segment::types::{FieldCondition, Match, MatchTextAny};

    let _scope = ambient::test_guard();

    let temp_dir = Builder::new().prefix("test_dir").tempdir().unwrap();
    let config = TextIndexParams {
        memory: None,
        r#type: TextIndexType::Text,
        tokenizer: TokenizerType::Word,
        min_token_len: None,
        max_token_len: None,
        lowercase: Some(true),
        on_disk: None,
        phrase_matching: None,
        stopwords: None,
        stemmer: None,
        ascii_folding: None,
        enable_hnsw: None,
        scoring: None,
        nested: None,
    };

    let mut index = FullTextIndex::new_gridstore(temp_dir.path().to_path_buf(), config, true)
        .unwrap()
        .unwrap();

    // Point 0: "goodness only" — should NOT match text_any("good cheap")
    // Point 1: "cheap hardware" — should match text_any("good cheap")
    // Point 2: "neutral text" — should NOT match
    index
        .add_many(0, vec!["goodness only".to_string()])
        .unwrap();
    index
        .add_many(1, vec!["cheap hardware".to_string()])
        .unwrap();
    index.add_many(2, vec!["neutral text".to_string()]).unwrap();

    let field_index = FieldIndex::FullTextIndex(index);

    let condition = FieldCondition {
        key: JsonPath::new("title"),
        r#match: Some(Match::TextAny(MatchTextAny {
            text_any: "good cheap".to_string(),
        })),
        range: None,
        geo_bounding_box: None,
        geo_radius: None,
        geo_polygon: None,
        values_count: None,
        is_empty: None,
        is_null: None,
    };

    // "goodness only" — "good" is a substring but NOT a token match
    let goodness_value = serde_json::Value::String("goodness only".to_string());
    let result = field_index
        .special_check_condition(&condition, &goodness_value)
        .unwrap();
    assert_eq!(
        result,
        Some(false),
        "MatchTextAny must not match 'goodness' for query token 'good'"
    );

    // "cheap hardware" — "cheap" is an exact token match
    let cheap_value = serde_json::Value::String("cheap hardware".to_string());
    let result = field_index
        .special_check_condition(&condition, &cheap_value)
        .unwrap();
    assert_eq!(
        result,
        Some(true),
        "MatchTextAny must match 'cheap hardware' for query token 'cheap'"
    );

    // "neutral text" — no tokens match
    let neutral_value = serde_json::Value::String("neutral text".to_string());
    let result = field_index
        .special_check_condition(&condition, &neutral_value)
        .unwrap();
    assert_eq!(
        result,
        Some(false),
        "MatchTextAny must not match 'neutral text' for query 'good cheap'"
    );
}

/// An mmap index over two documents: point 0 has 3 tokens, point 1 has 7 with
/// repeats, recording lengths as `scoring` says.
fn two_document_mmap_index(path: PathBuf, scoring: bool) -> FullTextIndex {
    let config = TextIndexParams {
        r#type: TextIndexType::Text,
        tokenizer: TokenizerType::Whitespace,
        min_token_len: None,
        max_token_len: None,
        lowercase: Some(true),
        phrase_matching: Some(false),
        on_disk: None,
        memory: None,
        stopwords: None,
        stemmer: None,
        ascii_folding: None,
        enable_hnsw: None,
        scoring: None,
        nested: None,
    };

    let empty_deleted = BitVec::new();
    let mut builder =
        FullTextIndex::builder_mmap(path, config, Memory::Cold, &empty_deleted, scoring);
    builder.init().unwrap();
    // Point 1 repeats "the" three times: 7 tokens, 5 distinct.
    builder
        .add_many(0, vec!["alpha beta gamma".to_string()])
        .unwrap();
    builder
        .add_many(1, vec!["the cat sat on the mat the".to_string()])
        .unwrap();

    builder.finalize().unwrap()
}

/// The mmap build path records lengths too, end to end: `add_many` measures,
/// `create` writes the sidecar, and the index that comes back out of `finalize`
/// carries them.
#[test]
fn mmap_builder_records_doc_len() {
    use crate::segment::index::field_index::full_text_index::inverted_index::immutable_inverted_index::ImmutableInvertedIndex;

    let temp_dir = Builder::new().prefix("mmap_doc_len").tempdir().unwrap();
    let index = two_document_mmap_index(temp_dir.path().to_path_buf(), true);
    let FullTextIndex::OnDisk(on_disk) = &index else {
        panic!("expected an on-disk index");
    };
    assert!(on_disk.records_doc_len(), "the sidecar was written");

    let immutable = ImmutableInvertedIndex::try_from(&on_disk.inverted_index).unwrap();
    assert_eq!(
        immutable.point_to_doc_len(),
        Some(vec![3, 7]),
        "lengths must survive the mmap build path, counting repeats",
    );
}

/// `new_mmap` under scoring reports an index without a length sidecar absent,
/// so the caller rebuilds it from payload, and opens one with the sidecar.
/// Without scoring, both open.
#[test]
fn new_mmap_without_lengths_is_absent_under_scoring() {
    use crate::segment::data_types::index::TextScoringParams;
    use crate::segment::types::Memory;

    let config = |scoring: bool| TextIndexParams {
        tokenizer: TokenizerType::Whitespace,
        lowercase: Some(true),
        phrase_matching: Some(false),
        scoring: scoring.then(TextScoringParams::default),
        ..TextIndexParams::default()
    };
    let deleted = BitVec::new();
    let open = |path: &std::path::Path, scoring: bool| {
        FullTextIndex::new_mmap(path.to_path_buf(), config(scoring), Memory::Cold, &deleted)
            .unwrap()
    };

    let without = Builder::new().prefix("mmap_no_lengths").tempdir().unwrap();
    drop(two_document_mmap_index(without.path().to_path_buf(), false));
    assert!(
        open(without.path(), false).is_some(),
        "opens without scoring"
    );
    assert!(
        open(without.path(), true).is_none(),
        "no sidecar under scoring must read as absent",
    );

    let with = Builder::new().prefix("mmap_lengths").tempdir().unwrap();
    drop(two_document_mmap_index(with.path().to_path_buf(), true));
    assert!(
        open(with.path(), true).is_some(),
        "the sidecar serves scoring"
    );
    assert!(open(with.path(), false).is_some(), "and opens without it");
}

/// Every answer of [`FullTextIndexRead::doc_len_batch`], in `point_ids` order.
fn doc_lens(index: &FullTextIndex, point_ids: &[PointOffsetType]) -> Vec<Option<u32>> {
    let mut out = vec![Some(u32::MAX); point_ids.len()];
    index
        .doc_len_batch(point_ids, |at, doc_len| out[at] = doc_len)
        .unwrap();
    out
}

/// What a scorer gets from a segment: `|d|` per point, and the total to
/// divide by `points_count`. Goes through the read surface rather than the
/// inverted index, since that is the side a scorer sees.
#[test]
fn read_surface_exposes_doc_len_and_total() {
    let temp_dir = Builder::new().prefix("doc_len_reads").tempdir().unwrap();
    let index = two_document_mmap_index(temp_dir.path().to_path_buf(), true);

    let _scope = ambient::test_guard();
    // The third is outside the index. Not a zero-length document.
    assert_eq!(doc_lens(&index, &[0, 1, 2]), [Some(3), Some(7), None]);
    assert_eq!(index.total_tokens(), Some(10));
    assert_eq!(index.points_count(), 2);
}

/// The same surface on a non-recording index: absent, not zero.
#[test]
fn read_surface_reports_absence_without_scoring() {
    let temp_dir = Builder::new().prefix("no_doc_len_reads").tempdir().unwrap();
    let index = two_document_mmap_index(temp_dir.path().to_path_buf(), false);

    assert_eq!(doc_lens(&index, &[0, 1]), [None, None]);
    assert_eq!(index.total_tokens(), None);
    assert_eq!(index.points_count(), 2);
}

/// The per-segment half of the corpus gather, over an index that records
/// lengths.
#[test]
fn text_statistics_gather_sums_lengths_and_frequencies() {
    use crate::segment::data_types::query_context::TextFieldStats;
    use crate::segment::index::field_index::full_text_index::full_text_index_read::fill_text_statistics;

    let scoring_dir = Builder::new().prefix("stats_scoring").tempdir().unwrap();
    let index = two_document_mmap_index(scoring_dir.path().to_path_buf(), true);
    let _scope = ambient::test_guard();
    let is_stopped = std::sync::atomic::AtomicBool::new(false);

    let mut stats = TextFieldStats {
        df: ["the", "alpha", "absent"]
            .map(|term| (term.to_string(), 0))
            .into(),
        ..Default::default()
    };
    fill_text_statistics(&index, &mut stats, None, &is_stopped).unwrap();

    assert_eq!(stats.documents, 2);
    assert_eq!(stats.total_tokens, Some(10), "3 tokens plus 7");
    assert_eq!(stats.df["the"], 1, "repeats in one document are still one");
    assert_eq!(stats.df["alpha"], 1);
    assert_eq!(stats.df["absent"], 0);

    // A segment that records no lengths poisons the average for the whole
    // corpus rather than letting it be taken over the segments that do.
    let plain_dir = Builder::new().prefix("stats_plain").tempdir().unwrap();
    let plain = two_document_mmap_index(plain_dir.path().to_path_buf(), false);
    fill_text_statistics(&plain, &mut stats, None, &is_stopped).unwrap();

    assert_eq!(stats.documents, 4);
    assert_eq!(stats.df["the"], 2, "frequencies still sum");
    assert_eq!(stats.total_tokens, None);
}

/// The per-segment gather over a corpus: only its points holding a token
/// count, for the document count, the frequencies and the total alike.
#[test]
fn text_statistics_gather_over_a_corpus() {
    use crate::segment::data_types::query_context::TextFieldStats;
    use crate::segment::index::field_index::full_text_index::full_text_index_read::fill_text_statistics;

    let seeded = || TextFieldStats {
        df: ["the", "alpha", "absent"]
            .map(|term| (term.to_string(), 0))
            .into(),
        ..Default::default()
    };
    let _scope = ambient::test_guard();
    let is_stopped = std::sync::atomic::AtomicBool::new(false);

    let scoring_dir = Builder::new().prefix("corpus_scoring").tempdir().unwrap();
    let index = two_document_mmap_index(scoring_dir.path().to_path_buf(), true);

    // Point 2 is outside the index: in the corpus, but no document.
    let mut stats = seeded();
    fill_text_statistics(&index, &mut stats, Some(&[1, 2]), &is_stopped).unwrap();
    assert_eq!(stats.documents, 1);
    assert_eq!(stats.total_tokens, Some(7));
    assert_eq!(stats.df["the"], 1);
    assert_eq!(stats.df["alpha"], 0, "held outside the corpus only");
    assert_eq!(stats.df["absent"], 0);

    let mut stats = seeded();
    fill_text_statistics(&index, &mut stats, Some(&[]), &is_stopped).unwrap();
    assert_eq!(stats.documents, 0);
    assert_eq!(stats.total_tokens, Some(0));
    assert_eq!(stats.df["the"], 0);

    // Without lengths, documents and frequencies still count, the total not.
    let plain_dir = Builder::new().prefix("corpus_plain").tempdir().unwrap();
    let plain = two_document_mmap_index(plain_dir.path().to_path_buf(), false);
    let mut stats = seeded();
    fill_text_statistics(&plain, &mut stats, Some(&[0]), &is_stopped).unwrap();
    assert_eq!(stats.documents, 1);
    assert_eq!(stats.total_tokens, None);
    assert_eq!(stats.df["alpha"], 1);
    assert_eq!(stats.df["the"], 0);
}

/// Joined identifiers of the code tokenizer must not change which phrases match: phrases match
/// exactly where their subwords are contiguous, and a joined identifier only matches alone.
#[test]
fn test_code_tokenizer_phrases() {
    use super::full_text_index_read::PayloadMatchQueryType;

    let _scope = ambient::test_guard();

    let temp_dir = Builder::new().prefix("test_dir").tempdir().unwrap();
    let config = TextIndexParams {
        tokenizer: TokenizerType::Code,
        phrase_matching: Some(true),
        ..Default::default()
    };

    let mut mutable_index =
        FullTextIndex::builder_gridstore(temp_dir.path().to_path_buf(), config.clone(), false)
            .make_empty()
            .unwrap();
    let empty_deleted = BitVec::new();
    let mut mmap_builder = FullTextIndex::builder_mmap(
        temp_dir.path().to_path_buf(),
        config,
        Memory::Cold,
        &empty_deleted,
        true,
    );
    mmap_builder.init().unwrap();

    let documents = [
        "let user = self.getUserName(id); return user",
        "fooBar x bazQux",
        "let map = HashMap::new(); map.insert(key)",
    ];
    for (point_id, text) in documents.iter().enumerate() {
        let values = vec![text.to_string()];
        mutable_index
            .add_many(point_id as PointOffsetType, values.clone())
            .unwrap();
        mmap_builder
            .add_many(point_id as PointOffsetType, values)
            .unwrap();
    }
    let mmap_index = mmap_builder.finalize().unwrap();

    // (phrase, points it is in)
    let phrases: &[(&str, &[PointOffsetType])] = &[
        // Identifiers in any spelling, followed by more text
        ("getUserName(id)", &[0]),
        ("self.getUserName", &[0]),
        ("get_user_name id", &[0]),
        ("get user name", &[0]),
        ("user name id return", &[0]),
        ("HashMap::new", &[2]),
        ("hash map new", &[2]),
        ("map insert key", &[2]),
        // A joined identifier alone
        ("getusername", &[0]),
        ("hashmap", &[2]),
        ("foobar", &[1]),
        // Not in the text: joined identifiers next to each other, or to the last subword
        ("foobar bazqux", &[]),
        ("qux foobar", &[]),
        ("user getusername", &[]),
        ("key hashmap", &[]),
        ("hashmap new", &[]),
    ];

    for index in [mutable_index, mmap_index] {
        for &(phrase, expected) in phrases {
            let Some(query) = index.parse_phrase_query(phrase).unwrap() else {
                assert!(expected.is_empty(), "{phrase:?} has unknown tokens");
                continue;
            };
            let found: Vec<_> = index.filter_query(query.clone()).unwrap().collect();
            assert_eq!(found, expected, "filter {phrase:?}");

            for (point_id, text) in documents.iter().enumerate() {
                let point_id = point_id as PointOffsetType;
                let expect = expected.contains(&point_id);
                assert_eq!(
                    index.check_match(&query, point_id).unwrap(),
                    expect,
                    "check {phrase:?} in {point_id}",
                );
                assert_eq!(
                    index
                        .check_payload_match(
                            &serde_json::json!(text),
                            phrase,
                            PayloadMatchQueryType::Phrase,
                        )
                        .unwrap(),
                    expect,
                    "payload {phrase:?} in {point_id}",
                );
            }
        }
    }
}
