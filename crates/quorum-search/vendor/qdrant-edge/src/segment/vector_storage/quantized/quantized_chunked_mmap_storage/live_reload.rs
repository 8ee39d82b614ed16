use crate::common::sorted_slice::SortedSlice;
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{CachedReadFs, PreloadFuture, UniversalRead, UniversalReadFs};

use crate::segment::common::operation_error::OperationResult;
use crate::segment::index::field_index::LiveReload;
use crate::segment::vector_storage::quantized::quantized_chunked_mmap_storage::QuantizedChunkedStorageRead;

impl<S: UniversalRead> LiveReload for QuantizedChunkedStorageRead<S> {
    type File = S;

    fn live_preload<Fs: CachedReadFs<File = S>>(
        &self,
        fs: &Fs,
    ) -> OperationResult<Vec<PreloadFuture>> {
        self.data.live_preload(fs)
    }

    /// Pick up quantized vectors a writer appended to the chunked backing.
    fn live_reload<Fs: UniversalReadFs<File = S>>(
        &mut self,
        fs: &Fs,
        deleted_points: &SortedSlice<'_, PointOffsetType>,
        new_points: &SortedSlice<'_, PointOffsetType>,
    ) -> OperationResult<()> {
        self.data.live_reload(fs, deleted_points, new_points)
    }
}

impl<S: UniversalRead> QuantizedChunkedStorageRead<S> {
    /// Grow to `new_len` quantized records; see
    /// [`ReadOnlyChunkedVectors::live_reload_to`].
    ///
    /// [`ReadOnlyChunkedVectors::live_reload_to`]: crate::vector_storage::chunked_vectors::read_only::ReadOnlyChunkedVectors::live_reload_to
    pub fn live_reload_to<Fs: UniversalReadFs<File = S>>(
        &mut self,
        fs: &Fs,
        new_len: usize,
    ) -> OperationResult<()> {
        self.data.live_reload_to(fs, new_len)
    }
}
