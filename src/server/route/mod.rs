//! Request paths to typed routes: vodpack's own `/vod/KEY/...` names and the service
//! routes (`paths.rs`), nginx-vod-module's URL grammar under its locations
//! (`nginx_vod.rs`, with its file names and urlsets in `nginx_names.rs`), and why a path is
//! not a route (`path_error.rs`). Parsing only: nothing here reads the source.

pub mod nginx_names;
pub mod nginx_vod;
pub mod path_error;
pub mod paths;
