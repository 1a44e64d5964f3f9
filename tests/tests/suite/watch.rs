//! watch
