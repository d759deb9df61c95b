//! (to be filled)

use super::OptDef;

pub const OPTS: &[OptDef] = &[];
