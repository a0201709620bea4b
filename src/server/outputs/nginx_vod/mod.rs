//! nginx-vod-module's names, answered: resolved against the title (`resolve.rs`), streams
//! of one or several tracks numbered as the module numbers them (`numbered.rs`), and what
//! a name is answered with (`by_name.rs`): a numbered stream's answer, a redirect, or the
//! native resource it stands for, which the one dispatch answers. Their grammar is parsed
//! with the routes (`route::nginx_vod`).

pub mod by_name;
mod numbered;
mod resolve;
