use crate::common::ambient::hw::HwMetric;
use crate::common::generic_consts::Sequential;
use crate::common::sorted_slice::SortedSlice;
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{CachedReadFs, PreloadFuture, UniversalRead, UniversalReadFs};

use super::ReadOnlyAppendableFullTextIndex;
use crate::segment::common::operation_error::{OperationError, OperationResult};
use crate::segment::index::field_index::LiveReload;
use crate::segment::index::field_index::full_text_index::FullTextIndex;
use crate::segment::index::field_index::full_text_index::inverted_index::InvertedIndex;

impl<S: UniversalRead> LiveReload for ReadOnlyAppendableFullTextIndex<S> {
    type File = S;

    fn live_preload<Fs: CachedReadFs<File = S>>(
        &self,
        fs: &Fs,
    ) -> OperationResult<Vec<PreloadFuture>> {
        Ok(self.storage.live_preload(fs)?)
    }

    fn live_reload<Fs: UniversalReadFs<File = S>>(
        &mut self,
        fs: &Fs,
        deleted_points: &SortedSlice<'_, PointOffsetType>,
        new_points: &SortedSlice<'_, PointOffsetType>,
    ) -> OperationResult<()> {
        self.storage.live_reload(fs)?;

        let inner = &mut self.inner;

        for &deleted_point in deleted_points {
            inner.inverted_index.remove(deleted_point);
        }

        self.storage
            .view()
            .read_values::<Sequential, _, OperationError>(
                new_points.iter().map(|&id| ((), id)),
                |_, point_offset, maybe_value: Option<Vec<u8>>| {
                    // A retried reload replays offsets an earlier, failed attempt
                    // already indexed: drop them first so the replay is idempotent.
                    inner.inverted_index.remove(point_offset);
                    let Some(value) = maybe_value else {
                        return Ok(true);
                    };
                    // The stored document is already tokenized, so we replay the
                    // post-tokenization half of `MutableFullTextIndex::add_many`.
                    let doc = FullTextIndex::deserialize_document(&value)?;
                    inner
                        .inverted_index
                        .index_str_tokens(point_offset, doc.tokens, doc.doc_len)?;
                    Ok(true)
                },
                Some(HwMetric::PayloadIndexIoRead),
            )?;

        Ok(())
    }
}
