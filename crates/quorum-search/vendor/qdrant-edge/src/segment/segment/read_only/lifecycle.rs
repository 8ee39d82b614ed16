use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use atomic_refcell::AtomicRefCell;
use crate::common::low_memory::low_memory_mode;
use crate::common::storage_version::{StorageVersion, VERSION_FILE};
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{
    CachedFs, CachedReadFs, FileInfo, Populate, UniversalReadFs, UniversalReadFsAsync,
    read_json_via,
};
use uuid::Uuid;

use super::{ReadOnlySegment, ReadOnlyVectorData};
use crate::segment::common::operation_error::{OperationError, OperationResult, check_process_stopped};
use crate::segment::data_types::load_profile::LoadProfile;
use crate::segment::id_tracker::disk_id_tracker::on_disk_format::i2e_path;
use crate::segment::id_tracker::read_only_tracker_enum::ReadOnlyIdTrackerEnum;
use crate::segment::index::UniversalReadExt;
use crate::segment::index::payload_config::PayloadConfig;
use crate::segment::index::read_only::{ReadOnlyVectorIndexOpenArgs, VectorIndexReadEnum};
use crate::segment::index::struct_payload_index::read_only::ReadOnlyStructPayloadIndex;
use crate::segment::payload_storage::read_only::ReadOnlyPayloadStorage;
use crate::segment::segment::{SEGMENT_STATE_FILE, SegmentVersion};
use crate::segment::segment_constructor::{
    get_payload_index_path, get_vector_index_path, get_vector_storage_path,
};
use crate::segment::types::{
    PayloadStorageType, SegmentConfig, SegmentState, SegmentType, SparseVectorDataConfig,
    VectorDataConfig, VectorName, VectorNameBuf,
};
use crate::segment::vector_storage::VectorStorageRead;
use crate::segment::vector_storage::quantized::quantized_vectors::ReadOnlyQuantizedVectors;
use crate::segment::vector_storage::read_only::VectorStorageReadEnum;
use crate::segment::vector_storage::sparse::read_only::ReadOnlySparseVectorStorage;

fn schedule_static_files<Fs: UniversalReadFsAsync>(cached_fs: &CachedFs<Fs>, segment_path: &Path) {
    // TODO(uio): Schedule static files in advance, after implementing
    // `read_whole_bytes_async`, so that their fetch can overlap with the listing
    // round-trip.
    for path in [
        segment_path.join(VERSION_FILE),
        segment_path.join(SEGMENT_STATE_FILE),
        PayloadConfig::get_config_path(&get_payload_index_path(segment_path)),
    ] {
        cached_fs.schedule_open(&path, None, None);
    }
}

/// Build a per-segment [`CachedReadFs`] over `segment_path`. Schedules statically known files.
fn build_cached_fs<Fs: UniversalReadFsAsync>(
    fs: &Fs,
    segment_path: &Path,
) -> OperationResult<CachedFs<Fs>> {
    futures::executor::block_on(build_cached_fs_async(fs, segment_path))
}

/// Take the segment's listing snapshot without blocking, for
/// [`schedule_open_with_cached_fs`](ReadOnlySegment::schedule_open_with_cached_fs).
/// Callers opening many segments overlap their LIST round-trips.
pub async fn build_cached_fs_async<Fs: UniversalReadFsAsync>(
    fs: &Fs,
    segment_path: &Path,
) -> OperationResult<CachedFs<Fs>> {
    let mut cached_fs = CachedFs::new(fs.clone(), segment_path)?;

    // Probe id-tracker commit marks first, so we have an accurate commit mark available.
    let commit_marks = ReadOnlyIdTrackerEnum::<Fs::File>::commit_mark_paths(segment_path);
    let probed_files = cached_fs.inner().select_files_async(&commit_marks).await?;

    // Schedule other static files to overlap with LIST op.
    schedule_static_files(&cached_fs, segment_path);

    // LIST
    cached_fs.cache_file_info_async().await?;

    // Inject id-tracker probe into cached_fs.
    for path in commit_marks {
        let info = probed_files
            .iter()
            .find(|f| f.path == path)
            .map(FileInfo::from);
        cached_fs.set_file_info(path, info);
    }

    Ok(cached_fs)
}

/// How the payload storage of a segment with `config` is brought into memory.
fn payload_populate(config: &SegmentConfig) -> Populate {
    match config.payload_storage_type {
        PayloadStorageType::InRamMmap => Populate::PreferBackground,
        PayloadStorageType::Mmap => Populate::No,
    }
}

/// Segments of up to this many points preload the id tracker data search
/// reads, unless a placement is configured explicitly.
const ID_TRACKER_PRELOAD_MAX_POINTS: u64 = 1024 * 1024;

/// How the disk-resident id tracker's per-point data is brought into memory;
/// the other tracker formats hold it in RAM regardless.
///
/// A cold default placement preloads what search reads (`Populate::Auto`:
/// `i2e` and versions, not `e2i`) in segments of up to
/// [`ID_TRACKER_PRELOAD_MAX_POINTS`], sized from the listing snapshot.
fn id_tracker_populate(
    config: &SegmentConfig,
    fs: &impl CachedReadFs,
    segment_path: &Path,
) -> Populate {
    let memory = config.id_tracker_memory_placement().clamp_to_low_memory();
    if memory.populate_on_open() {
        return Populate::PreferBackground;
    }
    let is_small = fs
        .cached_file_info(&i2e_path(segment_path))
        .is_some_and(|info| info.size / size_of::<u128>() as u64 <= ID_TRACKER_PRELOAD_MAX_POINTS);
    if config.id_tracker_memory.is_none() && !low_memory_mode().skip_populate() && is_small {
        Populate::Auto
    } else {
        Populate::No
    }
}

/// How one sparse vector's storage is brought into memory. Search never reads
/// it, so it normally stays cold — except when the (non-persisted) mutable-RAM
/// sparse index is configured: that index is rebuilt from the storage at open,
/// reading it in full, so the storage is warmed in the background.
pub(super) fn sparse_storage_populate(sparse_vector_config: &SparseVectorDataConfig) -> Populate {
    if sparse_vector_config.index.index_type.is_persisted() {
        Populate::No
    } else {
        Populate::PreferBackground
    }
}

impl<S: UniversalReadExt<Fs: UniversalReadFsAsync> + 'static> ReadOnlySegment<S> {
    /// Open the segment over a per-segment [`CachedReadFs`]: known files are
    /// prefetched before the listing snapshot is taken (see
    /// [`build_cached_fs`]), and probes for optional files resolve against
    /// the snapshot, without inner-filesystem round-trips.
    ///
    /// A `load_profile` — derived from the one request this open serves —
    /// overrides the config-derived placement of the components that request
    /// does not touch, parking them cold instead of warming them (see
    /// [`LoadProfile`]). Without one, every component loads as the persisted
    /// segment config says.
    ///
    /// Not cancellable; see [`schedule_open`](Self::schedule_open).
    pub fn open(
        fs: &S::Fs,
        segment_path: &Path,
        uuid: Uuid,
        deferred_internal_id: Option<PointOffsetType>,
        load_profile: Option<&LoadProfile>,
    ) -> OperationResult<Self> {
        Self::schedule_open(
            fs,
            segment_path,
            uuid,
            deferred_internal_id,
            load_profile,
            &AtomicBool::new(false),
        )?
        .finish(fs)
    }

    /// Stage an open without assembling the segment: take the listing snapshot
    /// and put every fetch the open needs in flight. Callers opening many
    /// segments overlap their IO ([`StagedSegmentOpen::wait`]) before
    /// assembling each one ([`StagedSegmentOpen::finish`]).
    ///
    /// Cancellation is cooperative: `is_stopped` is checked between the
    /// components staged here and, carried by the returned handle, between the
    /// components [`finish`](StagedSegmentOpen::finish) assembles. A set flag
    /// yields [`OperationError::Cancelled`] and never a partially opened
    /// segment. A single component's staging, the IO wait, or one component's
    /// assembly is indivisible and can delay the observation. The flag is never
    /// set or reset here.
    pub fn schedule_open<'a>(
        fs: &S::Fs,
        segment_path: &Path,
        uuid: Uuid,
        deferred_internal_id: Option<PointOffsetType>,
        load_profile: Option<&'a LoadProfile>,
        is_stopped: &'a AtomicBool,
    ) -> OperationResult<StagedSegmentOpen<'a, S>> {
        check_process_stopped(is_stopped)?;
        let fs = build_cached_fs(fs, segment_path)?;
        Self::schedule_open_with_cached_fs(
            fs,
            segment_path,
            uuid,
            deferred_internal_id,
            load_profile,
            is_stopped,
        )
    }

    /// [`schedule_open`](Self::schedule_open) over a snapshot already taken by
    /// [`build_cached_fs_async`].
    pub fn schedule_open_with_cached_fs<'a>(
        fs: CachedFs<S::Fs>,
        segment_path: &Path,
        uuid: Uuid,
        deferred_internal_id: Option<PointOffsetType>,
        load_profile: Option<&'a LoadProfile>,
        is_stopped: &'a AtomicBool,
    ) -> OperationResult<StagedSegmentOpen<'a, S>> {
        check_process_stopped(is_stopped)?;
        let (config, payload_config) =
            Self::first_preopen(&fs, segment_path, load_profile, is_stopped)?;
        Ok(StagedSegmentOpen {
            fs,
            segment_path: segment_path.to_path_buf(),
            uuid,
            deferred_internal_id,
            config,
            payload_config,
            load_profile,
            is_stopped,
        })
    }

    /// Schedule the prefetch of every file the segment's components will open,
    /// returning the configs parsed along the way so [`open_via`](Self::open_via)
    /// does not have to read them a second time.
    fn first_preopen(
        fs: &impl CachedReadFs<File = S>,
        segment_path: &Path,
        load_profile: Option<&LoadProfile>,
        is_stopped: &AtomicBool,
    ) -> OperationResult<(SegmentConfig, PayloadConfig)> {
        let SegmentState {
            initial_version: _,
            version: _,
            config,
        } = read_json_via(fs, segment_path.join(SEGMENT_STATE_FILE))?;
        check_process_stopped(is_stopped)?;

        // Payload storage
        let payload_storage_populate = load_profile
            .and_then(|profile| profile.payload_storage_placement())
            .unwrap_or_else(|| payload_populate(&config));
        ReadOnlyPayloadStorage::preopen(fs, segment_path.to_path_buf(), payload_storage_populate)?;
        check_process_stopped(is_stopped)?;

        // Id tracker; always loaded — every request resolves ids through it.
        ReadOnlyIdTrackerEnum::preopen(
            fs,
            segment_path,
            id_tracker_populate(&config, fs, segment_path),
        )?;

        // Vector storages
        for (vector_name, vector_config) in &config.vector_data {
            check_process_stopped(is_stopped)?;
            let path = get_vector_storage_path(segment_path, vector_name);
            let index_path = get_vector_index_path(segment_path, vector_name);
            let storage_populate =
                load_profile.and_then(|profile| profile.vector_storage_placement(vector_name));
            VectorStorageReadEnum::<S>::preopen(
                fs,
                vector_config,
                &path,
                &index_path,
                storage_populate,
            )?;
            check_process_stopped(is_stopped)?;

            // Quantized vectors live in the vector storage directory; a no-op
            // when quantization isn't configured for this vector.
            let quantized_populate =
                load_profile.and_then(|profile| profile.quantized_vectors_placement(vector_name));
            ReadOnlyQuantizedVectors::<S>::preopen(fs, &path, vector_config, quantized_populate)?;
            check_process_stopped(is_stopped)?;

            // Vector index. A cold override defers the HNSW graph load (see
            // `LoadProfile::vector_index_placement`), so only its config is
            // prefetched.
            let index_populate =
                load_profile.and_then(|profile| profile.vector_index_placement(vector_name));
            VectorIndexReadEnum::<S>::preopen(fs, vector_config, &index_path, index_populate)?;
        }
        for (vector_name, sparse_vector_config) in &config.sparse_vector_data {
            check_process_stopped(is_stopped)?;
            let path = get_vector_storage_path(segment_path, vector_name);
            ReadOnlySparseVectorStorage::<S>::preopen(
                fs,
                &path,
                sparse_storage_populate(sparse_vector_config),
            )?;
            check_process_stopped(is_stopped)?;

            // Sparse vector index; the sparse open reads lazily, so a profile
            // that never scores this vector just parks the index data cold.
            let index_populate =
                load_profile.and_then(|profile| profile.vector_index_placement(vector_name));
            let index_path = get_vector_index_path(segment_path, vector_name);
            VectorIndexReadEnum::<S>::preopen_sparse(
                fs,
                sparse_vector_config,
                &index_path,
                index_populate,
            )?;
        }

        // Payload indexes
        check_process_stopped(is_stopped)?;
        let payload_config = ReadOnlyStructPayloadIndex::preopen(
            fs,
            &get_payload_index_path(segment_path),
            load_profile,
        )?;

        Ok((config, payload_config))
    }

    /// Read-only mirror of `load_segment`: assembles every read-only component
    /// from `fs` (id tracker, payload storage+index, per-vector storage/index). No writes.
    ///
    /// `fs` is the per-segment caching filesystem, whose opens are served from
    /// its prefetch pool; the segment retains it for live reloads (see
    /// [`ReadOnlySegment::reload_fs`]). `raw_fs` is the canonical backend, for
    /// the components that store a filesystem handle to read files after this
    /// open (the appendable id tracker's re-opens, the HNSW index's deferred
    /// graph load): a caching wrapper's snapshot would go stale.
    ///
    /// `config` and `payload_config` are the ones
    /// [`first_preopen`](Self::first_preopen) already parsed off `fs`, and
    /// `load_profile` is the profile that preopen already applied — the opens
    /// here must make the same placement decisions the prefetches did.
    ///
    /// `is_stopped` is checked between components; see
    /// [`schedule_open`](Self::schedule_open).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open_via(
        mut fs: CachedFs<S::Fs>,
        raw_fs: &S::Fs,
        segment_path: &Path,
        config: SegmentConfig,
        payload_config: PayloadConfig,
        uuid: Uuid,
        deferred_internal_id: Option<PointOffsetType>,
        load_profile: Option<&LoadProfile>,
        is_stopped: &AtomicBool,
    ) -> OperationResult<Self> {
        check_process_stopped(is_stopped)?;
        futures::executor::block_on(fs.wait_all());
        check_process_stopped(is_stopped)?;

        if SegmentVersion::load_universal(&fs, segment_path)?.is_none() {
            // `FileNotFound`, not a service error: the version file is written last, so
            // its absence means the segment vanished mid-open (or was never completed) —
            // a follower resolves that against the segment manifest.
            return Err(OperationError::FileNotFound {
                path: segment_path.join(VERSION_FILE),
            });
        }

        let is_appendable = config.is_appendable();
        let deferred_internal_id = deferred_internal_id
            .or_else(|| load_profile.and_then(|profile| profile.deferred_internal_id(&config)))
            .filter(|_| is_appendable);

        let payload_storage_populate = load_profile
            .and_then(|profile| profile.payload_storage_placement())
            .unwrap_or_else(|| payload_populate(&config));
        let payload_storage = Arc::new(AtomicRefCell::new(ReadOnlyPayloadStorage::open(
            &fs,
            segment_path.to_path_buf(),
            payload_storage_populate,
        )?));
        check_process_stopped(is_stopped)?;

        // Detect the persisted format by attempting each format's open (no
        // per-file `exists` round-trips — important for object-storage backends).
        let max_committed_offset =
            ReadOnlyIdTrackerEnum::<S>::max_committed_offset(&fs, segment_path);
        let id_tracker = Arc::new(AtomicRefCell::new(ReadOnlyIdTrackerEnum::detect_and_load(
            &fs,
            segment_path,
            deferred_internal_id,
            max_committed_offset,
            id_tracker_populate(&config, &fs, segment_path),
        )?));

        // Open all vector storages up front: the payload index needs them.
        let mut vector_storages: HashMap<
            VectorNameBuf,
            Arc<AtomicRefCell<VectorStorageReadEnum<S>>>,
        > = HashMap::new();
        for (vector_name, vector_config) in &config.vector_data {
            check_process_stopped(is_stopped)?;
            let path = get_vector_storage_path(segment_path, vector_name);
            let storage_populate =
                load_profile.and_then(|profile| profile.vector_storage_placement(vector_name));
            let index_path = get_vector_index_path(segment_path, vector_name);
            let opened = VectorStorageReadEnum::open(
                &fs,
                vector_config,
                &path,
                &index_path,
                storage_populate,
            )?;
            let storage = opened.ok_or_else(|| {
                OperationError::service_error(format!(
                    "Read-only dense vector storage '{vector_name}' was not found, or is corrupted.",
                ))
            })?;
            vector_storages.insert(vector_name.clone(), Arc::new(AtomicRefCell::new(storage)));
        }
        for (vector_name, sparse_vector_config) in &config.sparse_vector_data {
            check_process_stopped(is_stopped)?;
            let path = get_vector_storage_path(segment_path, vector_name);
            let storage =
                VectorStorageReadEnum::Sparse(Box::new(ReadOnlySparseVectorStorage::open(
                    &fs,
                    &path,
                    sparse_storage_populate(sparse_vector_config),
                )?));
            vector_storages.insert(vector_name.clone(), Arc::new(AtomicRefCell::new(storage)));
        }

        check_process_stopped(is_stopped)?;
        let payload_index = Arc::new(AtomicRefCell::new(ReadOnlyStructPayloadIndex::open(
            &fs,
            payload_storage.clone(),
            id_tracker.clone(),
            vector_storages.clone(),
            &get_payload_index_path(segment_path),
            payload_config,
            load_profile,
        )?));

        let mut vector_data = HashMap::new();
        for (vector_name, vector_config) in &config.vector_data {
            check_process_stopped(is_stopped)?;
            let vector_storage = vector_storages.remove(vector_name).unwrap();
            let data = ReadOnlyVectorData::open_dense(
                &fs,
                raw_fs,
                segment_path,
                vector_name,
                vector_config,
                &config,
                id_tracker.clone(),
                payload_index.clone(),
                vector_storage,
                load_profile,
            )?;
            vector_data.insert(vector_name.clone(), data);
        }
        for (vector_name, sparse_vector_config) in &config.sparse_vector_data {
            check_process_stopped(is_stopped)?;
            let vector_storage = vector_storages.remove(vector_name).unwrap();
            let data = ReadOnlyVectorData::open_sparse(
                &fs,
                segment_path,
                vector_name,
                sparse_vector_config,
                id_tracker.clone(),
                payload_index.clone(),
                vector_storage,
                load_profile,
            )?;
            vector_data.insert(vector_name.clone(), data);
        }

        let segment_type = if config.is_any_vector_indexed() {
            SegmentType::Indexed
        } else {
            SegmentType::Plain
        };

        check_process_stopped(is_stopped)?;
        fs.rotate_cache_file_info();

        Ok(Self {
            uuid,
            segment_path: segment_path.to_path_buf(),
            id_tracker,
            vector_data,
            payload_index,
            payload_storage,
            pending_reload: AtomicRefCell::new(Default::default()),
            reload_fs: AtomicRefCell::new(fs),
            segment_type,
            segment_config: config,
        })
    }
}

/// An open staged by [`ReadOnlySegment::schedule_open`]: prefetches in flight,
/// segment not yet assembled.
pub struct StagedSegmentOpen<'a, S: UniversalReadExt + 'static> {
    fs: CachedFs<S::Fs>,
    segment_path: PathBuf,
    uuid: Uuid,
    deferred_internal_id: Option<PointOffsetType>,
    config: SegmentConfig,
    payload_config: PayloadConfig,
    load_profile: Option<&'a LoadProfile>,
    is_stopped: &'a AtomicBool,
}

impl<'a, S: UniversalReadExt<Fs: UniversalReadFsAsync> + 'static> StagedSegmentOpen<'a, S> {
    /// Drive the staged fetches to completion. Detached (`use<S>`), so many
    /// segments' waits can be collected and awaited together.
    pub fn wait(&self) -> impl Future<Output = ()> + Send + 'static + use<S> {
        self.fs.wait_all()
    }

    /// Assemble the segment from the staged handles. Fetches not already
    /// resolved via [`Self::wait`] are driven to completion here.
    ///
    /// Checks the stop flag given to [`ReadOnlySegment::schedule_open`]
    /// between components.
    pub fn finish(self, raw_fs: &S::Fs) -> OperationResult<ReadOnlySegment<S>> {
        let Self {
            fs,
            segment_path,
            uuid,
            deferred_internal_id,
            config,
            payload_config,
            load_profile,
            is_stopped,
        } = self;
        ReadOnlySegment::open_via(
            fs,
            raw_fs,
            &segment_path,
            config,
            payload_config,
            uuid,
            deferred_internal_id,
            load_profile,
            is_stopped,
        )
    }
}

impl<S: UniversalReadExt<Fs: UniversalReadFsAsync> + 'static> ReadOnlyVectorData<S> {
    /// Open one dense vector's quantized vectors and index over `fs`, mirroring
    /// `open_dense_vector_data`. No `prefill`: read-only never writes.
    /// `load_profile` mirrors the preopen's per-vector placement decisions.
    /// `raw_fs` is the segment's raw backend, retained by the HNSW index for
    /// a deferred graph load (the caching `fs` only lives for this open).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn open_dense(
        fs: &impl UniversalReadFs<File = S>,
        raw_fs: &S::Fs,
        segment_path: &Path,
        vector_name: &VectorName,
        vector_config: &VectorDataConfig,
        segment_config: &SegmentConfig,
        id_tracker: Arc<AtomicRefCell<ReadOnlyIdTrackerEnum<S>>>,
        payload_index: Arc<AtomicRefCell<ReadOnlyStructPayloadIndex<S>>>,
        vector_storage: Arc<AtomicRefCell<VectorStorageReadEnum<S>>>,
        load_profile: Option<&LoadProfile>,
    ) -> OperationResult<Self> {
        let vector_storage_path = get_vector_storage_path(segment_path, vector_name);
        let vector_index_path = get_vector_index_path(segment_path, vector_name);

        let quantized_vectors = if segment_config.quantization_config(vector_name).is_some() {
            let (distance, datatype, on_disk) = {
                let storage = vector_storage.borrow();
                (storage.distance(), storage.datatype(), storage.is_cold())
            };
            let quantized_populate =
                load_profile.and_then(|profile| profile.quantized_vectors_placement(vector_name));
            ReadOnlyQuantizedVectors::open(
                fs,
                &vector_storage_path,
                distance,
                datatype,
                vector_config.multivector_config.as_ref(),
                on_disk,
                quantized_populate,
            )?
        } else {
            None
        };
        let quantized_vectors = Arc::new(AtomicRefCell::new(quantized_vectors));

        // A profile that never scores this vector overrides the placement
        // cold, which defers the HNSW graph load to its first use (see
        // `LoadProfile::vector_index_placement`); the plain index has no
        // graph, so there is nothing to defer.
        let index_populate =
            load_profile.and_then(|profile| profile.vector_index_placement(vector_name));
        let vector_index = VectorIndexReadEnum::open(
            vector_config,
            ReadOnlyVectorIndexOpenArgs {
                fs,
                path: &vector_index_path,
                id_tracker,
                vector_storage: vector_storage.clone(),
                payload_index,
                quantized_vectors: quantized_vectors.clone(),
            },
            raw_fs,
            index_populate,
        )?;
        let vector_index = Arc::new(AtomicRefCell::new(vector_index));

        Ok(Self {
            vector_index,
            vector_storage,
            quantized_vectors,
        })
    }

    /// Open one sparse vector's index over `fs`, mirroring
    /// `open_sparse_vector_data`. Sparse vectors are never quantized.
    /// `load_profile` mirrors the preopen's per-vector placement decisions.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn open_sparse(
        fs: &impl UniversalReadFs<File = S>,
        segment_path: &Path,
        vector_name: &VectorName,
        sparse_vector_config: &SparseVectorDataConfig,
        id_tracker: Arc<AtomicRefCell<ReadOnlyIdTrackerEnum<S>>>,
        payload_index: Arc<AtomicRefCell<ReadOnlyStructPayloadIndex<S>>>,
        vector_storage: Arc<AtomicRefCell<VectorStorageReadEnum<S>>>,
        load_profile: Option<&LoadProfile>,
    ) -> OperationResult<Self> {
        let vector_index_path = get_vector_index_path(segment_path, vector_name);
        let quantized_vectors = Arc::new(AtomicRefCell::new(None));

        // The sparse open reads lazily, so a profile that never scores this
        // vector just parks the index data cold — no deferral needed (see
        // `LoadProfile::vector_index_placement`).
        let index_populate =
            load_profile.and_then(|profile| profile.vector_index_placement(vector_name));
        let vector_index = VectorIndexReadEnum::open_sparse(
            sparse_vector_config,
            ReadOnlyVectorIndexOpenArgs {
                fs,
                path: &vector_index_path,
                id_tracker,
                vector_storage: vector_storage.clone(),
                payload_index,
                quantized_vectors: quantized_vectors.clone(),
            },
            index_populate,
        )?;
        let vector_index = Arc::new(AtomicRefCell::new(vector_index));

        Ok(Self {
            vector_index,
            vector_storage,
            quantized_vectors,
        })
    }
}
