//! Operator tools: starting up with every setting checked (`startup`), `inspect` one key
//! anywhere (`inspect`), and `check` a whole prefix (`check`).
//!
//! These sit above `server`: they ask the server, in process, what it would answer
//! (`server::probe`), so an operator sees the same status and reason a player would.

pub mod check;
pub mod inspect;
pub mod startup;
