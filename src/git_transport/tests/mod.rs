//! Tests of the git transports against real servers.
