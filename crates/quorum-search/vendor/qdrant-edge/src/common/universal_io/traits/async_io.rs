use std::ops::Range;
use std::path::{Path, PathBuf};

use super::{UniversalRead, UniversalReadFs};
use crate::common::ext::aligned_vec::ACow;
use crate::common::generic_consts::{AccessPattern, Sequential};
use crate::common::universal_io::{ListedFile, OpenOptions, UioResult};

/// Async-capable extension of [`UniversalRead`].
///
/// Implemented only by backends whose reads can genuinely overlap with the
/// caller (the blob family and the disk caches layered over it), plus a
/// trivial [`MmapFile`](crate::universal_io::MmapFile) impl so local-backend
/// configurations (tests, mmap-backed lookup segments) satisfy async-bounded
/// code. Purely local backends with no async story (io_uring, the block
/// cache) deliberately do not implement it.
pub trait UniversalReadAsync: UniversalRead {
    /// Async-capable version of [`UniversalRead::read_bytes`].
    fn read_bytes_async<P: AccessPattern>(
        &self,
        range: Range<u64>,
        access_pattern: P,
        align: usize,
    ) -> impl Future<Output = UioResult<ACow<'_>>> + Send;

    /// Read the file from byte `from` to its end into a sink: `init` receives the total length
    /// of the file as read and returns the sink, which then gets the bytes from `from` onwards
    /// as `(offset, bytes)` chunks at their absolute file offsets as they arrive, each byte
    /// exactly once. `from == 0` reads the whole file; `from` at or past the end builds the sink
    /// and writes nothing. Yields the sink once every byte was written.
    fn read_from_into_async<W, I>(
        &self,
        from: u64,
        init: I,
    ) -> impl Future<Output = UioResult<W>> + Send
    where
        I: FnOnce(u64) -> UioResult<W> + Send + 'static,
        W: ChunkSink + Send + 'static;
}

/// Destination of [`UniversalReadAsync::read_from_into_async`]'s chunks.
pub trait ChunkSink {
    /// Write the chunk of `bytes` at byte `offset` of the file.
    fn write_chunk(&mut self, offset: u64, bytes: &[u8]) -> UioResult<()>;
}

/// [`UniversalReadAsync::read_from_into_async`] for files that read the tail with a single
/// [`UniversalReadAsync::read_bytes_async`].
pub(crate) async fn read_from_via_read_bytes<F, W, I>(file: &F, from: u64, init: I) -> UioResult<W>
where
    F: UniversalReadAsync + Sync,
    I: FnOnce(u64) -> UioResult<W>,
    W: ChunkSink,
{
    let len = file.len::<u8>()?;
    let mut sink = init(len)?;
    if from < len {
        let bytes = file.read_bytes_async(from..len, Sequential, 1).await?;
        sink.write_chunk(from, &bytes)?;
    }
    Ok(sink)
}

/// Async-capable extension of [`UniversalReadFs`]: filesystems whose opens
/// (including any populate) can be driven as a future. See
/// [`UniversalReadAsync`] for which backends implement the async surface.
///
/// [`CachedFs`](crate::universal_io::CachedFs) requires this of its inner
/// filesystem: scheduled prefetches are parked `open_async` futures, resolved
/// either by an awaited barrier
/// ([`CachedFs::resolve_prefetched`](crate::universal_io::CachedFs::resolve_prefetched))
/// or lazily at consume time.
pub trait UniversalReadFsAsync: UniversalReadFs {
    /// Open a file, and populate it asynchronously.
    ///
    /// Must not depend on ambient async context; capture any runtime by value.
    fn open_async(
        &self,
        path: PathBuf,
        options: OpenOptions,
        extra: Self::OpenExtra,
    ) -> impl Future<Output = UioResult<Self::File>> + Send + '_;

    /// List files matching `prefix_path` asynchronously.
    fn list_files_async<'a>(
        &'a self,
        prefix_path: &'a Path,
    ) -> impl Future<Output = UioResult<Vec<ListedFile>>> + Send + use<'a, Self>;

    /// Select specific files asynchronously.
    ///
    /// Returns the same output format as [`Self::list_files_async`], but for an explicit
    /// list of candidate files. Files that do not exist are omitted from the result.
    fn select_files_async<'a, P: AsRef<Path> + Send + Sync>(
        &'a self,
        paths: &'a [P],
    ) -> impl Future<Output = UioResult<Vec<ListedFile>>> + Send + use<'a, Self, P>;
}

/// The async whole-file write surface, mirroring the same operations on
/// [`UniversalWriteFs`]: a batch of saves runs as one concurrent wave
/// instead of a thread per file.
///
/// As with [`UniversalReadFsAsync::open_async`], the futures must not depend on
/// ambient async context, so any executor can drive them — including
/// `futures::executor::block_on` from synchronous code. Nothing runs before the
/// first poll, so a caller that bounds its wave really does bound the in-flight
/// saves, however it collects the futures.
///
/// [`UniversalWriteFs`]: crate::universal_io::UniversalWriteFs
pub trait UniversalWriteFsAsync: Send + Sync {
    /// Backends without materialized directories may treat this as a no-op.
    fn create_dir_async(&self, path: PathBuf) -> impl Future<Output = UioResult<()>> + Send + '_;

    fn atomic_save_async(
        &self,
        path: PathBuf,
        bytes: Vec<u8>,
    ) -> impl Future<Output = UioResult<()>> + Send + '_;

    fn remove_async(&self, path: PathBuf) -> impl Future<Output = UioResult<()>> + Send + '_;
}
