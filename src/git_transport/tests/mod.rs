//! Tests of the git transports: the checks before anything connects, and push/fetch
//! against real servers (git http-backend, sshd) checked with the git CLI.

mod fixtures;
mod http_server_tests;
mod http_tests;
mod limits_tests;
mod ssh_tests;
mod url_tests;
