//! The container half.
