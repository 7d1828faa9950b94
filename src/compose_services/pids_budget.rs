//! The session's pids budget shared by its service set instead of multiplied: the holder
//! gets the least a container runs with, each service an equal share of the rest (at most
//! `SERVICE_PIDS_CAP`), and the session container everything left, so that the limits of
//! all the set's containers add up to the budget. A budget too small for that is refused.

use crate::error::{Error, Result};
use crate::runtime::resource_limits::MIN_PIDS;

/// The most a service gets: a database's connections each take a process, and the agent's
/// builds in the session container need the rest more.
pub const SERVICE_PIDS_CAP: i64 = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidsShares {
    pub holder: Option<i64>,
    pub service: Option<i64>,
    pub app: Option<i64>,
}

/// The shares of `budget` (`None`: no limit anywhere) among the holder, `services` services
/// and the session container.
pub fn share_pids(budget: Option<i64>, services: usize) -> Result<PidsShares> {
    let Some(budget) = budget else {
        return Ok(PidsShares {
            holder: None,
            service: None,
            app: None,
        });
    };
    let n = services as i64;
    let rest = budget - MIN_PIDS;
    let service = (rest / (n + 1)).min(SERVICE_PIDS_CAP);
    let app = rest - n * service;
    if service < MIN_PIDS || app < MIN_PIDS {
        return Err(Error::invalid_argument(format!(
            "resources.pids {budget} is too few for the session and its {n} service(s): the set shares it, and each of its {} containers needs at least {MIN_PIDS}",
            n + 2
        )));
    }
    Ok(PidsShares {
        holder: Some(MIN_PIDS),
        service: Some(service),
        app: Some(app),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_add_up_to_the_budget() {
        for (budget, n) in [(4096, 2), (4096, 0), (100, 3), (40, 2), (1 << 22, 30)] {
            let s = share_pids(Some(budget), n).unwrap();
            let total = s.holder.unwrap() + n as i64 * s.service.unwrap() + s.app.unwrap();
            assert_eq!(total, budget, "{budget} {n}");
            assert!(s.service.unwrap() >= MIN_PIDS && s.app.unwrap() >= s.service.unwrap());
        }
        assert_eq!(share_pids(Some(4096), 2).unwrap().service, Some(512));
        assert_eq!(
            share_pids(Some(4096), 2).unwrap().app,
            Some(4096 - 8 - 1024)
        );
    }

    #[test]
    fn no_budget_means_no_limits_and_too_small_a_budget_is_refused() {
        assert_eq!(share_pids(None, 3).unwrap().service, None);
        assert!(share_pids(Some(20), 2).is_err());
    }
}
