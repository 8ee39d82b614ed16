use std::path::PathBuf;

use crate::blobstore::Blobstore;
use crate::blobstore::config::{CreateOptions, DEFAULT_REGION_SIZE_BLOCKS, StorageConfig};
use crate::common::ambient;
use crate::common::ambient::hw::HwMetric;
use crate::common::reason::reason;
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{MmapFs, Populate};

use super::MutableGeoIndex;
use super::inner::InMemoryGeoIndex;
use crate::segment::common::Flusher;
use crate::segment::common::operation_error::{OperationError, OperationResult};
use crate::segment::types::{GeoPoint, RawGeoPoint};

/// Default options for the backing storage
fn storage_options() -> StorageConfig {
    crate::segment::common::blobstore_config::storage_config(CreateOptions {
        // Scale page size down with block size, prevents overhead of first page when there's (almost) no values
        page_size_bytes: size_of::<RawGeoPoint>() * DEFAULT_REGION_SIZE_BLOCKS * 32, // 4 to 8 MiB = block_size * region_blocks * regions,
        // Size of geo point values in index
        block_size_bytes: size_of::<RawGeoPoint>(),
        // Compressing geo point values is unreasonable
        compression: crate::blobstore::config::Compression::None,
    })
}

impl MutableGeoIndex {
    /// Open and load mutable geo index from Gridstore storage
    ///
    /// The `create_if_missing` parameter indicates whether to create a new Gridstore if it does
    /// not exist. If false and files don't exist, the load function will indicate nothing could be
    /// loaded.
    pub fn open(path: PathBuf, create_if_missing: bool) -> OperationResult<Option<Self>> {
        let store = if create_if_missing {
            Blobstore::open_or_create(MmapFs, path, storage_options(), Populate::Blocking).map_err(
                |err| {
                    OperationError::service_error(format!(
                        "failed to open mutable geo index on gridstore: {err}"
                    ))
                },
            )?
        } else if path.exists() {
            Blobstore::open(MmapFs, path, Populate::Blocking).map_err(|err| {
                OperationError::service_error(format!(
                    "failed to open mutable geo index on gridstore: {err}"
                ))
            })?
        } else {
            // Files don't exist, cannot load
            return Ok(None);
        };

        // Load in-memory index from Gridstore
        let mut in_memory_index = InMemoryGeoIndex::new();
        let _scope = ambient::unmeasured_guard(reason("Internal operation"));
        store
            .iter::<_, OperationError>(
                |idx, values: Vec<RawGeoPoint>| {
                    let geo_points = values.into_iter().map(GeoPoint::from).collect::<Vec<_>>();
                    in_memory_index.add_many_geo_points(idx, geo_points)?;
                    Ok(true)
                },
                HwMetric::PayloadIndexIoWrite,
            )
            .map_err(|err| {
                OperationError::service_error(format!(
                    "Failed to load mutable geo index from gridstore: {err}"
                ))
            })?;

        Ok(Some(Self {
            in_memory_index,
            storage: store,
        }))
    }

    #[inline]
    pub(in super::super) fn wipe(self) -> OperationResult<()> {
        self.storage.wipe().map_err(|err| {
            OperationError::service_error(format!("Failed to wipe mutable geo index: {err}"))
        })
    }

    /// Clear cache
    ///
    /// Only clears cache of Gridstore storage if used. Does not clear in-memory representation of
    /// index.
    pub fn clear_cache(&self) -> OperationResult<()> {
        self.storage.clear_cache().map_err(|err| {
            OperationError::service_error(format!(
                "Failed to clear mutable geo index gridstore cache: {err}"
            ))
        })
    }

    #[inline]
    pub(in super::super) fn files(&self) -> Vec<PathBuf> {
        self.storage.files()
    }

    #[inline]
    pub(in super::super) fn flusher(&self) -> Flusher {
        let storage_flusher = self.storage.flusher();
        Box::new(move || storage_flusher().map_err(OperationError::from))
    }

    pub fn add_many_geo_points(
        &mut self,
        idx: PointOffsetType,
        values: Vec<GeoPoint>,
    ) -> OperationResult<()> {
        // Update persisted storage
        if values.is_empty() {
            // An empty value cannot be stored; drop whatever the slot holds
            self.remove_point(idx)?;
        } else {
            let raw_values = values
                .iter()
                .cloned()
                .map(RawGeoPoint::from)
                .collect::<Vec<_>>();
            self.storage
                .put_value(idx, &raw_values, HwMetric::PayloadIndexIoWrite)
                .map_err(|err| {
                    OperationError::service_error(format!(
                        "failed to put value in mutable geo index gridstore: {err}"
                    ))
                })?;
        }

        self.in_memory_index.add_many_geo_points(idx, values)
    }

    pub fn remove_point(&mut self, idx: PointOffsetType) -> OperationResult<()> {
        if !self.in_memory_index.remove_point(idx)? {
            // The slot holds nothing, and there is nothing to delete in the
            // storage either: the two are written in lockstep.
            return Ok(());
        }

        self.storage.delete_value(idx)?;
        Ok(())
    }

    pub fn into_in_memory_index(self) -> InMemoryGeoIndex {
        self.in_memory_index
    }
}
