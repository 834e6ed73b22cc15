//! Xous libc.
// FIXME(xous): link to headers needed.
