//! Pending changes of a proxy segment, buffered in memory and persisted to disk.
//!
//! A proxy segment wraps another segment, prevents any writes to it, and buffers a small set of
//! operations instead: point deletes, payload index changes and vector name changes. This module
//! provides [`PendingChanges`], the component managing those buffered operations for one proxy
//! layer, including their persistence into an append-only log file inside the wrapped segment's
//! directory (see `log_file.rs`).
//!
//! Persisting the pending changes means a proxy segment does not hold back acknowledging the WAL:
//! everything the proxy buffers is durable once flushed, so on a restart the buffered state does
//! not need to be recovered by replaying the WAL. Instead of reconstructing proxy segments on
//! restart, the pending changes log is replayed directly onto the actual segment before regular
//! WAL replay (see [`recover_pending_changes`]). All operations are version gated, so replaying
//! an entry the segment already applied is a no-op, and replaying a stale file is harmless.
//!
//! Proxy segments can be layered (an optimization and a snapshot both proxy the same segment).
//! Each layer persists into its own log file, named after its level plus a
//! random ID generated when the proxy is created. On restart all files found in
//! the segment directory are replayed level by level (level 0 fully before level
//! 1, and so on), and by version within a level, so multiple files left behind
//! on the same level are still applied in the right order.

mod change;
mod index_changes;
mod log_file;
mod proxy_changes;
mod vector_name_changes;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::common::ambient;
use crate::common::is_alive_lock::IsAliveLock;
use crate::common::reason::reason;
use parking_lot::Mutex;
use uuid::Uuid;

pub use self::change::{DeletedPoints, PendingChange, ProxyDeletedPoint, ProxyIndexChange};
pub use self::index_changes::ProxyIndexChanges;
pub use self::log_file::{
    LOG_FILE_PREFIX, list_pending_changes_log_files, pending_changes_log_path,
};
pub use self::proxy_changes::ProxyChanges;
pub use self::vector_name_changes::{IntendedVector, ProxyVectorNameChanges};
use crate::segment::common::Flusher;
use crate::segment::common::operation_error::{OperationError, OperationResult};
use crate::segment::data_types::vector_name_config::VectorNameConfig;
use crate::segment::entry::entry_point::{NonAppendableSegmentEntry, StorageSegmentEntry as _};
use crate::segment::segment::Segment;
use crate::segment::types::{PayloadKeyType, PointIdType, SegmentConfig, SeqNumberType, VectorNameBuf};

/// Manages the pending changes of a single proxy segment layer.
///
/// Keeps an in-memory buffer of all changes — point deletes, payload index changes and vector
/// name changes, see [`ProxyChanges`] — which the proxy segment serves its reads from, plus a
/// single buffer of all registered operations that still have to be persisted.
/// [`Self::flusher`] persists that buffer into an append-only log file in the wrapped segment's
/// directory; hook it into the regular segment flush.
///
/// The log file deliberately outlives the component: when a proxy segment is unwrapped its
/// buffered changes are propagated to the wrapped segment in memory, but deleting the log before
/// the wrapped segment has flushed those changes would not be crash safe.
#[derive(Debug)]
pub struct PendingChanges {
    /// All buffered changes: point deletes, payload index changes and vector name changes.
    changes: ProxyChanges,

    /// All registered operations that are not persisted to the log file yet, in registration
    /// order.
    ///
    /// Deliberately not cleared when the proxy propagates its changes to the wrapped segment:
    /// [`Self::persisted_version`] promises that every registered operation it covers is durable
    /// in the log, and propagation only makes the operations durable once the wrapped segment
    /// flushes. A flusher captured before propagation may thus persist entries that are also
    /// applied to the wrapped segment; replaying such an entry is a version-gated no-op.
    pending_persist: Arc<Mutex<Vec<PendingChange>>>,

    /// Path of the pending changes log file, inside the wrapped segment's directory.
    path: PathBuf,

    /// Proxy layer this component belongs to; determines the log file suffix.
    level: usize,

    /// Expected length of the log file in bytes.
    ///
    /// Initialized on open, and bumped after each successful flush. Pending changes are appended
    /// to the file after this offset. If the file on disk is longer it probably indicates a
    /// partial flush, if it is shorter we hit some kind of a bug.
    expected_file_len: Arc<AtomicU64>,

    /// Highest operation version covered by the log file.
    ///
    /// Every operation registered on the proxy with a version at or below this is either durably
    /// persisted in the log file, or was a no-op that does not need recovery. The proxy reports
    /// this through its `persistent_version`, which is what allows the WAL to be acknowledged
    /// past operations that only live in a proxy buffer.
    persisted_version: Arc<AtomicU64>,

    /// Marks captured flushers dead once this component is dropped, so they never append to a
    /// segment directory that may be going away.
    is_alive_lock: IsAliveLock,
}

impl PendingChanges {
    /// Open a new pending changes log for the proxy layer `level` on the segment at `segment_path`.
    ///
    /// Uses a random ID.
    pub fn new(segment_path: &Path, level: usize) -> OperationResult<Self> {
        let path = pending_changes_log_path(segment_path, level, Uuid::new_v4());
        Ok(Self::empty(path, level))
    }

    /// Reopen the pending changes log at its exact `path`, reconstructing the in-memory buffers
    /// from it as if every entry were registered again in order.
    ///
    /// Unlike [`Self::new`], this targets one specific file rather than creating a new one.
    /// `path` must be exactly the log file of the proxy generation being resumed. New changes will
    /// keep appending to the same file.
    ///
    /// Must only be used when entries are not yet applied to the wrapped segment.
    pub fn load(path: &Path) -> OperationResult<Self> {
        let level = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(log_file::parse_log_file_level)
            .ok_or_else(|| {
                OperationError::service_error(format!(
                    "Not a pending changes log file path: {}",
                    path.display(),
                ))
            })?;

        let mut changes = Self::empty(path.to_path_buf(), level);

        if path.is_file() {
            // Read all entries, truncating a torn entry at the end of the file if there is one
            let loaded = log_file::load_changes(path)?;
            let max_version = loaded
                .changes
                .iter()
                .map(PendingChange::version)
                .max()
                .unwrap_or(0);
            changes
                .expected_file_len
                .store(loaded.valid_len, Ordering::Relaxed);
            changes
                .persisted_version
                .store(max_version, Ordering::Relaxed);

            for change in loaded.changes {
                changes.changes.reconstruct_change(change);
            }
        }

        Ok(changes)
    }

    /// Build an empty instance targeting `path`, with nothing loaded or persisted yet.
    fn empty(path: PathBuf, level: usize) -> Self {
        Self {
            changes: ProxyChanges::default(),
            pending_persist: Default::default(),
            path,
            level,
            expected_file_len: Arc::new(AtomicU64::new(0)),
            persisted_version: Arc::new(AtomicU64::new(0)),
            is_alive_lock: IsAliveLock::new(),
        }
    }

    /// Proxy layer this component belongs to.
    pub fn level(&self) -> usize {
        self.level
    }

    /// Path of the pending changes log file.
    pub fn log_path(&self) -> &Path {
        &self.path
    }

    /// Register a pending point delete.
    ///
    /// Returns the previously registered delete for this point, if any.
    pub fn register_delete_point(
        &mut self,
        point_id: PointIdType,
        versions: ProxyDeletedPoint,
    ) -> Option<ProxyDeletedPoint> {
        let previous = self.changes.deleted_points_mut().insert(point_id, versions);
        self.pending_persist
            .lock()
            .push(PendingChange::DeletePoint { point_id, versions });
        previous
    }

    /// Register a pending payload index change.
    pub fn register_index_change(&mut self, field_name: PayloadKeyType, change: ProxyIndexChange) {
        self.changes
            .index_changes_mut()
            .insert(field_name.clone(), change.clone());
        self.pending_persist
            .lock()
            .push(PendingChange::IndexChange { field_name, change });
    }

    /// Register a pending vector name creation.
    ///
    /// `wrapped_config` is the segment config of the wrapped segment; see
    /// [`ProxyVectorNameChanges::record_create`] for how it is used to decide whether the wrapped
    /// segment's existing data for this name must be cleared when the change is applied.
    pub fn register_vector_name_create(
        &mut self,
        vector_name: VectorNameBuf,
        config: VectorNameConfig,
        version: SeqNumberType,
        wrapped_config: &SegmentConfig,
    ) {
        let intent = self.changes.vector_name_changes_mut().record_create(
            vector_name.clone(),
            config,
            version,
            wrapped_config,
        );
        self.pending_persist
            .lock()
            .push(PendingChange::VectorNameChange {
                vector_name,
                intent,
            });
    }

    /// Register a pending vector name deletion.
    pub fn register_vector_name_delete(
        &mut self,
        vector_name: VectorNameBuf,
        version: SeqNumberType,
    ) {
        self.changes
            .vector_name_changes_mut()
            .record_delete(vector_name.clone(), version);
        self.pending_persist
            .lock()
            .push(PendingChange::VectorNameChange {
                vector_name,
                intent: IntendedVector::Absent { version },
            });
    }

    /// All pending changes: point deletes, payload index changes and vector name changes.
    pub fn changes(&self) -> &ProxyChanges {
        &self.changes
    }

    /// Pending point deletes.
    pub fn deleted_points(&self) -> &DeletedPoints {
        self.changes.deleted_points()
    }

    /// Pending payload index changes.
    pub fn index_changes(&self) -> &ProxyIndexChanges {
        self.changes.index_changes()
    }

    /// Pending vector name changes.
    pub fn vector_name_changes(&self) -> &ProxyVectorNameChanges {
        self.changes.vector_name_changes()
    }

    /// Clear all pending changes, after they have been propagated to the wrapped segment.
    ///
    /// Does not touch the operations still pending persistence, see [`Self::pending_persist`].
    pub fn clear_changes(&mut self) {
        self.changes.clear();
    }

    /// Highest operation version covered by the log file.
    ///
    /// Every operation registered with a version at or below this is either durably persisted in
    /// the log file, or was a no-op that does not need recovery.
    pub fn persisted_version(&self) -> SeqNumberType {
        self.persisted_version.load(Ordering::Relaxed)
    }

    /// Get a flusher persisting all currently pending operations to the log file.
    ///
    /// `target_version` must be the current version of the proxy segment: the highest operation
    /// version registered so far, including operations that did not buffer anything (e.g. a
    /// delete for a point the wrapped segment does not have). After the flusher ran,
    /// [`Self::persisted_version`] covers it.
    ///
    /// Returns `None` if there is nothing to persist and `target_version` is already covered.
    pub fn flusher(
        &self,
        target_version: SeqNumberType,
        up_to: Option<SeqNumberType>,
    ) -> Option<Flusher> {
        let changes = {
            let pending_persist = self.pending_persist.lock();
            if pending_persist.is_empty()
                && self.persisted_version.load(Ordering::Relaxed) >= target_version
            {
                return None;
            }
            pending_persist.clone()
        };

        let path = self.path.clone();
        let is_alive_handle = self.is_alive_lock.handle();
        let pending_persist_weak = Arc::downgrade(&self.pending_persist);
        let expected_file_len = self.expected_file_len.clone();
        let persisted_version = self.persisted_version.clone();

        Some(Box::new(move || {
            let (Some(_is_alive_guard), Some(pending_persist)) = (
                is_alive_handle.lock_if_alive(),
                pending_persist_weak.upgrade(),
            ) else {
                // Proxy segment is dropped, skip flush
                log::debug!("Proxy segment was dropped, skip pending changes flush");
                return Ok(());
            };

            if !changes.is_empty() {
                log_file::store_changes(&path, &changes, &expected_file_len)?;
                log_file::reconcile_persisted_changes(&pending_persist, &changes);
            }

            // Only advance the covered version once the entries are durable. Operations
            // registered after this flusher was captured are not covered: they have a higher
            // version than the target captured with the entries.
            let mut batch_version = changes
                .iter()
                .map(PendingChange::version)
                .max()
                .map_or(target_version, |max_version| {
                    max_version.max(target_version)
                });

            if let Some(up_to) = up_to {
                batch_version = batch_version.min(up_to);
            }

            persisted_version.fetch_max(batch_version, Ordering::Relaxed);

            Ok(())
        }))
    }
}

/// Apply a single pending change to the given segment, through the regular version-gated segment
/// operations.
pub fn apply_change<S>(segment: &mut S, change: &PendingChange) -> OperationResult<()>
where
    S: NonAppendableSegmentEntry + ?Sized,
{
    let _scope = ambient::unmeasured_guard(reason("Internal operation"));

    match change {
        PendingChange::DeletePoint { point_id, versions } => {
            // Note:
            // The delete may have an older version than the point currently has in the segment.
            // Such deletes are ignored because the point in the segment is considered to be
            // newer. This is possible because different proxy segments can share state through a
            // common write segment.
            // See: <https://github.com/qdrant/qdrant/pull/7208>
            segment.delete_point(versions.operation_version, *point_id)?;
        }
        PendingChange::IndexChange { field_name, change } => match change {
            ProxyIndexChange::Create(schema, version) => {
                segment.create_field_index(*version, field_name, Some(schema))?;
            }
            ProxyIndexChange::Delete(version) => {
                segment.delete_field_index(*version, field_name)?;
            }
            ProxyIndexChange::DeleteIfIncompatible(version, schema) => {
                segment.delete_field_index_if_incompatible(*version, field_name, schema)?;
            }
        },
        PendingChange::VectorNameChange {
            vector_name,
            intent,
        } => match intent {
            IntendedVector::Absent { version } => {
                segment.delete_vector_name(*version, vector_name)?;
            }
            IntendedVector::Present {
                config,
                version,
                supersedes_wrapped,
            } => {
                if *supersedes_wrapped {
                    // `create_vector_name` is idempotent and would silently keep the segment's
                    // stale storage. Clear it first so the new schema actually takes effect.
                    segment.delete_vector_name(*version, vector_name)?;
                }
                segment.create_vector_name(*version, vector_name, config)?;
            }
        },
    }

    Ok(())
}

/// Whether persisted pending proxy changes are replayed onto a segment when it is loaded.
///
/// See [`recover_pending_changes`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PersistedProxyChanges {
    /// Replay all persisted pending proxy changes onto the segment; their log files can be
    /// removed once the segment durably persists past the replay, see
    /// [`RecoveredPendingChanges`].
    #[default]
    Replay,
    /// Do not replay persisted pending proxy changes, leave the segment and the log files
    /// untouched.
    Ignore,
}

/// What [`recover_pending_changes`] leaves to clean up.
#[derive(Debug, Default)]
pub struct RecoveredPendingChanges {
    /// Number of replayed log entries, across all layers.
    pub replayed: usize,
    /// Log files that are safe to remove once the segment durably persists at or past
    /// `ready_at`. Removing them before that is unsafe, see [`recover_pending_changes`].
    pub log_files: Vec<PathBuf>,
    /// Flush version after which log files can be safely removed.
    pub ready_at: SeqNumberType,
}

/// Recover pending changes left on disk by proxy segments, before regular WAL replay
///
/// If the segment directory holds pending changes log files, the proxy segments that wrote them
/// did not propagate their buffered state into this segment before the process stopped. Instead
/// of reconstructing the proxies, replay all logged operations directly onto the segment.
///
/// Replay order is level first, then operation version: every level-0 file is fully replayed
/// before any level-1 file, matching the order the proxy layers were created in. A level may have
/// multiple files if an unproxy failed to clean one up; in that case they are replayed in version
/// order.
///
/// Must be called before regular WAL replay, which recovers everything past what segments
/// (including these logs) have durably applied.
///
/// This is necessary because proxy changes that are persisted on disk are also acknowledged in the
/// WAL. It means that on restart we expect all those changes to be visible in the segment to get a
/// consistent read view. Since the processes that required a proxy are not running anymore we
/// don't reconstruct the proxies, instead we just apply the changes directly to the segment.
///
/// The replayed operations are only applied in memory here; nothing is flushed. The returned
/// [`RecoveredPendingChanges::log_files`] must not be removed until the segment durably persists
/// past [`RecoveredPendingChanges::ready_at`] — the caller is expected to defer that, e.g. by
/// registering it as a post-flush action on the segment's `SegmentHolder` once the segment has
/// joined one.
///
/// With [`PersistedProxyChanges::Ignore`] nothing is replayed and the log files are left as they
/// are; see there for when that is appropriate.
#[must_use = "should clean up log files after segment flush"]
pub fn recover_pending_changes(
    segment: &mut Segment,
    persisted_proxy_changes: PersistedProxyChanges,
) -> OperationResult<RecoveredPendingChanges> {
    let log_files = list_pending_changes_log_files(&segment.segment_path);
    if log_files.is_empty() {
        return Ok(RecoveredPendingChanges::default());
    }

    // The logs are part of the segment state until removed, also when ignored: then they mirror
    // the files of another writer's segment
    segment.pending_changes_logs = log_files.clone();

    match persisted_proxy_changes {
        PersistedProxyChanges::Replay => {}
        PersistedProxyChanges::Ignore => {
            log::debug!(
                "Ignoring {} persisted pending proxy changes log(s) of segment {}, not replaying them",
                log_files.len(),
                segment.segment_path.display(),
            );
            return Ok(RecoveredPendingChanges::default());
        }
    }

    // Load every file, tagged with its level and the version it starts at, then order whole
    // files for replay: level first, then by that starting version, see above.
    let mut files = Vec::with_capacity(log_files.len());
    for path in &log_files {
        let level = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(log_file::parse_log_file_level)
            .ok_or_else(|| {
                OperationError::service_error(format!(
                    "Not a pending changes log file path: {}",
                    path.display(),
                ))
            })?;
        let changes = log_file::load_changes(path)?.changes;
        let start_version = changes
            .iter()
            .map(PendingChange::version)
            .min()
            .unwrap_or(0);
        log::debug!(
            "Loaded {} pending proxy changes from {} (level {level})",
            changes.len(),
            path.display(),
        );
        files.push((level, start_version, path, changes));
    }
    files.sort_by_key(|(level, start_version, ..)| (*level, *start_version));

    let replayed: usize = files.iter().map(|(.., changes)| changes.len()).sum();
    log::info!(
        "Replaying {replayed} pending proxy changes onto segment ({})",
        segment.segment_path.display(),
    );
    for (_, _, path, changes) in &files {
        for change in changes {
            apply_change(segment, change).map_err(|err| {
                OperationError::service_error(format!(
                    "Failed to replay pending change from {}: {err}",
                    path.display(),
                ))
            })?;
        }
    }

    Ok(RecoveredPendingChanges {
        replayed,
        ready_at: segment.version(),
        log_files,
    })
}
