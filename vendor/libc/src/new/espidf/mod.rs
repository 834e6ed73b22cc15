//! Expressif libc.
// FIXME(espidf): link to headers needed.
