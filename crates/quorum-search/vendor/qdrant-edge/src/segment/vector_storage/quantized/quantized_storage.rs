use std::borrow::Cow;
use std::io::BufWriter;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common::generic_consts::{AccessPattern, Random, Sequential};
use crate::common::maybe_uninit::maybe_uninit_fill_from;
use crate::common::mmap::{AdviceSetting, Flusher, advice};
use crate::common::prefetch::{
    MAX_UNPREFETCHED_BATCH, MIN_PREFETCH_STORAGE_BYTES, prefetch_slice, prefetch_slice_l2,
    prefetch_windows,
};
use crate::common::types::PointOffsetType;
use crate::common::universal_io::{
    CachedReadFs, MmapFile, MmapFs, OpenOptions, Populate, ReadOnly, ReadRange, UioResult,
    UniversalKind, UniversalRead, UniversalReadFs,
};
use fs_err as fs;
use memmap2::MmapMut;
use crate::quantization::encoded_storage::{ConsecutiveRun, consecutive_runs};

use crate::segment::common::operation_error::{OperationError, OperationResult};
use crate::segment::vector_storage::common::VECTOR_READ_BATCH_SIZE;
use crate::segment::vector_storage::query_scorer::is_read_with_prefetch_efficient;

#[derive(Debug)]
pub struct QuantizedStorage<S: UniversalRead> {
    storage: ReadOnly<S>,
    quantized_vector_size: NonZeroUsize,
    path: PathBuf,
    /// Whether the page cache is left to fill on demand: set until [`Self::populate`]
    /// primes it, and again after [`Self::clear_cache`] drops it.
    cold: AtomicBool,
}

impl<S: UniversalRead> QuantizedStorage<S> {
    pub fn populate(&self) {
        match self.storage.populate() {
            Ok(()) => self.cold.store(false, Ordering::Relaxed),
            Err(err) => log::warn!("Failed to populate quantized storage: {err}"),
        }
    }

    pub fn clear_cache(&self) {
        let Self {
            storage: mmap,
            quantized_vector_size: _,
            path: _,
            cold,
        } = self;
        cold.store(true, Ordering::Relaxed);
        if let Err(err) = mmap.clear_ram_cache() {
            log::warn!("Failed to clear quantized storage RAM cache: {err}")
        }
    }
}

impl<S: UniversalRead> QuantizedStorage<S> {
    /// Open the backing file for build-time bulk appends, bypassing the read-only handle.
    pub(crate) fn open_appender(&self) -> std::io::Result<BufWriter<fs::File>> {
        Ok(BufWriter::new(open_append(&self.path)?))
    }

    /// Reopen after the file grew so reads observe appended vectors. Build-time only.
    pub(crate) fn reload(&mut self) -> OperationResult<()> {
        self.storage.live_reload()?;
        Ok(())
    }

    /// Read one vector with the given access pattern.
    fn read_vector<P: AccessPattern>(&self, key: PointOffsetType) -> UioResult<Cow<'_, [u8]>> {
        let size = self.quantized_vector_size.get() as u64;
        self.storage
            .read(ReadRange::new(size * u64::from(key), size), P::default())
    }

    /// Run `f` for each vector in the batch, batching the underlying reads.
    ///
    /// Async-capable backends (io_uring) get the whole batch submitted in one
    /// go; mmap-style backends fetch a batch first and then run `f` over it,
    /// which is more cache friendly than interleaving fetch and use.
    pub fn for_each_in_batch<F: FnMut(usize, &[u8])>(
        &self,
        keys: &[PointOffsetType],
        mut f: F,
    ) -> OperationResult<()> {
        if S::kind().can_be_async() {
            let size = self.quantized_vector_size.get() as u64;
            let ranges = keys.iter().enumerate().map(|(idx, &key)| {
                let range = ReadRange {
                    byte_offset: size * u64::from(key),
                    length: size,
                };
                (idx, range)
            });

            let callback = |idx, bytes: &[u8]| {
                f(idx, bytes);
                UioResult::Ok(())
            };

            // Access pattern does not matter for io_uring.
            self.storage.read_batch(ranges, Random, callback)?;
            return Ok(());
        }

        let mut vectors_buffer = [const { MaybeUninit::uninit() }; VECTOR_READ_BATCH_SIZE];
        let (near, far) = prefetch_windows(self.quantized_vector_size.get());

        // A storage small enough to stay cache-resident has nothing to fetch,
        // so the hints are pure overhead; skip them. On the rare chance the
        // size lookup fails, treat the storage as large and keep prefetching.
        let storage_bytes = self.storage.len::<u8>().unwrap_or(u64::MAX) as usize;
        let storage_fits_cache = storage_bytes < MIN_PREFETCH_STORAGE_BYTES;

        let read_vector = |key, sequential| {
            if sequential {
                self.read_vector::<Sequential>(key)
            } else {
                self.read_vector::<Random>(key)
            }
        };

        for (batch_idx, keys) in keys.chunks(VECTOR_READ_BATCH_SIZE).enumerate() {
            let sequential = is_read_with_prefetch_efficient(keys);
            let mut failed = None;
            let iter = keys.iter().map(|&key| {
                read_vector(key, sequential).unwrap_or_else(|err| {
                    failed.get_or_insert(err);
                    Cow::Borrowed(&[])
                })
            });
            let vectors = maybe_uninit_fill_from(&mut vectors_buffer, iter).0;
            if let Some(err) = failed {
                return Err(err.into());
            }

            let batch_offset = VECTOR_READ_BATCH_SIZE * batch_idx;

            // Dense-ascending batches stream and cache-resident storages are
            // already hot; the hardware prefetcher covers both and software
            // prefetch is pure overhead.
            if sequential || storage_fits_cache || vectors.len() <= MAX_UNPREFETCHED_BATCH {
                for (vector_idx, vector) in vectors.iter().enumerate() {
                    f(batch_offset + vector_idx, vector);
                }
            } else {
                // The gathered `vectors` are borrowed straight from the mmap,
                // so nothing has touched the bytes yet; without prefetch the
                // scorer stalls on DRAM at the start of every cold vector.
                for vector in vectors.iter().take(far).skip(near) {
                    prefetch_slice_l2(vector);
                }
                for vector in vectors.iter().take(near) {
                    prefetch_slice(vector);
                }

                for (vector_idx, vector) in vectors.iter().enumerate() {
                    if far > 0
                        && let Some(upcoming) = vectors.get(vector_idx + far)
                    {
                        prefetch_slice_l2(upcoming);
                    }
                    if let Some(upcoming) = vectors.get(vector_idx + near) {
                        prefetch_slice(upcoming);
                    }
                    f(batch_offset + vector_idx, vector);
                }
            }
        }

        Ok(())
    }
}

/// Open a file shortly for appending.
fn open_append(path: &Path) -> std::io::Result<fs::File> {
    fs::OpenOptions::new().append(true).open(path)
}

pub struct QuantizedStorageBuilder<S> {
    mmap: MmapMut,
    cursor_pos: usize,
    quantized_vector_size: NonZeroUsize,
    path: PathBuf,
    output_storage: PhantomData<S>,
}

impl<S: UniversalRead> QuantizedStorage<S> {
    fn open_options(populate: Populate) -> OpenOptions {
        OpenOptions {
            writeable: false,
            need_sequential: false,
            populate,
            advice: AdviceSetting::Global,
        }
    }

    /// Schedule background prefetch of the data file [`Self::from_file`] reads.
    ///
    /// The storage reads lazily through its mmap-style handle; `populate`
    /// warms the parked handle for the `cached` memory placement.
    pub fn preopen(fs: &impl CachedReadFs<File = S>, path: &Path, populate: Populate) {
        fs.schedule_open(path, Some(Self::open_options(populate)), None)
    }

    pub fn from_file(
        fs: &impl UniversalReadFs<File = S>,
        path: &Path,
        quantized_vector_size: usize,
    ) -> OperationResult<QuantizedStorage<S>> {
        let storage = ReadOnly::open(
            fs,
            path,
            Self::open_options(Populate::No),
            Default::default(),
        )?;

        let quantized_vector_size = NonZeroUsize::new(quantized_vector_size).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "`quantized_vector_size` must be non-zero",
            )
        })?;
        let len = storage.len::<u8>()? as usize;
        if !len.is_multiple_of(quantized_vector_size.get()) {
            return Err(OperationError::inconsistent_storage(format!(
                "Encoded file size ({len}) is not a multiple of quantized_vector_size ({quantized_vector_size})",
            )));
        }
        Ok(Self {
            storage,
            quantized_vector_size,
            path: path.to_path_buf(),
            cold: AtomicBool::new(true),
        })
    }

    /// Open the encoded vectors at `path`, creating an empty storage if the file does not yet exist.
    pub fn open(
        fs: &S::Fs,
        path: &Path,
        quantized_vector_size: usize,
        prefault: bool,
    ) -> OperationResult<QuantizedStorage<S>> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }

        // Ensure the backing file exists without clobbering existing data:
        // `from_file` mmaps the file read-only and fails if it is missing.
        fs_err::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;

        let storage = Self::from_file(fs, path, quantized_vector_size)?;

        if prefault {
            storage.populate();
        }

        Ok(storage)
    }
}

impl<S: UniversalRead> crate::quantization::EncodedStorageWrite for QuantizedStorage<S> {
    fn upsert_vector(&mut self, _id: PointOffsetType, _vector: &[u8]) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "Cannot upsert vector in mmap storage",
        ))
    }

    fn is_in_ram_or_mmap() -> bool {
        true
    }

    fn is_cold(&self) -> bool {
        self.cold.load(Ordering::Relaxed)
    }

    fn vectors_count(&self) -> usize {
        self.storage.len::<u8>().unwrap_or(0) as usize / self.quantized_vector_size.get()
    }

    fn flusher(&self) -> Flusher {
        // Mmap storage does not need a flusher, as it is non-appendable and already backed by a file.
        Box::new(|| Ok(()))
    }

    fn heap_size_bytes(&self) -> usize {
        let Self {
            storage: _,
            quantized_vector_size: _,
            path: _,
            cold: _,
        } = self;

        0
    }
}

impl<S: UniversalRead> crate::quantization::EncodedStorage for QuantizedStorage<S> {
    fn prefers_contiguous_reads() -> bool {
        // Exhaustive on purpose: a new backend must decide here rather than
        // inherit whichever answer a wildcard happened to give it.
        match S::kind() {
            // Measured: with the data in the page cache, per-request
            // submission and completion bookkeeping dominates, so one
            // contiguous-slice read beats the batched per-vector path at every
            // density.
            UniversalKind::IoUring => true,
            // Random access is cheap; run batching pays only for long enough
            // runs, which the caller gates on.
            UniversalKind::Mmap => false,
            // Local caches over a slower backing store. Plausibly the same
            // story as io_uring, but unmeasured, so they keep the gate.
            UniversalKind::DiskCache
            | UniversalKind::SimpleDiskCache
            | UniversalKind::CachedBlob => false,
            // Remote: per-vector reads pipeline across a batch, while
            // contiguous-slice reads would serialize the round trips.
            UniversalKind::S3
            | UniversalKind::Gcs
            | UniversalKind::Azure
            | UniversalKind::UioGrpc => false,
        }
    }

    fn get_vector_data(&self, index: PointOffsetType) -> Cow<'_, [u8]> {
        self.get_vector_data_opt(index).expect("vector exists")
    }

    fn get_vector_data_opt(&self, index: PointOffsetType) -> Option<Cow<'_, [u8]>> {
        let start = (self.quantized_vector_size.get() * index as usize) as u64;
        let length = self.quantized_vector_size.get() as u64;
        self.storage
            .read(ReadRange::new(start, length), Random)
            .ok()
    }

    fn for_each_batch(
        &self,
        offsets: &[PointOffsetType],
        mut callback: impl FnMut(usize, Cow<'_, [u8]>),
    ) -> std::io::Result<()> {
        self.for_each_in_batch(offsets, |idx, data| callback(idx, Cow::Borrowed(data)))
            .map_err(std::io::Error::other)
    }

    fn for_each_run(
        &self,
        offsets: &[PointOffsetType],
        mut callback: impl FnMut(usize, usize, Cow<'_, [u8]>),
    ) -> std::io::Result<()> {
        let size = self.quantized_vector_size.get() as u64;
        let range = |run: &ConsecutiveRun| {
            ReadRange::new(size * u64::from(run.start), size * run.len as u64)
        };

        if S::kind().can_be_async() {
            // Pipelined backends (io_uring): keep every run of the batch in
            // flight together — still one read per run — so scattered ids
            // don't wait on each read before submitting the next.  Runs come
            // back in completion order; the access pattern is ignored.
            let runs = consecutive_runs(offsets).map(|run| ((run.first, run.len), range(&run)));
            return self
                .storage
                .read_batch(runs, Random, |(first, len), bytes: &[u8]| {
                    callback(first, len, Cow::Borrowed(bytes));
                    UioResult::Ok(())
                })
                .map_err(std::io::Error::other);
        }

        // Mmap serves a run from either of two mappings; the sequential one
        // has the kernel read ahead, which only a multi-vector run repays.
        for run in consecutive_runs(offsets) {
            let bytes = if run.len > 1 {
                self.storage.read(range(&run), Sequential)
            } else {
                self.storage.read(range(&run), Random)
            };
            let bytes = bytes.map_err(std::io::Error::other)?;
            callback(run.first, run.len, bytes);
        }
        Ok(())
    }

    fn files(&self) -> Vec<PathBuf> {
        vec![self.path.clone()]
    }

    fn immutable_files(&self) -> Vec<PathBuf> {
        vec![self.path.clone()]
    }
}

impl crate::quantization::EncodedStorageBuilder for QuantizedStorageBuilder<MmapFile> {
    type Storage = QuantizedStorage<MmapFile>;
    type Error = OperationError;

    fn build(self) -> OperationResult<QuantizedStorage<MmapFile>> {
        self.mmap.flush()?;

        let storage = ReadOnly::open(
            &MmapFs,
            &self.path,
            Self::Storage::open_options(Populate::No),
            (),
        )?;

        Ok(QuantizedStorage {
            storage,
            quantized_vector_size: self.quantized_vector_size,
            path: self.path,
            cold: AtomicBool::new(true),
        })
    }

    fn push_vector_data(&mut self, other: &[u8]) -> OperationResult<()> {
        debug_assert_eq!(
            self.quantized_vector_size.get(),
            other.len(),
            "Pushed vector size does not match expected quantized vector size"
        );
        debug_assert!(
            self.cursor_pos + other.len() <= self.mmap.len(),
            "Overflow allocated quantization storage mmap file (cursor_pos {} + len {} > total {})",
            self.cursor_pos,
            other.len(),
            self.mmap.len()
        );
        self.mmap[self.cursor_pos..self.cursor_pos + other.len()].copy_from_slice(other);
        self.cursor_pos += other.len();
        Ok(())
    }
}

impl<S> QuantizedStorageBuilder<S> {
    pub fn new(
        path: &Path,
        vectors_count: usize,
        quantized_vector_size: usize,
    ) -> std::io::Result<Self> {
        if quantized_vector_size == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "quantized_vector_size must be > 0",
            ));
        }
        let encoded_storage_size = quantized_vector_size * vectors_count;
        path.parent()
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "Path must have a parent directory",
                )
            })
            .and_then(fs::create_dir_all)?;

        let file = fs_err::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            // Don't truncate because we explicitly set the length later
            .truncate(false)
            .open(path)?;
        file.set_len(encoded_storage_size as u64)?;

        let mmap = unsafe { MmapMut::map_mut(&file) }?;
        advice::madvise(&mmap, advice::get_global())?;
        Ok(Self {
            mmap,
            cursor_pos: 0,
            quantized_vector_size: NonZeroUsize::new(quantized_vector_size).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "`quantized_vector_size` must be non-zero",
                )
            })?,
            path: path.to_path_buf(),
            output_storage: PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::common::universal_io::{DiskCache, DiskCacheConfig, DiskCacheFs};
    use crate::quantization::EncodedStorage;
    use tempfile::TempDir;

    use super::*;

    const VECTOR_SIZE: usize = 68;
    const COUNT: usize = 300;

    /// `for_each_run` must serve every offset exactly once with the bytes of
    /// per-point `get_vector_data`, in whatever order the backend completes
    /// the runs — the contract a scorer writing `scores[first..first + len]`
    /// relies on.
    fn runs_match_per_point_reads<S: UniversalRead>(storage: &QuantizedStorage<S>) {
        let ascending: Vec<PointOffsetType> = (0..COUNT as PointOffsetType).collect();
        let scattered: Vec<PointOffsetType> = (0..COUNT as PointOffsetType).step_by(7).collect();
        let descending: Vec<PointOffsetType> = (0..COUNT as PointOffsetType).rev().collect();
        let mixed: Vec<PointOffsetType> = vec![2, 3, 4, 8, 9, 1, 250, 251, 252, 253, 0];
        let empty: Vec<PointOffsetType> = vec![];

        for ids in [&ascending, &scattered, &descending, &mixed, &empty] {
            let mut seen = vec![false; ids.len()];
            storage
                .for_each_run(ids, |first, len, bytes| {
                    assert_eq!(
                        bytes.len(),
                        len * VECTOR_SIZE,
                        "run bytes must span the run"
                    );
                    for (i, vector) in bytes.as_chunks::<VECTOR_SIZE>().0.iter().enumerate() {
                        let offset = ids[first + i];
                        assert!(!seen[first + i], "offset {offset} served twice");
                        seen[first + i] = true;
                        assert_eq!(
                            vector.as_slice(),
                            storage.get_vector_data(offset).as_ref(),
                            "run bytes diverge at offset {offset}",
                        );
                    }
                })
                .unwrap();
            assert!(
                seen.iter().all(|&served| served),
                "every offset must be served"
            );
        }
    }

    /// A read past the stored vectors fails the way an unreachable object store does.
    fn reads_past_the_end_fail<S: UniversalRead>(storage: &QuantizedStorage<S>) {
        let ids = [0, COUNT as PointOffsetType + 4];
        assert!(storage.for_each_batch(&ids, |_, _| {}).is_err());
        assert!(storage.for_each_run(&ids, |_, _, _| {}).is_err());
    }

    /// `COUNT` vectors of `VECTOR_SIZE` bytes, each filled with a byte pattern
    /// unique to its index, written as the single-file layout under `dir`.
    fn write_dataset(dir: &Path) -> PathBuf {
        let path = dir.join("quantized.data");
        let data: Vec<u8> = (0..COUNT)
            .flat_map(|i| (0..VECTOR_SIZE).map(move |b| (i * 31 + b) as u8))
            .collect();
        fs::write(&path, data).unwrap();
        path
    }

    /// Synchronous backend: the per-run `read` loop with the access hint.
    #[test]
    fn mmap_runs_match_per_point_reads() {
        let dir = TempDir::with_prefix("quantized_storage_mmap").unwrap();
        let path = write_dataset(dir.path());
        let storage = QuantizedStorage::<MmapFile>::from_file(&MmapFs, &path, VECTOR_SIZE).unwrap();
        assert!(!MmapFile::kind().can_be_async());
        runs_match_per_point_reads(&storage);
        reads_past_the_end_fail(&storage);
    }

    /// Pipelined backend: the whole batch of runs goes through `read_batch`.
    /// The disk cache is the async-capable backend that runs on every
    /// platform, so this covers the branch io_uring takes on Linux.
    #[test]
    fn disk_cache_runs_match_per_point_reads() {
        let dir = TempDir::with_prefix("quantized_storage_disk_cache").unwrap();
        let remote_dir = dir.path().join("remote");
        let local_dir = dir.path().join("local");
        fs::create_dir_all(&remote_dir).unwrap();
        fs::create_dir_all(&local_dir).unwrap();
        let path = write_dataset(&remote_dir);

        let config = Arc::new(DiskCacheConfig::new(remote_dir, local_dir).unwrap());
        let cache_fs = DiskCacheFs::<MmapFile>::new(config, MmapFs);
        let storage =
            QuantizedStorage::<DiskCache<MmapFile>>::from_file(&cache_fs, &path, VECTOR_SIZE)
                .unwrap();
        assert!(DiskCache::<MmapFile>::kind().can_be_async());
        runs_match_per_point_reads(&storage);
        reads_past_the_end_fail(&storage);
    }
}
