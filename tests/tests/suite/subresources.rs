//! subresources
