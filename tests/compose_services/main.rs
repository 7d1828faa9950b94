//! A compose service set sealed in one network namespace, against dockerd and Podman's
//! Docker-compatible service (provisioned by `npm test` with the offline `postgres` and
//! `redis` test images): `db` (PostgreSQL, healthcheck `pg_isready`), `cache` (Redis) and a
//! one-off `migrate` reached by name from an app container that joins the holder; nothing
//! in the set reaches a canary on the host's loopback or on a host address; the set is
//! labelled as the session's and gone after teardown, after `reapOrphans`, and after the
//! watchdog sees its owner SIGKILLed; a service that never becomes ready fails the start
//! with `SERVICE_NOT_READY` and leaves nothing; a service goes out only through the session's
//! egress relay, under its policy; a set's teardown takes its own volumes only. One test
//! binary, a file per concern.

mod egress;
mod failures;
mod sealing;
mod support;
mod teardown;
mod watchdog;
