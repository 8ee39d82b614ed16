use crate::blobstore::Blob;
use crate::common::persisted_hashmap::Key;
use crate::common::sorted_slice::SortedSlice;
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{CachedReadFs, PreloadFuture, UniversalRead, UniversalReadFs};

use super::super::MapIndexKey;
use super::ReadOnlyMapIndex;
use crate::segment::common::operation_error::OperationResult;
use crate::segment::index::field_index::LiveReload;

impl<N: MapIndexKey + Key + ?Sized, S: UniversalRead> LiveReload for ReadOnlyMapIndex<N, S>
where
    Vec<<N as MapIndexKey>::Owned>: Blob + Send + Sync,
{
    type File = S;

    fn live_preload<Fs: CachedReadFs<File = S>>(
        &self,
        fs: &Fs,
    ) -> OperationResult<Vec<PreloadFuture>> {
        match self {
            Self::Appendable(index) => index.live_preload(fs),
            Self::Immutable(index) => index.live_preload(fs),
            Self::OnDisk(index) => index.live_preload(fs),
        }
    }

    fn live_reload<Fs: UniversalReadFs<File = S>>(
        &mut self,
        fs: &Fs,
        deleted_points: &SortedSlice<'_, PointOffsetType>,
        new_points: &SortedSlice<'_, PointOffsetType>,
    ) -> OperationResult<()> {
        match self {
            ReadOnlyMapIndex::Appendable(index) => {
                index.live_reload(fs, deleted_points, new_points)
            }
            ReadOnlyMapIndex::Immutable(index) => index.live_reload(fs, deleted_points, new_points),
            ReadOnlyMapIndex::OnDisk(index) => index.live_reload(fs, deleted_points, new_points),
        }
    }
}
