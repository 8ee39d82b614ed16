use crate::common::types::PointOffsetType;

use super::StructPayloadIndex;
use crate::segment::common::operation_error::OperationResult;
use crate::segment::id_tracker::IdTrackerRead;
use crate::segment::index::BuildIndexResult;
use crate::segment::index::field_index::index_selector::wipe_field_dirs;
use crate::segment::index::field_index::{FieldIndex, FieldIndexBuilderTrait as _};
use crate::segment::payload_storage::PayloadStorageRead;
use crate::segment::types::{PayloadContainer, PayloadFieldSchema, PayloadKeyTypeRef};

impl StructPayloadIndex {
    pub fn build_field_indexes(
        &self,
        field: PayloadKeyTypeRef,
        payload_schema: &PayloadFieldSchema,
    ) -> OperationResult<Vec<FieldIndex>> {
        // A build must start from a clean slate: files can be left behind by a build
        // that crashed before its config entry was written, or by an index that
        // failed to load. Appendable builders open existing storages, so leftovers
        // would leak stale postings into the fresh build.
        wipe_field_dirs(&self.path, field)?;

        // Note: durability of the state this build reads (id tracker, payload storage)
        // is the caller's responsibility. Component flushers must not be invoked here:
        // flusher executions are serialized end-to-end with their capture by the shard
        // flush pipeline, and an extra flush run between another flusher's capture and
        // execution corrupts storage (Gridstore double-frees superseded blocks). The
        // live update path pins the observed state by flushing the whole segment under
        // that serialization before building (`shard::update::create_field_index`).
        let payload_storage = self.payload.borrow();
        let id_tracker_borrow = self.id_tracker.borrow();
        let selector = self.selector(payload_schema);
        let deleted = id_tracker_borrow.deleted_point_bitslice();
        let mut builders = selector.index_builder(field, payload_schema, deleted)?;

        // Special null index complements every index. Seed it with the segment's total
        // point count so `iter_falses()` returns points that are missing from payload
        // storage (e.g. after `clear_payload`), matching the regular "no value" points.
        // Bug: <https://github.com/qdrant/qdrant/issues/8723>
        let total_point_count = id_tracker_borrow.total_point_count();
        builders.push(selector.null_builder(field, payload_schema, total_point_count)?);

        for index in &mut builders {
            index.init()?;
            if !self.journaled {
                index.disable_journal();
            }
        }

        payload_storage.iter(|point_id, point_payload| {
            if id_tracker_borrow.is_deleted_point(point_id) {
                return Ok(true);
            }
            for builder in &mut builders {
                let values = point_payload.get_value(builder.input_path(field));
                builder.add_point(point_id, &values)?;
            }
            Ok(true)
        })?;

        builders
            .into_iter()
            .map(|builder| builder.finalize())
            .collect()
    }

    /// Build a field index by reusing its already-persisted files, loaded in
    /// the representation requested by `payload_schema` (honoring a changed
    /// `on_disk` flag), instead of rebuilding it from payload storage. Falls
    /// back to a full rebuild if the files cannot be loaded.
    pub(super) fn reuse_or_build_index(
        &self,
        field: PayloadKeyTypeRef,
        payload_schema: &PayloadFieldSchema,
    ) -> OperationResult<BuildIndexResult> {
        // Per-element indexes keep an element map next to the inner index, rebuilding
        // is simpler than reopening both in another mode
        if payload_schema.nested().is_some() {
            return Ok(BuildIndexResult::Built(
                self.build_field_indexes(field, payload_schema)?,
            ));
        }

        let loaded = {
            let selector = self.selector(payload_schema);
            let id_tracker = self.id_tracker.borrow();
            let deleted_points = id_tracker.deleted_point_bitslice();
            match selector.new_index(field, payload_schema, false, deleted_points)? {
                Some(mut indexes) => {
                    if let Some(null_index) = selector.new_null_index(
                        field,
                        false,
                        id_tracker.total_point_count(),
                        deleted_points,
                        selector.default_mutability(),
                    )? {
                        indexes.push(null_index);
                    }
                    Some(indexes)
                }
                None => None,
            }
        };

        match loaded {
            Some(indexes) => Ok(BuildIndexResult::Built(indexes)),
            None => Ok(BuildIndexResult::Built(
                self.build_field_indexes(field, payload_schema)?,
            )),
        }
    }

    pub(super) fn clear_index_for_point(
        &mut self,
        point_id: PointOffsetType,
    ) -> OperationResult<()> {
        for field_indexes in self.field_indexes.values_mut() {
            for index in field_indexes {
                index.remove_point(point_id)?;
            }
        }
        Ok(())
    }
}
