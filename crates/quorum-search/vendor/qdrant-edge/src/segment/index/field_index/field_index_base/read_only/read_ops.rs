use std::sync::atomic::AtomicBool;

use crate::common::types::{PointOffsetType, ScoredPointOffset};
use serde_json::Value;

use crate::segment::common::operation_error::OperationResult;
use crate::segment::data_types::query_context::{TextFieldStats, TextQueryContext};
use crate::segment::index::UniversalReadExt;
use crate::segment::index::condition_checker::ConditionCheckerEnum;
use crate::segment::index::field_index::bool_index::BoolIndexRead;
use crate::segment::index::field_index::facet_index::FacetIndexEnum;
use crate::segment::index::field_index::field_index_base::read_only::ReadOnlyFieldIndex;
use crate::segment::index::field_index::full_text_index::full_text_index_read::{
    FullTextIndexRead, fill_text_statistics, score_bm25,
};
use crate::segment::index::field_index::full_text_index::{Bm25Accept, Bm25Params};
use crate::segment::index::field_index::geo_index::GeoIndexRead;
use crate::segment::index::field_index::map_index::read_ops::MapIndexRead;
use crate::segment::index::field_index::nested_index::{ElementConditionChecker, FacetView, NumericView};
use crate::segment::index::field_index::null_index::NullIndexRead;
use crate::segment::index::field_index::numeric_index::{
    NumericFieldIndexRead, NumericIndexRead, ReadOnlyNumericFieldIndex,
};
use crate::segment::index::field_index::{
    CardinalityEstimation, FacetIndex, FieldIndexRead, PayloadBlockCondition, PayloadFieldIndexRead,
};
use crate::segment::index::query_optimization::rescore_formula::value_retriever::VariableRetrieverFn;
use crate::segment::json_path::JsonPath;
use crate::segment::telemetry::PayloadIndexTelemetry;
use crate::segment::types::{FieldCondition, PayloadKeyType};

impl<S: UniversalReadExt> PayloadFieldIndexRead for ReadOnlyFieldIndex<S> {
    fn count_indexed_points(&self) -> OperationResult<usize> {
        match self {
            ReadOnlyFieldIndex::IntIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::DatetimeIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::IntMapIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::KeywordIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::FloatIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::BoolIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::GeoIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::UuidIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::FullTextIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::UuidMapIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::NullIndex(idx) => idx.count_indexed_points(),
            ReadOnlyFieldIndex::Nested(idx) => idx.count_indexed_points(),
        }
    }

    fn filter<'a>(
        &'a self,
        condition: &'a FieldCondition,
    ) -> OperationResult<Option<Box<dyn Iterator<Item = PointOffsetType> + 'a>>> {
        match self {
            ReadOnlyFieldIndex::IntIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::DatetimeIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::IntMapIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::KeywordIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::FloatIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::BoolIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::GeoIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::UuidIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::FullTextIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::UuidMapIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::NullIndex(idx) => idx.filter(condition),
            ReadOnlyFieldIndex::Nested(idx) => idx.filter(condition),
        }
    }

    fn estimate_cardinality(
        &self,
        condition: &FieldCondition,
    ) -> OperationResult<Option<CardinalityEstimation>> {
        match self {
            ReadOnlyFieldIndex::IntIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::DatetimeIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::IntMapIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::KeywordIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::FloatIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::BoolIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::GeoIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::UuidIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::FullTextIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::UuidMapIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::NullIndex(idx) => idx.estimate_cardinality(condition),
            ReadOnlyFieldIndex::Nested(idx) => idx.estimate_cardinality(condition),
        }
    }

    fn for_each_payload_block(
        &self,
        threshold: usize,
        key: PayloadKeyType,
        f: &mut dyn FnMut(PayloadBlockCondition) -> OperationResult<()>,
    ) -> OperationResult<()> {
        match self {
            ReadOnlyFieldIndex::IntIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::DatetimeIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::IntMapIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::KeywordIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::FloatIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::BoolIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::GeoIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::UuidIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::FullTextIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::UuidMapIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::NullIndex(idx) => idx.for_each_payload_block(threshold, key, f),
            ReadOnlyFieldIndex::Nested(idx) => idx.for_each_payload_block(threshold, key, f),
        }
    }

    fn condition_checker<'a>(
        &'a self,
        condition: &FieldCondition,
    ) -> OperationResult<Option<ConditionCheckerEnum<'a>>> {
        match self {
            ReadOnlyFieldIndex::IntIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::DatetimeIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::IntMapIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::KeywordIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::FloatIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::BoolIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::GeoIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::UuidIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::FullTextIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::UuidMapIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::NullIndex(idx) => idx.condition_checker(condition),
            ReadOnlyFieldIndex::Nested(idx) => idx.condition_checker(condition),
        }
    }

    fn special_check_condition(
        &self,
        condition: &FieldCondition,
        payload_value: &Value,
    ) -> OperationResult<Option<bool>> {
        match self {
            ReadOnlyFieldIndex::IntIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::DatetimeIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::IntMapIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::KeywordIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::FloatIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::BoolIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::GeoIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::UuidIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::FullTextIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::UuidMapIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::NullIndex(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
            ReadOnlyFieldIndex::Nested(idx) => {
                idx.special_check_condition(condition, payload_value)
            }
        }
    }
}

impl<S: UniversalReadExt> FieldIndexRead for ReadOnlyFieldIndex<S> {
    fn get_telemetry_data(&self) -> OperationResult<PayloadIndexTelemetry> {
        Ok(match self {
            ReadOnlyFieldIndex::IntIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::DatetimeIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::IntMapIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::KeywordIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::FloatIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::BoolIndex(idx) => idx.get_telemetry_data()?,
            ReadOnlyFieldIndex::GeoIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::UuidIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::FullTextIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::UuidMapIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::NullIndex(idx) => idx.get_telemetry_data(),
            ReadOnlyFieldIndex::Nested(idx) => idx.get_telemetry_data()?,
        })
    }

    fn values_count(&self, point_id: PointOffsetType) -> OperationResult<usize> {
        Ok(match self {
            ReadOnlyFieldIndex::IntIndex(idx) => {
                NumericIndexRead::values_count(idx, point_id).unwrap_or(0)
            }
            ReadOnlyFieldIndex::DatetimeIndex(idx) => {
                NumericIndexRead::values_count(idx, point_id).unwrap_or(0)
            }
            ReadOnlyFieldIndex::IntMapIndex(idx) => {
                MapIndexRead::values_count(idx, point_id).unwrap_or(0)
            }
            ReadOnlyFieldIndex::KeywordIndex(idx) => {
                MapIndexRead::values_count(idx, point_id).unwrap_or(0)
            }
            ReadOnlyFieldIndex::FloatIndex(idx) => {
                NumericIndexRead::values_count(idx, point_id).unwrap_or(0)
            }
            ReadOnlyFieldIndex::BoolIndex(idx) => BoolIndexRead::values_count(idx, point_id)?,
            ReadOnlyFieldIndex::GeoIndex(idx) => GeoIndexRead::values_count(idx, point_id),
            ReadOnlyFieldIndex::UuidIndex(idx) => {
                NumericIndexRead::values_count(idx, point_id).unwrap_or(0)
            }
            ReadOnlyFieldIndex::FullTextIndex(idx) => {
                FullTextIndexRead::values_count(idx, point_id)
            }
            ReadOnlyFieldIndex::UuidMapIndex(idx) => {
                MapIndexRead::values_count(idx, point_id).unwrap_or(0)
            }
            ReadOnlyFieldIndex::NullIndex(idx) => NullIndexRead::values_count(idx, point_id)?,
            ReadOnlyFieldIndex::Nested(idx) => idx.values_count(point_id)?,
        })
    }

    fn values_is_empty(&self, point_id: PointOffsetType) -> OperationResult<bool> {
        Ok(match self {
            ReadOnlyFieldIndex::IntIndex(idx) => NumericIndexRead::values_is_empty(idx, point_id),
            ReadOnlyFieldIndex::DatetimeIndex(idx) => {
                NumericIndexRead::values_is_empty(idx, point_id)
            }
            ReadOnlyFieldIndex::IntMapIndex(idx) => MapIndexRead::values_is_empty(idx, point_id),
            ReadOnlyFieldIndex::KeywordIndex(idx) => MapIndexRead::values_is_empty(idx, point_id),
            ReadOnlyFieldIndex::FloatIndex(idx) => NumericIndexRead::values_is_empty(idx, point_id),
            ReadOnlyFieldIndex::BoolIndex(idx) => BoolIndexRead::values_is_empty(idx, point_id)?,
            ReadOnlyFieldIndex::GeoIndex(idx) => GeoIndexRead::values_is_empty(idx, point_id),
            ReadOnlyFieldIndex::UuidIndex(idx) => NumericIndexRead::values_is_empty(idx, point_id),
            ReadOnlyFieldIndex::FullTextIndex(idx) => {
                FullTextIndexRead::values_is_empty(idx, point_id)
            }
            ReadOnlyFieldIndex::UuidMapIndex(idx) => MapIndexRead::values_is_empty(idx, point_id),
            ReadOnlyFieldIndex::NullIndex(idx) => NullIndexRead::values_is_empty(idx, point_id)?,
            ReadOnlyFieldIndex::Nested(idx) => idx.values_is_empty(point_id)?,
        })
    }

    fn value_retriever<'a, 'q>(&'a self) -> OperationResult<Option<VariableRetrieverFn<'q>>>
    where
        'a: 'q,
    {
        // Mirrors `FieldIndex::value_retriever`: NullIndex has no underlying
        // values to return, and FullTextIndex stores tokenized documents
        // rather than raw payload values — neither has a value retriever yet.
        // The numeric, map, bool and geo variants build their per-variant
        // closure via an inherent `value_retriever` method.
        Ok(match self {
            ReadOnlyFieldIndex::IntIndex(idx) => Some(idx.value_retriever()),
            ReadOnlyFieldIndex::DatetimeIndex(idx) => Some(idx.value_retriever()),
            ReadOnlyFieldIndex::IntMapIndex(idx) => Some(idx.value_retriever()),
            ReadOnlyFieldIndex::KeywordIndex(idx) => Some(idx.value_retriever()),
            ReadOnlyFieldIndex::FloatIndex(idx) => Some(idx.value_retriever()),
            ReadOnlyFieldIndex::BoolIndex(idx) => Some(idx.value_retriever()?),
            ReadOnlyFieldIndex::GeoIndex(idx) => Some(idx.value_retriever()),
            ReadOnlyFieldIndex::UuidIndex(idx) => Some(idx.value_retriever()),
            ReadOnlyFieldIndex::UuidMapIndex(idx) => Some(idx.value_retriever()),
            ReadOnlyFieldIndex::FullTextIndex(_) | ReadOnlyFieldIndex::NullIndex(_) => None,
            ReadOnlyFieldIndex::Nested(idx) => idx.value_retriever()?,
        })
    }

    fn as_numeric(&self) -> Option<impl NumericFieldIndexRead + '_> {
        match self {
            ReadOnlyFieldIndex::Nested(index) => index.numeric_view().map(NumericView::Nested),
            ReadOnlyFieldIndex::IntIndex(_)
            | ReadOnlyFieldIndex::DatetimeIndex(_)
            | ReadOnlyFieldIndex::IntMapIndex(_)
            | ReadOnlyFieldIndex::KeywordIndex(_)
            | ReadOnlyFieldIndex::FloatIndex(_)
            | ReadOnlyFieldIndex::GeoIndex(_)
            | ReadOnlyFieldIndex::FullTextIndex(_)
            | ReadOnlyFieldIndex::BoolIndex(_)
            | ReadOnlyFieldIndex::UuidIndex(_)
            | ReadOnlyFieldIndex::UuidMapIndex(_)
            | ReadOnlyFieldIndex::NullIndex(_) => self.numeric_view().map(NumericView::Plain),
        }
    }

    fn fill_text_statistics(
        &self,
        stats: &mut TextFieldStats,
        corpus: Option<&[PointOffsetType]>,
        is_stopped: &AtomicBool,
    ) -> OperationResult<bool> {
        match self {
            ReadOnlyFieldIndex::FullTextIndex(index) => {
                fill_text_statistics(index, stats, corpus, is_stopped)?;
                Ok(true)
            }
            ReadOnlyFieldIndex::IntIndex(_)
            | ReadOnlyFieldIndex::DatetimeIndex(_)
            | ReadOnlyFieldIndex::FloatIndex(_)
            | ReadOnlyFieldIndex::IntMapIndex(_)
            | ReadOnlyFieldIndex::KeywordIndex(_)
            | ReadOnlyFieldIndex::GeoIndex(_)
            | ReadOnlyFieldIndex::BoolIndex(_)
            | ReadOnlyFieldIndex::UuidMapIndex(_)
            | ReadOnlyFieldIndex::UuidIndex(_)
            | ReadOnlyFieldIndex::NullIndex(_) => Ok(false),
            ReadOnlyFieldIndex::Nested(index) => {
                index.fill_text_statistics(stats, corpus, is_stopped)
            }
        }
    }

    fn score_bm25(
        &self,
        terms: &[String],
        context: &TextQueryContext<'_>,
        params: Bm25Params,
        accept: &Bm25Accept<'_>,
        limit: usize,
    ) -> OperationResult<Option<Vec<ScoredPointOffset>>> {
        match self {
            ReadOnlyFieldIndex::FullTextIndex(index) => score_bm25(
                index,
                terms,
                context,
                params,
                accept,
                limit,
                context.is_stopped(),
            )
            .map(Some),
            ReadOnlyFieldIndex::IntIndex(_)
            | ReadOnlyFieldIndex::DatetimeIndex(_)
            | ReadOnlyFieldIndex::FloatIndex(_)
            | ReadOnlyFieldIndex::IntMapIndex(_)
            | ReadOnlyFieldIndex::KeywordIndex(_)
            | ReadOnlyFieldIndex::GeoIndex(_)
            | ReadOnlyFieldIndex::BoolIndex(_)
            | ReadOnlyFieldIndex::UuidMapIndex(_)
            | ReadOnlyFieldIndex::UuidIndex(_)
            | ReadOnlyFieldIndex::NullIndex(_) => Ok(None),
            ReadOnlyFieldIndex::Nested(index) => {
                index.score_bm25(terms, context, params, accept, limit)
            }
        }
    }

    fn as_facet_index(&self) -> Option<impl FacetIndex + '_> {
        match self {
            ReadOnlyFieldIndex::Nested(index) => index.facet_view().map(FacetView::Nested),
            ReadOnlyFieldIndex::IntIndex(_)
            | ReadOnlyFieldIndex::DatetimeIndex(_)
            | ReadOnlyFieldIndex::IntMapIndex(_)
            | ReadOnlyFieldIndex::KeywordIndex(_)
            | ReadOnlyFieldIndex::FloatIndex(_)
            | ReadOnlyFieldIndex::GeoIndex(_)
            | ReadOnlyFieldIndex::FullTextIndex(_)
            | ReadOnlyFieldIndex::BoolIndex(_)
            | ReadOnlyFieldIndex::UuidIndex(_)
            | ReadOnlyFieldIndex::UuidMapIndex(_)
            | ReadOnlyFieldIndex::NullIndex(_) => self.facet_view().map(FacetView::Plain),
        }
    }

    fn element_condition_checker<'a>(
        &'a self,
        array_key: &JsonPath,
        condition: &FieldCondition,
    ) -> OperationResult<Option<ElementConditionChecker<'a>>> {
        match self {
            ReadOnlyFieldIndex::Nested(index) => {
                index.element_condition_checker(array_key, condition)
            }
            ReadOnlyFieldIndex::IntIndex(_)
            | ReadOnlyFieldIndex::DatetimeIndex(_)
            | ReadOnlyFieldIndex::IntMapIndex(_)
            | ReadOnlyFieldIndex::KeywordIndex(_)
            | ReadOnlyFieldIndex::FloatIndex(_)
            | ReadOnlyFieldIndex::GeoIndex(_)
            | ReadOnlyFieldIndex::FullTextIndex(_)
            | ReadOnlyFieldIndex::BoolIndex(_)
            | ReadOnlyFieldIndex::UuidIndex(_)
            | ReadOnlyFieldIndex::UuidMapIndex(_)
            | ReadOnlyFieldIndex::NullIndex(_) => Ok(None),
        }
    }
}

impl<S: UniversalReadExt> ReadOnlyFieldIndex<S> {
    /// Order-by view of a flattened numeric index.
    pub fn numeric_view(&self) -> Option<ReadOnlyNumericFieldIndex<'_, S>> {
        match self {
            ReadOnlyFieldIndex::IntIndex(index) => {
                Some(ReadOnlyNumericFieldIndex::IntIndex(index.inner()))
            }
            ReadOnlyFieldIndex::DatetimeIndex(index) => {
                Some(ReadOnlyNumericFieldIndex::IntIndex(index.inner()))
            }
            ReadOnlyFieldIndex::FloatIndex(index) => {
                Some(ReadOnlyNumericFieldIndex::FloatIndex(index.inner()))
            }
            // UUIDs aren't meaningfully order-by-able as numbers, matching
            // `FieldIndex::as_numeric`.
            ReadOnlyFieldIndex::UuidIndex(_)
            | ReadOnlyFieldIndex::IntMapIndex(_)
            | ReadOnlyFieldIndex::KeywordIndex(_)
            | ReadOnlyFieldIndex::BoolIndex(_)
            | ReadOnlyFieldIndex::GeoIndex(_)
            | ReadOnlyFieldIndex::FullTextIndex(_)
            | ReadOnlyFieldIndex::UuidMapIndex(_)
            | ReadOnlyFieldIndex::NullIndex(_)
            | ReadOnlyFieldIndex::Nested(_) => None,
        }
    }

    /// Facet view of a flattened index.
    pub fn facet_view(&self) -> Option<FacetIndexEnum<'_, S>> {
        match self {
            ReadOnlyFieldIndex::IntMapIndex(index) => Some(FacetIndexEnum::IntReadOnly(index)),
            ReadOnlyFieldIndex::KeywordIndex(index) => Some(FacetIndexEnum::KeywordReadOnly(index)),
            ReadOnlyFieldIndex::BoolIndex(index) => Some(FacetIndexEnum::BoolReadOnly(index)),
            ReadOnlyFieldIndex::UuidMapIndex(index) => Some(FacetIndexEnum::UuidReadOnly(index)),
            // Numeric, geo and full-text variants don't carry facet-able
            // values; NullIndex carries none either.
            ReadOnlyFieldIndex::IntIndex(_)
            | ReadOnlyFieldIndex::DatetimeIndex(_)
            | ReadOnlyFieldIndex::FloatIndex(_)
            | ReadOnlyFieldIndex::UuidIndex(_)
            | ReadOnlyFieldIndex::GeoIndex(_)
            | ReadOnlyFieldIndex::FullTextIndex(_)
            | ReadOnlyFieldIndex::NullIndex(_)
            | ReadOnlyFieldIndex::Nested(_) => None,
        }
    }
}
