//! crd
