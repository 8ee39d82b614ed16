use std::borrow::Cow;

use crate::common::ambient::hw::HwScale;
use crate::common::types::{PointOffsetType, ScoreType};

use crate::segment::common::operation_error::OperationResult;
use crate::segment::data_types::primitive::PrimitiveVectorElement;
use crate::segment::data_types::vectors::DenseVector;
use crate::segment::spaces::metric::Metric;
use crate::segment::types::QuantizationConfig;
use crate::segment::vector_storage::query_scorer::QueryScorer;

pub struct QuantizedQueryScorer<'a, TEncodedVectors>
where
    TEncodedVectors: crate::quantization::EncodedVectors,
{
    hw: HwScale,
    query: TEncodedVectors::EncodedQuery,
    quantized_data: &'a TEncodedVectors,
}

/// Error type returned when [`QuantizedQueryScorer::new_internal`] fails.
pub struct InternalScorerUnsupported;

impl<'a, TEncodedVectors> QuantizedQueryScorer<'a, TEncodedVectors>
where
    TEncodedVectors: crate::quantization::EncodedVectors,
{
    pub fn new<TElement, TMetric>(
        raw_query: DenseVector,
        quantized_data: &'a TEncodedVectors,
        quantization_config: &QuantizationConfig,
    ) -> Self
    where
        TElement: PrimitiveVectorElement,
        TMetric: Metric<TElement>,
    {
        let raw_preprocessed_query = TMetric::preprocess(raw_query);
        let original_query = TElement::slice_from_float_cow(Cow::Owned(raw_preprocessed_query));
        let original_query_prequantized = TElement::quantization_preprocess(
            quantization_config,
            TMetric::distance(),
            original_query,
        );
        let query = quantized_data.encode_query(&original_query_prequantized);

        Self {
            hw: HwScale {
                cpu: 1,
                vector_io_read: usize::from(quantized_data.is_cold()),
            },
            query,
            quantized_data,
        }
    }

    /// Build a raw scorer for the specified `point_id`.
    /// If not supported, return [`InternalScorerUnsupported`].
    pub fn new_internal(
        point_id: PointOffsetType,
        quantized_data: &'a TEncodedVectors,
    ) -> Result<Self, InternalScorerUnsupported> {
        let Some(query) = quantized_data.encode_internal_vector(point_id) else {
            return Err(InternalScorerUnsupported);
        };

        Ok(Self {
            hw: HwScale {
                cpu: 1,
                vector_io_read: usize::from(quantized_data.is_cold()),
            },
            query,
            quantized_data,
        })
    }
}

impl<TEncodedVectors> QueryScorer for QuantizedQueryScorer<'_, TEncodedVectors>
where
    TEncodedVectors: crate::quantization::EncodedVectors,
{
    fn score_stored_batch(
        &self,
        ids: &[PointOffsetType],
        scores: &mut [ScoreType],
    ) -> OperationResult<()> {
        debug_assert_eq!(ids.len(), scores.len());

        self.hw
            .vector_io_read(ids.len() * self.quantized_data.quantized_vector_size());

        self.quantized_data.score_points(&self.query, ids, scores)?;
        Ok(())
    }

    fn score_internal(&self, point_a: PointOffsetType, point_b: PointOffsetType) -> ScoreType {
        self.quantized_data.score_internal(point_a, point_b)
    }

    type SupportsBytes = TEncodedVectors::SupportsBytes;
    fn score_bytes(&self, enabled: Self::SupportsBytes, bytes: &[u8]) -> ScoreType {
        self.quantized_data.score_bytes(enabled, &self.query, bytes)
    }
}
