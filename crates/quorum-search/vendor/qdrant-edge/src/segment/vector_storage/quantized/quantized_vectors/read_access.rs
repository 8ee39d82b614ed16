use crate::common::types::PointOffsetType;

use super::QuantizedVectorsConfig;
use crate::segment::common::operation_error::OperationResult;
use crate::segment::data_types::vectors::QueryVector;
use crate::segment::vector_storage::RawScorer;
use crate::segment::vector_storage::quantized::quantized_query_scorer::InternalScorerUnsupported;

/// Shared read/scoring interface over quantized vectors.
///
/// Implemented by both the read-write [`QuantizedVectors`] and the read-only
/// [`QuantizedVectorsRead`], so search code can be generic over the backend.
///
/// [`QuantizedVectors`]: super::QuantizedVectors
/// [`QuantizedVectorsRead`]: super::ReadOnlyQuantizedVectors
pub trait QuantizedVectorsRead {
    fn config(&self) -> &QuantizedVectorsConfig;

    fn default_rescoring(&self) -> bool;

    fn raw_scorer<'a>(&'a self, query: QueryVector) -> OperationResult<Box<dyn RawScorer + 'a>>;

    /// Build a raw scorer for the specified `point_id`.
    /// If not supported, return [`InternalScorerUnsupported`] with the original `hardware_counter`.
    fn raw_internal_scorer<'a>(
        &'a self,
        point_id: PointOffsetType,
    ) -> Result<Box<dyn RawScorer + 'a>, InternalScorerUnsupported>;
}
