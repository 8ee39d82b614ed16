use crate::blobstore::Blob;
use crate::blobstore::error::BlobstoreError;
use crate::common::ambient::hw::HwMetric;
use crate::common::generic_consts::Sequential;
use crate::common::sorted_slice::SortedSlice;
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{CachedReadFs, PreloadFuture, UniversalRead, UniversalReadFs};

use crate::segment::common::operation_error::OperationResult;
use crate::segment::index::field_index::LiveReload;
use crate::segment::index::field_index::map_index::MapIndexKey;
use crate::segment::index::field_index::map_index::mutable_map_index::read_only::ReadOnlyAppendableMapIndex;

impl<N: MapIndexKey + ?Sized, S: UniversalRead> LiveReload for ReadOnlyAppendableMapIndex<N, S>
where
    Vec<<N as MapIndexKey>::Owned>: Blob + Send + Sync,
{
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

        let in_memory_index = &mut self.in_memory_index;

        for deleted_point in deleted_points {
            in_memory_index.remove_point(*deleted_point);
        }

        self.storage
            .view()
            .read_values::<Sequential, _, BlobstoreError>(
                new_points.iter().map(|&id| ((), id)),
                |_, point_offset, maybe_values: Option<Vec<_>>| {
                    let values = maybe_values.unwrap_or_default();
                    // A retried reload replays offsets an earlier, failed attempt
                    // already indexed. Re-adding them in place would keep the
                    // inverted postings but leave `point_to_values` empty (the
                    // postings report every value as a duplicate), so drop the
                    // point first to make the replay idempotent.
                    in_memory_index.remove_point(point_offset);
                    in_memory_index.add_many_to_map(point_offset, values);
                    Ok(true)
                },
                Some(HwMetric::PayloadIndexIoRead),
            )?;

        Ok(())
    }
}
