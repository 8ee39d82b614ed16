mod point;
mod text_query;
mod vector;

pub use point::*;
pub use text_query::*;
pub use vector::*;
