//! The run history of a tier: one compact record per run in a directory the repository keeps
//! (`ragate history add` / `show`), the drift statistic over it and the sparklines the summary
//! shows (`gate --history`).

pub mod drift;
pub mod record;
pub mod sparkline;
pub mod store;
pub mod table;
