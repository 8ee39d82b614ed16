#[cfg(test)]
mod tests;

use std::path::Path;

use crate::blobstore::config::LogstoreConfig;
use crate::common::ambient::hw::HwMetric;
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{UniversalAppend, UniversalAppendFs};

use crate::segment::common::operation_error::OperationResult;
use crate::segment::common::update_only_blobstore::UpdateOnlyBlobstore;
use crate::segment::payload_storage::payload_storage_impl::storage_dir;
use crate::segment::types::Payload;

/// The write half of the payload storage for an update-only segment: a
/// short-lived writer opened for one batch and dropped with it.
///
/// The payload half of the same storage [`PayloadStorageImpl`][1] writes, in
/// its append-only mode, so a slot's payload is written once and never
/// rewritten. [`append_many`](Self::append_many) flushes what it wrote, so a
/// batch is durable when it returns and there is nothing to flush across calls.
///
/// [1]: crate::payload_storage::payload_storage_impl::PayloadStorageImpl
pub struct UpdateOnlyPayloadStorage<S: UniversalAppend + 'static> {
    storage: UpdateOnlyBlobstore<Payload, S>,
}

impl<S: UniversalAppend + 'static> UpdateOnlyPayloadStorage<S> {
    /// Open the payload storage of the segment at `segment_path` for appending,
    /// creating it if the segment has none yet — the append-only counterpart of
    /// [`PayloadStorageImpl::open_or_create`][1].
    ///
    /// A segment whose payload storage was created in mutable mode is rejected:
    /// its file format is not one this writer can append to.
    ///
    /// [1]: crate::payload_storage::payload_storage_impl::PayloadStorageImpl::open_or_create
    pub fn open(
        fs: &impl UniversalAppendFs<AppendFile = S>,
        segment_path: &Path,
    ) -> OperationResult<Self> {
        let storage =
            UpdateOnlyBlobstore::open(fs, &storage_dir(segment_path), LogstoreConfig::DEFAULT)?;

        Ok(Self { storage })
    }

    /// Store one payload per point of a batch, each at the slot the ID tracker
    /// claimed for it, and persist them.
    ///
    /// The slots must come in increasing order and must all be above every slot
    /// this storage already holds a payload for: it is append-only, so a slot
    /// that was written cannot be written again. Slots skipped in between stay
    /// empty for good.
    ///
    /// A point with an empty payload is not stored at all, its slot is skipped:
    /// an unwritten slot already reads back as an empty payload.
    pub fn append_many<'a>(
        &mut self,
        fs: &impl UniversalAppendFs<AppendFile = S>,
        payloads: impl IntoIterator<Item = (PointOffsetType, &'a Payload)>,
    ) -> OperationResult<()> {
        for (internal_id, payload) in payloads {
            if payload.is_empty() {
                continue;
            }

            self.storage
                .put(fs, internal_id, payload, HwMetric::PayloadIoWrite)?;
        }

        // Puts only buffer, the flush is what makes them durable.
        self.storage.flush()
    }
}
