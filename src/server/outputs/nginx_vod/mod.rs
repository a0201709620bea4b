//! nginx-vod-module's names, answered: resolved against the title (`resolve.rs`), streams
//! of one or several tracks numbered as the module numbers them (`numbered.rs`), and the
//! answer of a name (`answer.rs`). Their grammar is parsed with the routes
//! (`route::nginx_vod`).

pub mod answer;
mod numbered;
mod resolve;
