//! The config file's raw material, shared by `config` and the parts it configures (judges,
//! endpoints): the YAML library, key paths in errors, and `${VAR}` expansion.

pub mod expand;
pub mod keys;
pub mod yaml;
