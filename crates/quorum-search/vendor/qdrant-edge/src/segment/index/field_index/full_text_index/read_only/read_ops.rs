use std::sync::atomic::AtomicBool;

use crate::common::types::{PointOffsetType, ScoredPointOffset};
use crate::common::universal_io::{UniversalRead, UserData};

use super::super::full_text_index_read::FullTextIndexRead;
use super::super::inverted_index::{ParsedQuery, TokenId};
use super::super::read_ops;
use super::super::tokenizers::Tokenizer;
use super::ReadOnlyFullTextIndex;
use crate::segment::common::operation_error::OperationResult;
use crate::segment::index::UniversalReadExt;
use crate::segment::index::condition_checker::ConditionCheckerEnum;
use crate::segment::index::field_index::full_text_index::inverted_index::bm25::{Bm25Accept, Bm25Query};
use crate::segment::index::field_index::{
    CardinalityEstimation, PayloadBlockCondition, PayloadFieldIndexRead,
};
use crate::segment::index::payload_config::StorageType;
use crate::segment::types::{FieldCondition, PayloadKeyType};

/// Dispatcher impl: forwards every [`FullTextIndexRead`] method to the active
/// variant. The default trait methods (`parse_*`, `check_payload_match`,
/// `get_telemetry_data`) are picked up automatically — they only depend on the
/// required methods, so no per-variant dispatch is needed for them.
impl<S: UniversalRead> FullTextIndexRead for ReadOnlyFullTextIndex<S> {
    fn tokenizer(&self) -> &Tokenizer {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.tokenizer(),
            ReadOnlyFullTextIndex::OnDisk(index) => index.tokenizer(),
            ReadOnlyFullTextIndex::Immutable(index) => index.tokenizer(),
        }
    }

    fn telemetry_index_type(&self) -> &'static str {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.telemetry_index_type(),
            ReadOnlyFullTextIndex::OnDisk(index) => index.telemetry_index_type(),
            ReadOnlyFullTextIndex::Immutable(index) => index.telemetry_index_type(),
        }
    }

    fn points_count(&self) -> usize {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.points_count(),
            ReadOnlyFullTextIndex::OnDisk(index) => index.points_count(),
            ReadOnlyFullTextIndex::Immutable(index) => index.points_count(),
        }
    }

    fn document_count(&self) -> usize {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.document_count(),
            ReadOnlyFullTextIndex::OnDisk(index) => index.document_count(),
            ReadOnlyFullTextIndex::Immutable(index) => index.document_count(),
        }
    }

    fn values_count(&self, point_id: PointOffsetType) -> usize {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.values_count(point_id),
            ReadOnlyFullTextIndex::OnDisk(index) => index.values_count(point_id),
            ReadOnlyFullTextIndex::Immutable(index) => index.values_count(point_id),
        }
    }

    fn doc_len_batch(
        &self,
        point_ids: &[PointOffsetType],
        f: impl FnMut(usize, Option<u32>),
    ) -> OperationResult<()> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.doc_len_batch(point_ids, f),
            ReadOnlyFullTextIndex::OnDisk(index) => index.doc_len_batch(point_ids, f),
            ReadOnlyFullTextIndex::Immutable(index) => index.doc_len_batch(point_ids, f),
        }
    }

    fn posting_len(&self, token_id: TokenId) -> OperationResult<Option<usize>> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.posting_len(token_id),
            ReadOnlyFullTextIndex::OnDisk(index) => index.posting_len(token_id),
            ReadOnlyFullTextIndex::Immutable(index) => index.posting_len(token_id),
        }
    }

    fn score_bm25(
        &self,
        query: &Bm25Query,
        accept: &Bm25Accept<'_>,
        limit: usize,
        is_stopped: &AtomicBool,
    ) -> OperationResult<Vec<ScoredPointOffset>> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => {
                index.score_bm25(query, accept, limit, is_stopped)
            }
            ReadOnlyFullTextIndex::OnDisk(index) => {
                index.score_bm25(query, accept, limit, is_stopped)
            }
            ReadOnlyFullTextIndex::Immutable(index) => {
                index.score_bm25(query, accept, limit, is_stopped)
            }
        }
    }

    fn total_tokens(&self) -> Option<u64> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.total_tokens(),
            ReadOnlyFullTextIndex::OnDisk(index) => index.total_tokens(),
            ReadOnlyFullTextIndex::Immutable(index) => index.total_tokens(),
        }
    }

    fn values_is_empty(&self, point_id: PointOffsetType) -> bool {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.values_is_empty(point_id),
            ReadOnlyFullTextIndex::OnDisk(index) => index.values_is_empty(point_id),
            ReadOnlyFullTextIndex::Immutable(index) => index.values_is_empty(point_id),
        }
    }

    fn for_each_token_id<'a, U: UserData>(
        &self,
        iter: impl Iterator<Item = (U, &'a str)>,
        f: impl FnMut(U, Option<TokenId>),
    ) -> OperationResult<()> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.for_each_token_id(iter, f),
            ReadOnlyFullTextIndex::OnDisk(index) => index.for_each_token_id(iter, f),
            ReadOnlyFullTextIndex::Immutable(index) => index.for_each_token_id(iter, f),
        }
    }

    fn filter_query<'a>(
        &'a self,
        query: ParsedQuery,
    ) -> OperationResult<Box<dyn Iterator<Item = PointOffsetType> + 'a>> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.filter_query(query),
            ReadOnlyFullTextIndex::OnDisk(index) => index.filter_query(query),
            ReadOnlyFullTextIndex::Immutable(index) => index.filter_query(query),
        }
    }

    fn estimate_query_cardinality(
        &self,
        query: &ParsedQuery,
        condition: &FieldCondition,
    ) -> OperationResult<CardinalityEstimation> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => {
                index.estimate_query_cardinality(query, condition)
            }
            ReadOnlyFullTextIndex::OnDisk(index) => {
                index.estimate_query_cardinality(query, condition)
            }
            ReadOnlyFullTextIndex::Immutable(index) => {
                index.estimate_query_cardinality(query, condition)
            }
        }
    }

    fn check_match(&self, query: &ParsedQuery, point_id: PointOffsetType) -> OperationResult<bool> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.check_match(query, point_id),
            ReadOnlyFullTextIndex::OnDisk(index) => index.check_match(query, point_id),
            ReadOnlyFullTextIndex::Immutable(index) => index.check_match(query, point_id),
        }
    }

    fn check_match_batch<U: UserData>(
        &self,
        query: &ParsedQuery,
        items: impl Iterator<Item = (U, PointOffsetType)>,
        on_match: impl FnMut(U, bool),
    ) -> OperationResult<()> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => {
                index.check_match_batch(query, items, on_match)
            }
            ReadOnlyFullTextIndex::OnDisk(index) => index.check_match_batch(query, items, on_match),
            ReadOnlyFullTextIndex::Immutable(index) => {
                index.check_match_batch(query, items, on_match)
            }
        }
    }

    fn for_each_payload_block_inner(
        &self,
        threshold: usize,
        key: PayloadKeyType,
        f: &mut dyn FnMut(PayloadBlockCondition) -> OperationResult<()>,
    ) -> OperationResult<()> {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => {
                index.for_each_payload_block_inner(threshold, key, f)
            }
            ReadOnlyFullTextIndex::OnDisk(index) => {
                index.for_each_payload_block_inner(threshold, key, f)
            }
            ReadOnlyFullTextIndex::Immutable(index) => {
                index.for_each_payload_block_inner(threshold, key, f)
            }
        }
    }

    fn get_storage_type(&self) -> StorageType {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.get_storage_type(),
            ReadOnlyFullTextIndex::OnDisk(index) => index.get_storage_type(),
            ReadOnlyFullTextIndex::Immutable(index) => index.get_storage_type(),
        }
    }

    fn ram_usage_bytes(&self) -> usize {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.ram_usage_bytes(),
            ReadOnlyFullTextIndex::OnDisk(index) => index.ram_usage_bytes(),
            ReadOnlyFullTextIndex::Immutable(index) => index.ram_usage_bytes(),
        }
    }

    fn is_cold(&self) -> bool {
        match self {
            ReadOnlyFullTextIndex::Appendable(index) => index.is_cold(),
            ReadOnlyFullTextIndex::OnDisk(index) => index.is_cold(),
            ReadOnlyFullTextIndex::Immutable(index) => index.is_cold(),
        }
    }
}

impl<S: UniversalReadExt> PayloadFieldIndexRead for ReadOnlyFullTextIndex<S> {
    fn count_indexed_points(&self) -> OperationResult<usize> {
        Ok(FullTextIndexRead::points_count(self))
    }

    fn filter<'a>(
        &'a self,
        condition: &'a FieldCondition,
    ) -> OperationResult<Option<Box<dyn Iterator<Item = PointOffsetType> + 'a>>> {
        read_ops::filter(self, condition)
    }

    fn estimate_cardinality(
        &self,
        condition: &FieldCondition,
    ) -> OperationResult<Option<CardinalityEstimation>> {
        read_ops::estimate_cardinality(self, condition)
    }

    fn for_each_payload_block(
        &self,
        threshold: usize,
        key: PayloadKeyType,
        f: &mut dyn FnMut(PayloadBlockCondition) -> OperationResult<()>,
    ) -> OperationResult<()> {
        read_ops::for_each_payload_block(self, threshold, key, f)
    }

    fn condition_checker<'a>(
        &'a self,
        condition: &FieldCondition,
    ) -> OperationResult<Option<ConditionCheckerEnum<'a>>> {
        read_ops::condition_checker(self, condition, S::condition_checker_full_text)
    }

    fn special_check_condition(
        &self,
        condition: &FieldCondition,
        payload_value: &serde_json::Value,
    ) -> OperationResult<Option<bool>> {
        read_ops::special_check_condition(self, condition, payload_value)
    }
}
