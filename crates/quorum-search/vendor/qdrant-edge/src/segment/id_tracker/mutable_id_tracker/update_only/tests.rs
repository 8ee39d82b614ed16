use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use crate::common::types::{DeferredBehavior, PointOffsetType};
use crate::common::universal_io::{MmapFile, MmapFs};
use tempfile::Builder;
use uuid::Uuid;

use super::MappingOperation::{Delete, Insert};
use super::{PendingInsert, UpdateOnlyAppendableIdTracker};
use crate::segment::id_tracker::mutable_id_tracker::MutableIdTracker;
use crate::segment::id_tracker::mutable_id_tracker::mappings_storage::{load_mappings, mappings_path};
use crate::segment::id_tracker::mutable_id_tracker::read_only::ReadOnlyAppendableIdTracker;
use crate::segment::id_tracker::mutable_id_tracker::versions_storage::{
    load_versions, store_version_changes, versions_path,
};
use crate::segment::id_tracker::{DELETED_POINT_VERSION, IdTracker, IdTrackerRead};
use crate::segment::types::{PointIdType, SeqNumberType};

type Tracker = UpdateOnlyAppendableIdTracker;
type ReadOnlyTracker = ReadOnlyAppendableIdTracker<MmapFile>;

fn num(id: u64) -> PointIdType {
    PointIdType::NumId(id)
}

fn uuid(id: u128) -> PointIdType {
    PointIdType::Uuid(Uuid::from_u128(id))
}

/// The end of the mappings log as the view a writer shares would report it. Sound only for a log
/// with no torn tail, which every caller here has.
fn log_end(segment_path: &Path) -> u64 {
    fs_err::metadata(mappings_path(segment_path)).unwrap().len()
}

/// Slots are handed out consecutively above the highest one in use: across calls, across tracker
/// instances resuming from a known maximum, and skipping deletes, which claim nothing.
#[test]
fn allocates_consecutive_slots() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();

    let mut tracker = Tracker::new(&MmapFs, dir.path(), None, [], 0).unwrap();

    // Deletes are recorded but claim no slot, so only inserts come back.
    assert_eq!(
        tracker.insert_operations(
            &MmapFs,
            &[Insert(num(10)), Delete(num(20)), Insert(uuid(11))]
        ),
        Ok(vec![(num(10), 0), (uuid(11), 1)]),
    );
    // A batch of deletes alone allocates nothing, and the next insert still
    // takes the slot right above the last one claimed.
    assert_eq!(
        tracker.insert_operations(&MmapFs, &[Delete(num(10))]),
        Ok(Vec::new()),
    );
    assert_eq!(
        tracker.insert_operations(&MmapFs, &[Insert(num(12))]),
        Ok(vec![(num(12), 2)]),
    );

    // Re-inserting a live id moves it to a fresh slot rather than rewriting its mapping.
    assert_eq!(
        tracker.insert_operations(&MmapFs, &[Insert(uuid(11))]),
        Ok(vec![(uuid(11), 3)]),
    );

    // A fresh tracker resuming from slot 3, and from the end of the log that handed it out,
    // continues above both.
    let mut resumed = Tracker::new(&MmapFs, dir.path(), Some(3), [], log_end(dir.path())).unwrap();
    assert_eq!(
        resumed.insert_operations(&MmapFs, &[Insert(num(13))]),
        Ok(vec![(num(13), 4)]),
    );

    // Nothing to record, nothing written.
    assert_eq!(tracker.insert_operations(&MmapFs, &[]), Ok(Vec::new()));
}

/// Append a torn entry to the mappings log: a valid entry header and part of the payload it
/// promises, which is what a write that died mid-entry leaves.
fn tear_the_log(segment_path: &Path) {
    let mut file = fs_err::OpenOptions::new()
        .append(true)
        .open(mappings_path(segment_path))
        .unwrap();
    // `MappingChangeType::InsertNum`, then 3 of the 12 bytes it announces.
    file.write_all(&[1, 0xAA, 0xBB, 0xCC]).unwrap();
}

/// A torn entry at the end of the mappings log is cut off by the next write rather than appended
/// after, which is the point of writing at the end of the *log* instead of the file. Left in place,
/// it would misframe every entry after.
#[test]
fn heals_a_torn_mappings_tail() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();
    let path = mappings_path(dir.path());

    let mut tracker = Tracker::new(&MmapFs, dir.path(), None, [], 0).unwrap();
    tracker
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .unwrap();

    let committed = fs_err::read(&path).unwrap();
    tear_the_log(dir.path());

    // A writer resumes from the log's end, which is below the torn bytes.
    let mut resumed =
        Tracker::new(&MmapFs, dir.path(), Some(0), [], committed.len() as u64).unwrap();
    assert_eq!(
        resumed.insert_operations(&MmapFs, &[Insert(num(11))]),
        Ok(vec![(num(11), 1)]),
    );

    // The entries before the tear are untouched, and the new one took the place of the torn bytes
    // instead of following them.
    let healed = fs_err::read(&path).unwrap();
    assert_eq!(healed[..committed.len()], committed);

    let (mappings, read_to) = load_mappings(&path, None).unwrap();
    assert_eq!(read_to, healed.len() as u64, "log must parse to its end");
    assert_eq!(
        mappings.internal_id_with_behavior(&num(10), DeferredBehavior::VisibleOnly),
        Some(0),
    );
    assert_eq!(
        mappings.internal_id_with_behavior(&num(11), DeferredBehavior::VisibleOnly),
        Some(1),
    );
}

/// A batch that landed unacknowledged is rewritten over itself, not after itself: the writer never
/// learned the first attempt landed, so it still holds the same slots and offset, and the retry
/// leaves one copy rather than two.
#[test]
fn re_appends_a_batch_that_landed_unacknowledged() {
    let landed = Builder::new().prefix("update_only").tempdir().unwrap();
    let retried = Builder::new().prefix("update_only").tempdir().unwrap();

    let batch = [Insert(num(10)), Delete(num(20)), Insert(uuid(11))];

    // One writer gets through the batch; another is left believing it did not, and runs the same
    // batch against the file the first one wrote.
    let mut writer = Tracker::new(&MmapFs, landed.path(), None, [], 0).unwrap();
    let inserted = writer.insert_operations(&MmapFs, &batch).unwrap();

    fs_err::copy(mappings_path(landed.path()), mappings_path(retried.path())).unwrap();
    let mut retry = Tracker::new(&MmapFs, retried.path(), None, [], 0).unwrap();

    // Same slots, and the same bytes in the log: the second attempt is the first one, not a
    // duplicate of it.
    assert_eq!(retry.insert_operations(&MmapFs, &batch), Ok(inserted));
    assert_eq!(
        fs_err::read(mappings_path(retried.path())).unwrap(),
        fs_err::read(mappings_path(landed.path())).unwrap(),
    );
}

/// A log the file cannot hold is refused, not healed: healing only drops bytes past the log's end,
/// and a file stopping short of it has none to drop.
#[test]
fn rejects_a_mappings_file_shorter_than_the_log() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();

    let mut tracker = Tracker::new(&MmapFs, dir.path(), None, [], 64).unwrap();
    tracker
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .expect_err("a log longer than its file must be rejected");

    assert_eq!(log_end(dir.path()), 0, "nothing may be appended");
}

/// The array can only grow at its end, and only over slots the log handed out: a covered slot
/// cannot be rewritten through an append, a slot cannot be given two versions, and a slot nobody
/// claimed cannot be published at all. None of the rejections leaves anything behind.
#[test]
fn versions_reject_rewrites_duplicates_and_unclaimed_slots() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();
    let path = versions_path(dir.path());

    let mut tracker = Tracker::new(&MmapFs, dir.path(), Some(2), [], 0).unwrap();
    tracker
        .set_internal_versions(&MmapFs, &[0, 1], &[100, 101])
        .unwrap();

    // The log claimed up to slot 2, so slot 3 is nobody's.
    tracker
        .set_internal_versions(&MmapFs, &[3], &[103])
        .expect_err("an unclaimed slot must be rejected");
    // Slot 1 is already committed.
    tracker
        .set_internal_versions(&MmapFs, &[1], &[111])
        .expect_err("a rewrite must be rejected");
    // The same slot twice in one call.
    tracker
        .set_internal_versions(&MmapFs, &[2, 2], &[102, 102])
        .expect_err("a duplicate must be rejected");
    // One id short of the versions it is paired with.
    tracker
        .set_internal_versions(&MmapFs, &[2], &[102, 103])
        .expect_err("mismatched lengths must be rejected");

    assert_eq!(load_versions(&path).unwrap(), vec![100, 101]);

    // The rejections left the array appendable.
    tracker
        .set_internal_versions(&MmapFs, &[2], &[102])
        .unwrap();
    assert_eq!(load_versions(&path).unwrap(), vec![100, 101, 102]);
}

/// Resume a writer from what a reader makes of the segment on disk, the way a caller reopening the
/// segment has to.
fn resume(segment_path: &Path) -> Tracker {
    let reader = ReadOnlyTracker::open(&MmapFs, segment_path, None).unwrap();
    Tracker::new(
        &MmapFs,
        segment_path,
        reader.max_claimed_internal_id(),
        reader.pending_inserts(),
        reader.mappings_read_to(),
    )
    .unwrap()
}

/// A claimed slot the call skips over is covered with [`DELETED_POINT_VERSION`] rather than
/// refused. The array is dense, so the slots above it cannot be published any other way.
///
/// [`DELETED_POINT_VERSION`]: crate::id_tracker::DELETED_POINT_VERSION
#[test]
fn fills_skipped_slots() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();
    let path = versions_path(dir.path());

    let mut tracker = Tracker::new(&MmapFs, dir.path(), None, [], 0).unwrap();
    tracker
        .insert_operations(
            &MmapFs,
            &[
                Insert(num(10)),
                Insert(num(11)),
                Insert(num(12)),
                Insert(num(13)),
            ],
        )
        .unwrap();

    // Slots 1 and 2 are skipped, one below the committed slot and one between.
    tracker
        .set_internal_versions(&MmapFs, &[0, 3], &[100, 103])
        .unwrap();

    assert_eq!(
        load_versions(&path).unwrap(),
        vec![100, DELETED_POINT_VERSION, DELETED_POINT_VERSION, 103],
    );
}

/// A slot is spoken for from the moment the log claims it, whatever becomes of the point: a writer
/// that claimed it may have written data at it under any component, so the next writer allocates
/// above it even once its external id is gone from the mapping and from the pending inserts alike.
#[test]
fn resumes_above_a_slot_claimed_and_then_deleted() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();

    let mut crashed = Tracker::new(&MmapFs, dir.path(), None, [], 0).unwrap();
    crashed
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .unwrap();
    crashed
        .set_internal_versions(&MmapFs, &[0], &[100])
        .unwrap();
    // Slot 1 is claimed, never versioned, and then retired.
    crashed
        .insert_operations(&MmapFs, &[Insert(num(11)), Delete(num(11))])
        .unwrap();

    let reader = ReadOnlyTracker::open(&MmapFs, dir.path(), None).unwrap();
    assert_eq!(reader.max_claimed_internal_id(), Some(1));
    assert_eq!(
        reader.pending_inserts().count(),
        0,
        "nothing left to retire"
    );
    assert_eq!(
        reader.internal_id_with_behavior(num(11), DeferredBehavior::VisibleOnly),
        None,
        "the point is gone, but its slot is not free",
    );

    assert_eq!(
        resume(dir.path()).insert_operations(&MmapFs, &[Insert(num(12))]),
        Ok(vec![(num(12), 2)]),
    );
}

/// A point on a slot the log claimed but no writer ever versioned is retired by the writer that
/// inherits it. Its data was left half-written, so it is in no state to be adopted, and the slot
/// has to be covered for the slots above it to be published at all.
///
/// Retiring is done by the time the writer exists, so no write path can reach the versions file
/// without it. And it is the retirement that keeps the point from surfacing, not the version its
/// slot ends up with: the slot is committed here with an ordinary version and the point stays gone.
#[test]
fn retires_inherited_pending_inserts() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();

    let mut crashed = Tracker::new(&MmapFs, dir.path(), None, [], 0).unwrap();
    crashed
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .unwrap();
    crashed
        .set_internal_versions(&MmapFs, &[0], &[100])
        .unwrap();
    // Slot 1 is claimed and its data left half-written; the writer stops here.
    crashed
        .insert_operations(&MmapFs, &[Insert(num(11))])
        .unwrap();

    let inherited = ReadOnlyTracker::open(&MmapFs, dir.path(), None).unwrap();
    assert_eq!(
        inherited.pending_inserts().collect::<Vec<_>>(),
        vec![PendingInsert {
            external_id: num(11),
            committed_slots: vec![],
        }],
        "a point new to the segment has no committed slot to fall back to",
    );

    // Construction alone retired it, before this writer has been asked to do anything.
    let mut resumed = resume(dir.path());
    assert_eq!(
        ReadOnlyTracker::open(&MmapFs, dir.path(), None)
            .unwrap()
            .pending_inserts()
            .count(),
        0,
    );

    // Slot 1 has to be covered for slot 2 to be published, and gets a version of its own here.
    assert_eq!(
        resumed.insert_operations(&MmapFs, &[Insert(num(12))]),
        Ok(vec![(num(12), 2)]),
    );
    resumed
        .set_internal_versions(&MmapFs, &[1, 2], &[101, 102])
        .unwrap();

    let reader = ReadOnlyTracker::open(&MmapFs, dir.path(), None).unwrap();
    assert_eq!(
        reader.internal_id_with_behavior(num(11), DeferredBehavior::VisibleOnly),
        None,
        "an abandoned point must not surface once its slot is covered",
    );
    assert!(reader.is_deleted_point(1));
    assert_eq!(
        reader.internal_id_with_behavior(num(10), DeferredBehavior::VisibleOnly),
        Some(0),
    );
    assert_eq!(
        reader.internal_id_with_behavior(num(12), DeferredBehavior::VisibleOnly),
        Some(2),
    );
    assert_eq!(reader.total_point_count(), 3);
    assert_eq!(reader.available_point_count(), 2);
}

/// An update whose new slot is abandoned costs only the update, not the point: the insert
/// superseded the committed slot in the mappings log alone, and no component tombstones a slot it
/// stores over, so the writer that inherits it points the id back at that slot. Readers and the
/// mutable tracker's own load, which replays the log through `set_link`, both resolve it there.
#[test]
fn an_abandoned_update_falls_back_to_the_committed_slot() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();

    let mut crashed = Tracker::new(&MmapFs, dir.path(), None, [], 0).unwrap();
    crashed
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .unwrap();
    crashed
        .set_internal_versions(&MmapFs, &[0], &[100])
        .unwrap();
    // Re-inserting moves the id to a fresh slot; the writer stops before the version that would
    // publish it.
    assert_eq!(
        crashed.insert_operations(&MmapFs, &[Insert(num(10))]),
        Ok(vec![(num(10), 1)]),
    );

    let inherited = ReadOnlyTracker::open(&MmapFs, dir.path(), None).unwrap();
    assert_eq!(
        inherited.pending_inserts().collect::<Vec<_>>(),
        vec![PendingInsert {
            external_id: num(10),
            committed_slots: vec![0],
        }],
    );
    assert_eq!(
        inherited.internal_id_with_behavior(num(10), DeferredBehavior::VisibleOnly),
        Some(0),
        "readers keep serving the committed slot while the new one is pending",
    );

    let mut resumed = resume(dir.path());
    resumed
        .insert_operations(&MmapFs, &[Insert(num(11))])
        .unwrap();
    // Covers the abandoned slot 1 as well.
    resumed
        .set_internal_versions(&MmapFs, &[2], &[102])
        .unwrap();

    let reader = ReadOnlyTracker::open(&MmapFs, dir.path(), None).unwrap();
    assert_eq!(reader.pending_inserts().count(), 0);
    assert_eq!(
        reader.internal_id_with_behavior(num(10), DeferredBehavior::VisibleOnly),
        Some(0),
        "the point falls back to its committed slot",
    );
    assert_eq!(reader.internal_version(0), Some(100));
    assert!(reader.is_deleted_point(1));
    assert_eq!(
        reader.internal_id_with_behavior(num(11), DeferredBehavior::VisibleOnly),
        Some(2),
    );
    assert_eq!(reader.available_point_count(), 2);

    let core = MutableIdTracker::open(dir.path(), None).unwrap();
    assert_eq!(
        core.internal_id_with_behavior(num(10), DeferredBehavior::VisibleOnly),
        Some(0),
    );
    assert!(!core.is_deleted_point(0));
    assert!(core.is_deleted_point(1));
    assert_eq!(core.available_point_count(), 2);
}

/// A reader that saw the abandoned insert pending goes on serving the committed slot, and reloading
/// past the writer's relink changes nothing it has to tell its components about.
#[test]
fn a_reader_reloads_past_a_relink_without_a_change() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();

    let mut crashed = Tracker::new(&MmapFs, dir.path(), None, [], 0).unwrap();
    crashed
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .unwrap();
    crashed
        .set_internal_versions(&MmapFs, &[0], &[100])
        .unwrap();
    crashed
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .unwrap();

    let mut reader = ReadOnlyTracker::open(&MmapFs, dir.path(), None).unwrap();

    let mut resumed = resume(dir.path());
    resumed
        .insert_operations(&MmapFs, &[Insert(num(11))])
        .unwrap();
    resumed
        .set_internal_versions(&MmapFs, &[2], &[102])
        .unwrap();

    let reloaded = reader.live_reload(&MmapFs, None).unwrap();
    assert_eq!(reloaded.inserted, vec![2], "only the new point is reported");
    assert_eq!(reloaded.deleted, Vec::<PointOffsetType>::new());
    reader.publish_staged();
    assert_eq!(
        reader.internal_id_with_behavior(num(10), DeferredBehavior::VisibleOnly),
        Some(0),
    );
    assert_eq!(
        reader.internal_id_with_behavior(num(11), DeferredBehavior::VisibleOnly),
        Some(2),
    );
}

/// A point with both an active and a deferred head resolves as it did before an update to it was
/// abandoned, and the mutable tracker's load, replaying the relink through `set_link`, counts only
/// the abandoned slot as a deleted deferred one.
#[test]
fn an_abandoned_update_keeps_both_heads_of_a_shadowed_point() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();
    // Slot 0 is active, every slot from 1 on is deferred.
    let cutoff = Some(1);

    let mut crashed = Tracker::new(&MmapFs, dir.path(), None, [], 0).unwrap();
    crashed
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .unwrap();
    crashed
        .set_internal_versions(&MmapFs, &[0], &[100])
        .unwrap();
    crashed
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .unwrap();
    crashed
        .set_internal_versions(&MmapFs, &[1], &[101])
        .unwrap();
    let before = ReadOnlyTracker::open(&MmapFs, dir.path(), cutoff).unwrap();
    let core_before = MutableIdTracker::open(dir.path(), cutoff).unwrap();
    // The update that gets abandoned: a third copy, deferred like the second.
    crashed
        .insert_operations(&MmapFs, &[Insert(num(10))])
        .unwrap();

    let reader_tracker = ReadOnlyTracker::open(&MmapFs, dir.path(), cutoff).unwrap();
    let mut resumed = Tracker::new(
        &MmapFs,
        dir.path(),
        reader_tracker.max_claimed_internal_id(),
        reader_tracker.pending_inserts(),
        reader_tracker.mappings_read_to(),
    )
    .unwrap();
    resumed
        .insert_operations(&MmapFs, &[Insert(num(11))])
        .unwrap();
    resumed
        .set_internal_versions(&MmapFs, &[3], &[103])
        .unwrap();

    let reader = ReadOnlyTracker::open(&MmapFs, dir.path(), cutoff).unwrap();
    let core = MutableIdTracker::open(dir.path(), cutoff).unwrap();
    for (label, behavior) in [
        ("visible only", DeferredBehavior::VisibleOnly),
        ("with deferred", DeferredBehavior::WithDeferred),
    ] {
        assert_eq!(
            reader.internal_id_with_behavior(num(10), behavior),
            before.internal_id_with_behavior(num(10), behavior),
            "reader, {label}",
        );
        assert_eq!(
            core.internal_id_with_behavior(num(10), behavior),
            core_before.internal_id_with_behavior(num(10), behavior),
            "core, {label}",
        );
    }
    assert!(core.is_deleted_point(2));
    // Slot 2, the abandoned one, is the only deferred slot deleted since.
    assert_eq!(
        core.deferred_deleted_count(),
        core_before.deferred_deleted_count() + 1,
    );
}

/// A write that dies mid-entry leaves the versions file ending inside a slot. The next write heals
/// it: those bytes are a slot no reader ever saw, so the new entries take their place.
#[test]
fn heals_a_partial_versions_tail() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();
    let path = versions_path(dir.path());

    let mut tracker = Tracker::new(&MmapFs, dir.path(), Some(3), [], 0).unwrap();
    tracker
        .set_internal_versions(&MmapFs, &[0, 1], &[100, 101])
        .unwrap();

    // Three bytes into slot 2, as a torn write would leave it.
    let mut torn = fs_err::read(&path).unwrap();
    torn.extend_from_slice(&[0xFF; 3]);
    fs_err::write(&path, &torn).unwrap();

    tracker
        .set_internal_versions(&MmapFs, &[2, 3], &[102, 103])
        .unwrap();

    // The committed slots survived, and the appended ones landed where the stray bytes were rather
    // than after them.
    assert_eq!(load_versions(&path).unwrap(), vec![100, 101, 102, 103]);
    assert_eq!(
        fs_err::metadata(&path).unwrap().len(),
        4 * size_of::<SeqNumberType>() as u64,
    );
}

/// Healing a file that holds nothing but a torn entry leaves it empty, and the array starts over at
/// slot 0.
#[test]
fn heals_a_versions_file_of_only_a_partial_tail() {
    let dir = Builder::new().prefix("update_only").tempdir().unwrap();
    let path = versions_path(dir.path());

    fs_err::write(&path, [0xFF; 5]).unwrap();

    let mut tracker = Tracker::new(&MmapFs, dir.path(), Some(0), [], 0).unwrap();
    tracker
        .set_internal_versions(&MmapFs, &[0], &[100])
        .unwrap();

    assert_eq!(load_versions(&path).unwrap(), vec![100]);
}

/// The append-only writer and the in-place one lay the versions file out identically, byte for
/// byte, so a change to either one's layout has to be made in both.
#[test]
fn both_writers_produce_the_same_versions_file() {
    let appended = Builder::new().prefix("update_only").tempdir().unwrap();
    let stored = Builder::new().prefix("mutable").tempdir().unwrap();

    let internal_ids: Vec<PointOffsetType> = vec![0, 1, 2, 3];
    let versions: Vec<SeqNumberType> = vec![100, 7, u64::MAX, 0];

    let mut tracker = Tracker::new(&MmapFs, appended.path(), Some(3), [], 0).unwrap();
    tracker
        .set_internal_versions(&MmapFs, &internal_ids, &versions)
        .unwrap();

    let changes: BTreeMap<PointOffsetType, SeqNumberType> = internal_ids
        .iter()
        .copied()
        .zip(versions.iter().copied())
        .collect();
    store_version_changes(&versions_path(stored.path()), &changes).unwrap();

    let appended_bytes = fs_err::read(versions_path(appended.path())).unwrap();
    assert_eq!(
        appended_bytes,
        fs_err::read(versions_path(stored.path())).unwrap(),
    );
    assert_eq!(
        appended_bytes.len(),
        versions.len() * size_of::<SeqNumberType>()
    );
    assert_eq!(
        load_versions(&versions_path(appended.path())).unwrap(),
        versions,
    );
}

/// Everything the two readers must agree on for the segments to be interchangeable.
///
/// Versions are compared for live points only. A deleted point's version is gone as far as readers
/// are concerned, and the two writers leave different things behind: [`MutableIdTracker::drop`]
/// overwrites the slot with [`DELETED_POINT_VERSION`], while the append-only writer cannot rewrite
/// a committed slot and leaves the point's original version there.
///
/// [`DELETED_POINT_VERSION`]: crate::id_tracker::DELETED_POINT_VERSION
fn assert_trackers_agree(appended: &ReadOnlyTracker, mutated: &ReadOnlyTracker) {
    assert_eq!(appended.total_point_count(), mutated.total_point_count());
    assert_eq!(
        appended.available_point_count(),
        mutated.available_point_count(),
    );
    assert_eq!(
        appended.deleted_point_count(),
        mutated.deleted_point_count()
    );

    for slot in 0..appended.total_point_count() as PointOffsetType {
        assert_eq!(
            appended.is_deleted_point(slot),
            mutated.is_deleted_point(slot),
            "deleted state mismatch at slot {slot}",
        );
        assert_eq!(
            appended.external_id(slot),
            mutated.external_id(slot),
            "external id mismatch at slot {slot}",
        );
        if !appended.is_deleted_point(slot) {
            assert_eq!(
                appended.internal_version(slot),
                mutated.internal_version(slot),
                "version mismatch at slot {slot}",
            );
        }
    }
}

/// The append-only writer and [`MutableIdTracker`] are two ways of producing the same segment
/// files. Drive both with the same points, versions and deletes, then read each back through
/// [`ReadOnlyAppendableIdTracker`]: the two views must be indistinguishable.
#[test]
fn matches_the_mutable_tracker() {
    let appended_dir = Builder::new().prefix("update_only").tempdir().unwrap();
    let mutated_dir = Builder::new().prefix("mutable").tempdir().unwrap();

    let mut writer = Tracker::new(&MmapFs, appended_dir.path(), None, [], 0).unwrap();
    let mut mutable = MutableIdTracker::open(mutated_dir.path(), None).unwrap();

    // The append-only writer hands out the slots; the mutable tracker is told to use exactly the
    // ones it handed out. A delete of an id that was never inserted is recorded by both and must
    // change nothing.
    let inserted = writer
        .insert_operations(
            &MmapFs,
            &[
                Insert(num(10)),
                Insert(uuid(11)),
                Insert(num(12)),
                Delete(num(99)),
            ],
        )
        .unwrap();
    let versions: Vec<SeqNumberType> = vec![100, 101, 102];
    let slots: Vec<PointOffsetType> = inserted.iter().map(|(_, slot)| *slot).collect();
    writer
        .set_internal_versions(&MmapFs, &slots, &versions)
        .unwrap();

    for ((external_id, slot), version) in inserted.iter().zip(&versions) {
        mutable.set_link(*external_id, *slot).unwrap();
        mutable.set_internal_version(*slot, *version).unwrap();
    }
    mutable.drop(num(99)).unwrap();

    // Then retire a live point through both.
    writer
        .insert_operations(&MmapFs, &[Delete(uuid(11))])
        .unwrap();
    mutable.drop(uuid(11)).unwrap();

    mutable.mapping_flusher()().unwrap();
    mutable.versions_flusher()().unwrap();

    let from_appended = ReadOnlyTracker::open(&MmapFs, appended_dir.path(), None).unwrap();
    let from_mutated = ReadOnlyTracker::open(&MmapFs, mutated_dir.path(), None).unwrap();

    assert_trackers_agree(&from_appended, &from_mutated);

    for external_id in [num(10), uuid(11), num(12), num(99)] {
        assert_eq!(
            from_appended.internal_id_with_behavior(external_id, DeferredBehavior::VisibleOnly),
            from_mutated.internal_id_with_behavior(external_id, DeferredBehavior::VisibleOnly),
            "resolution mismatch for {external_id}",
        );
    }

    // Three points were committed, one of them since retired.
    assert_eq!(from_appended.total_point_count(), 3);
    assert_eq!(from_appended.available_point_count(), 2);
    assert_eq!(
        from_appended.internal_id_with_behavior(num(10), DeferredBehavior::VisibleOnly),
        Some(0),
    );
    assert_eq!(
        from_appended.internal_id_with_behavior(uuid(11), DeferredBehavior::VisibleOnly),
        None,
    );
    assert_eq!(from_appended.internal_version(2), Some(102));
}
