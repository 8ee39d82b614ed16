mod point_mappings_ref;
mod tracker_enum;
mod trait_def;

pub mod delete_only_tracker_enum;
pub mod read_only_tracker_enum;

pub use point_mappings_ref::{PointMappingsGuard, PointMappingsRefEnum};
pub use tracker_enum::IdTrackerEnum;
pub use trait_def::{
    DELETED_POINT_VERSION, IdTracker, IdTrackerRead, default_external_ids_batch,
    default_internal_versions_batch,
};
