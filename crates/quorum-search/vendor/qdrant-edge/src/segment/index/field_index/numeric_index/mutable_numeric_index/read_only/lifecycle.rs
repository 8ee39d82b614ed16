use std::path::PathBuf;

use crate::blobstore::{Blob, BlobstoreReader};
use crate::common::ambient;
use crate::common::ambient::hw::HwMetric;
use crate::common::bitvec::BitSlice;
use crate::common::reason::reason;
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{CachedReadFs, OkNotFound, Populate, UniversalRead, UniversalReadFs};

use super::super::InMemoryNumericIndex;
use super::ReadOnlyAppendableNumericIndex;
use crate::segment::common::operation_error::{OperationError, OperationResult};
use crate::segment::index::field_index::numeric_index::Encodable;
use crate::segment::index::field_index::numeric_point::Numericable;

impl<T: Encodable + Numericable + Send + Sync + Default, S: UniversalRead>
    ReadOnlyAppendableNumericIndex<T, S>
where
    Vec<T>: Blob,
{
    /// Schedule background prefetch of the Gridstore files [`open`](Self::open)
    /// will read. Returns whether the on-disk directory exists (`false` = the
    /// index is not in the appendable format).
    pub fn preopen(fs: &impl CachedReadFs<File = S>, dir: PathBuf) -> OperationResult<bool> {
        // Blobstore reader
        Ok(
            BlobstoreReader::<Vec<T>, S>::preopen(fs, dir, Populate::PreferBackground)
                .ok_not_found()?
                .is_some(),
        )
    }

    /// Open the appendable (Gridstore) numeric index read-only, threading every
    /// file open through the filesystem handle `fs`.
    ///
    /// Opens a [`BlobstoreReader`] over the generic filesystem object, then
    /// rebuilds the in-memory index by feeding every stored point through
    /// [`InMemoryNumericIndex::add_many_to_list`] — the exact reconstruction the
    /// writable [`MutableNumericIndex::open_gridstore`][1] performs over a
    /// writable `Blobstore`. No write path; the reader is retained for
    /// `files` / `clear_cache`.
    ///
    /// Returns [`Ok(None)`] when the on-disk directory doesn't exist, matching
    /// the `create_if_missing == false` branch of the writable counterpart —
    /// the read path never creates.
    ///
    /// Values at or past `max_point_offset` are skipped, as the id tracker may
    /// not yet cover them.
    ///
    /// [1]: super::super::MutableNumericIndex::open_gridstore
    pub fn open(
        fs: &impl UniversalReadFs<File = S>,
        path: PathBuf,
        max_point_offset: PointOffsetType,
        deleted: &BitSlice,
    ) -> OperationResult<Option<Self>> {
        let Some(storage) =
            BlobstoreReader::<Vec<T>, S>::open(fs, path, Populate::Blocking).ok_not_found()?
        else {
            // Files don't exist, cannot load
            return Ok(None);
        };

        let mut in_memory_index = InMemoryNumericIndex::default();
        let _scope = ambient::unmeasured_guard(reason("Internal operation"));
        storage
            .iter::<_, OperationError>(
                storage.max_point_offset()?.min(max_point_offset),
                |idx, values: Vec<T>| {
                    if deleted.get(idx as usize).is_some_and(|deleted| *deleted) {
                        return Ok(true);
                    }
                    in_memory_index.add_many_to_list(idx, values);
                    Ok(true)
                },
                HwMetric::PayloadIndexIoRead,
            )
            .map_err(|err| {
                OperationError::service_error(format!(
                    "Failed to load read-only appendable numeric index from gridstore: {err}"
                ))
            })?;

        Ok(Some(Self {
            in_memory_index,
            storage,
        }))
    }

    pub fn files(&self) -> Vec<PathBuf> {
        self.storage.files()
    }

    /// Clear gridstore disk cache. Does not affect the in-memory index.
    pub fn clear_cache(&self) -> OperationResult<()> {
        self.storage.clear_cache().map_err(|err| {
            OperationError::service_error(format!(
                "Failed to clear read-only appendable numeric index gridstore cache: {err}"
            ))
        })
    }
}
