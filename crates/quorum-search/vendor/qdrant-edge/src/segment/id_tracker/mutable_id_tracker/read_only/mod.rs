pub mod id_tracker_read;
mod lifecycle;
mod live_reload;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::PathBuf;

use crate::common::types::PointOffsetType;
use crate::common::universal_io::UniversalRead;
use futures::lock::Mutex;

pub use self::live_reload::{LiveReloadResult, TrackerProbe};
use crate::segment::id_tracker::point_mappings::PointMappings;
use crate::segment::types::{PointIdType, SeqNumberType};

/// Implementation of read-only ID tracker which operates
/// on top of appendable data format.
///
/// Structure can't modify data itself, but can consume appends from external entity by
/// doing live-reload.
///
/// Backed by [`UniversalRead`] file handles so it works over any storage backend (mmap, io_uring,
/// object storage, ...). The handles are retained between reloads and refreshed via
/// [`UniversalRead::live_reload`] to pick up data appended by the writer.
///
/// The mappings and versions files may be absent: the writer only creates them once it flushes the
/// first point (an empty file is never written), exactly as
/// [`MutableIdTracker::open`](crate::id_tracker::mutable_id_tracker::MutableIdTracker::open)
/// tolerates. A missing file is treated as an empty storage; the handle is opened lazily through
/// the fs passed to [`Self::live_reload`] once the file appears.
///
/// The mapping only ever contains *committed* points. The writer flushes mappings before data
/// before versions, so a point is fully written only once its version is present. An insert read
/// from the mappings log is held in [`Self::unversioned_inserts`] until its version is flushed,
/// then in [`Self::staged_inserts`] until every component has ingested it, and only then linked
/// into [`Self::mappings`].
pub struct ReadOnlyAppendableIdTracker<S: UniversalRead> {
    segment_path: PathBuf,
    internal_to_version: Vec<SeqNumberType>,
    mappings: PointMappings,

    /// Inserts read from the mappings log whose version is not flushed yet, keyed by external id.
    ///
    /// Their data may be partially written. Each moves to [`Self::staged_inserts`] once its offset
    /// is covered by the versions file, or is dropped if a delete or a complete insert of the same
    /// point arrives first. A point's committed copy goes on serving meanwhile.
    unversioned_inserts: HashMap<PointIdType, PointOffsetType>,

    /// Fully written inserts reported by a reload but not linked yet, keyed by external id.
    ///
    /// Reported again by every reload until [`Self::publish_staged`] links them.
    staged_inserts: HashMap<PointIdType, PointOffsetType>,

    /// Highest slot any insert in the mappings log has ever claimed, `None` while the log has
    /// claimed none. This is the slot a writer resumes above.
    ///
    /// Neither structure above can answer that: [`Self::mappings`] holds only committed points, and
    /// [`Self::unversioned_inserts`] drops an entry as soon as a delete for its external id arrives, so
    /// an `Insert(p, n)` followed by a `Delete(p)` leaves slot `n` claimed on disk yet named nowhere
    /// else. Its data may be half-written, so handing it out again would write a second point over
    /// the remains of the first.
    max_claimed_internal_id: Option<PointOffsetType>,

    /// Byte offset up to which the mappings log has been consumed.
    ///
    /// New mapping changes are appended after this offset by the mutable tracker. On live-reload
    /// we read the file from here onwards. It always points to the end of the last fully-read
    /// entry, so a partial trailing entry (a flush in progress) is re-read on the next reload.
    mappings_read_to: u64,

    /// Backing file handles, behind their own lock so [`Self::probe_committed`] can refresh them
    /// under shared access while readers use the tracker. Readers never touch them.
    files: Mutex<TrackerFiles<S>>,
}

struct TrackerFiles<S> {
    /// Backing handle for the append-only mappings log. `None` until the file exists; opened lazily
    /// and refreshed on live-reload.
    mappings: Option<S>,

    /// Backing handle for the random-access versions array. `None` until the file exists; opened
    /// lazily and refreshed on live-reload.
    versions: Option<S>,
}
