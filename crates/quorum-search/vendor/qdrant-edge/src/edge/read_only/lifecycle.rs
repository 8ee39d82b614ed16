use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::common::ambient;
use crate::common::reason::Reason;
use crate::common::universal_io::{MmapFile, MmapFs, UniversalReadFsAsync};
use parking_lot::RwLock;
use crate::segment::common::operation_error::{OperationResult, check_process_stopped};
use crate::segment::data_types::load_profile::LoadProfile;
use crate::segment::index::UniversalReadExt;

use crate::edge::EdgeConfig;
use crate::edge::read_only::enumerate::{ManifestSegmentEnumerator, SegmentEnumerator};
use crate::edge::read_only::holder::ReadOnlySegmentHolder;
use crate::edge::read_only::{ReadOnlyEdgeShard, ReadOnlyEdgeShardPools};

impl ReadOnlyEdgeShard<MmapFile> {
    /// Open a read-only follower over local memory-mapped files, discovering segments from the
    /// leader's segment manifest. Requires the leader to write a manifest (the
    /// `write_segment_manifest` feature flag).
    pub fn open_mmap(path: &Path) -> OperationResult<Self> {
        Self::open(MmapFs, path, None, None)
    }
}

/// Effective follower config: tunables prefer the caller-`provided` config and fall back to the
/// segment-`derived` one (via [`EdgeConfig::fill_unspecified_from`]), while `vectors` and
/// `sparse_vectors` always come from `derived` — the segments are the follower's source of truth
/// for the stored data.
pub(super) fn merge_follower_config(provided: EdgeConfig, mut derived: EdgeConfig) -> EdgeConfig {
    // Take the vector params out of `derived` up front, so caller-provided ones cannot win in
    // the fill below (a non-empty map would count as "specified").
    let vectors = std::mem::take(&mut derived.vectors);
    let sparse_vectors = std::mem::take(&mut derived.sparse_vectors);

    let mut config = provided.fill_unspecified_from(&derived);
    config.vectors = vectors;
    config.sparse_vectors = sparse_vectors;
    config
}

impl<S: UniversalReadExt + 'static> ReadOnlyEdgeShard<S> {
    /// Open a read-only follower over the edge-shard directory at `path` using read backend `fs`.
    ///
    /// Segments are discovered through the leader's segment manifest (read via `fs`) — a read-only
    /// follower always uses the manifest, so there is no discovery to configure.
    ///
    /// A follower has no `edge_config.json` — the segments are the source of truth, so the config is
    /// derived from the segments themselves (see [`EdgeConfig::from_segment_config`]), mirroring the
    /// read-write [`EdgeShard`](crate::EdgeShard)'s fallback. A provided `config` overrides tunable
    /// parameters at open (its `Some` values win over the derived ones; `vectors`/`sparse_vectors`
    /// are ignored); a [`live_reload`](Self::live_reload) re-derives the config from the segments alone.
    /// An empty shard (no segments yet) starts from the provided config (or a default one).
    ///
    /// A `load_profile` — derived from the request this shard is being opened to serve (see
    /// [`LoadProfile`]) — parks the segment components that request won't touch cold instead of
    /// warming them per the persisted segment configs, cutting the cold-start cost. Without one,
    /// loading follows the segment configs alone. The profile also applies to segments a later
    /// [`live_reload`](Self::live_reload) discovers: the shard was opened for that one request, so new
    /// segments shouldn't load any warmer.
    ///
    /// Not cancellable; see [`open_with_cancellation`](Self::open_with_cancellation).
    pub fn open(
        fs: S::Fs,
        path: &Path,
        config: Option<EdgeConfig>,
        load_profile: Option<LoadProfile>,
    ) -> OperationResult<Self>
    where
        S::Fs: UniversalReadFsAsync + Send + Sync + Clone + 'static,
    {
        Self::open_with_cancellation(
            fs,
            path,
            config,
            load_profile,
            Arc::new(AtomicBool::new(false)),
        )
    }

    /// Cancellation-aware [`open`](Self::open). Set the shared flag to `true` to cancel.
    ///
    /// Cancellation is cooperative, as in
    /// [`EdgeShardReadWithCancellation`](crate::EdgeShardReadWithCancellation): the flag is checked
    /// between the stages of the initial load and between segments within a stage. Blocking IO and
    /// a single segment's load are indivisible and can delay the observation. Once observed, the
    /// call returns [`OperationError::Cancelled`](segment::common::operation_error::OperationError::Cancelled)
    /// and never a partially loaded shard. The call never sets or resets the caller's flag.
    pub fn open_with_cancellation(
        fs: S::Fs,
        path: &Path,
        config: Option<EdgeConfig>,
        load_profile: Option<LoadProfile>,
        is_stopped: Arc<AtomicBool>,
    ) -> OperationResult<Self>
    where
        S::Fs: UniversalReadFsAsync + Send + Sync + Clone + 'static,
    {
        Self::open_with_pools(
            fs,
            path,
            config,
            load_profile,
            Default::default(),
            is_stopped,
        )
    }

    /// Cancellation-aware open with optional caller-owned search and load pools.
    ///
    /// Supplied pools are reused for the shard's lifetime, including live reload, and can be
    /// shared across shards. Each omitted pool is created from `config`; supplied pools retain
    /// their own size and affinity. Use distinct pools to keep loading off search workers.
    /// Other behavior matches [`open_with_cancellation`](Self::open_with_cancellation).
    pub fn open_with_pools(
        fs: S::Fs,
        path: &Path,
        config: Option<EdgeConfig>,
        load_profile: Option<LoadProfile>,
        pools: ReadOnlyEdgeShardPools,
        is_stopped: Arc<AtomicBool>,
    ) -> OperationResult<Self>
    where
        S::Fs: UniversalReadFsAsync + Send + Sync + Clone + 'static,
    {
        let enumerator = ManifestSegmentEnumerator::new(fs.clone(), path);
        Self::open_with_enumerator(
            fs,
            path,
            enumerator,
            config,
            load_profile,
            pools,
            &is_stopped,
        )
    }

    /// Open with an explicit segment [`enumerator`](SegmentEnumerator).
    ///
    /// Internal seam: [`open`](Self::open) always discovers via the manifest, but tests inject other
    /// discovery strategies (e.g. a directory scan) here.
    ///
    /// The initial load is a [`live_reload`](Self::live_reload) over an empty shard: same discovery, same
    /// parallel load, same handling of segments that change while being loaded. The manifest is
    /// superset-biased, so segments that cannot be loaded (not yet finalized, already deleted, or
    /// appendable) are skipped rather than failing the open.
    pub(crate) fn open_with_enumerator(
        fs: S::Fs,
        path: &Path,
        enumerator: impl SegmentEnumerator + 'static,
        config: Option<EdgeConfig>,
        load_profile: Option<LoadProfile>,
        pools: ReadOnlyEdgeShardPools,
        is_stopped: &AtomicBool,
    ) -> OperationResult<Self>
    where
        S::Fs: UniversalReadFsAsync + Send + Sync + Clone + 'static,
    {
        let _scope = ambient::unmeasured_guard(Reason::EDGE_UNMEASURED);
        check_process_stopped(is_stopped)?;
        let provided_config = config.unwrap_or_default();

        // Segments do not carry pool tunables. Only build missing pools from the provided config.
        let search_pool = match pools.search {
            Some(pool) => pool,
            None => crate::edge::read_view::build_segment_pool(
                "edge-search",
                provided_config.search_thread_count(),
                provided_config.search_pool_core,
            )?,
        };
        let load_pool = match pools.load {
            Some(pool) => pool,
            None => crate::edge::read_view::build_segment_pool(
                "edge-load",
                provided_config.search_thread_count(),
                None,
            )?,
        };

        let shard = Self {
            path: path.to_path_buf(),
            fs,
            config: RwLock::new(Arc::new(provided_config.clone())),
            segments: RwLock::new(ReadOnlySegmentHolder::default()),
            enumerator: Box::new(enumerator),
            search_pool,
            load_pool,
            load_profile,
            live_reload_lock: Default::default(),
        };
        shard.live_reload_cancellable(is_stopped)?;

        // Open-only config overlay: caller-provided tunables win over the segment-derived ones
        // (`live_reload` re-derives from the segments alone — see the `config` field docs). For an
        // empty shard the live_reload left the provided config in place, and the overlay is a no-op.
        let derived = shard.config.read().clone();
        *shard.config.write() = Arc::new(merge_follower_config(
            provided_config,
            EdgeConfig::clone(&derived),
        ));

        check_process_stopped(is_stopped)?;
        Ok(shard)
    }
}
