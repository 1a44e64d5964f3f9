//! placeholder, see ARCHITECTURE.md
