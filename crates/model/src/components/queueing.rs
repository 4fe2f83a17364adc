//! Round trips under load: the wait a read's units meet behind other transfers' units on the
//! channels they cross, which the fluid model adds to a read's idle round trip before it
//! shares a read window by Little's law.
//!
//! Why: TLP by TLP, a read request that reaches a link busy with another source's TLPs waits for
//! the one in service (deficit round robin serves it next), and each completion of a train
//! sharing a link with another source's backlog alternates with that source's TLPs. The window
//! then holds its tags longer, and a window-bound flow moves less than the idle round trip
//! predicts (3 to 5% on links 65 to 90% loaded, measured TLP by TLP). Fluid rates carry no
//! queues, so the bulk transfers take the expected wait in closed form:
//!
//! - the first unit arrives at a random time: it waits the residual service of the unit in
//!   progress, `sum_j rho_j * S_j / 2` (other sources j at utilisation rho_j, unit service S_j);
//!   on the next channel of a route that the same source also takes, it arrives right behind
//!   the unit it waited for, which is still in service there: `rho_j * (S_j - S_me)` (the
//!   tandem queue);
//! - each further unit of the train waits for one unit of the others when they are backlogged,
//!   and less when they are not: `min(S_me * rho / (1 - rho), S)` with `rho = sum_j rho_j` and
//!   `S` the others' load-weighted unit service (the processor-sharing stretch of our own unit,
//!   capped at the one unit that round robin lets through between two of ours).

/// Another transfer's load on a channel: its utilisation (0..1) and the service time of one of
/// its units there, in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Load {
    pub rho: f64,
    pub unit_ps: f64,
    /// It also used the channel before this one on the route (tandem: the wait is correlated).
    pub tandem: bool,
}

/// The expected wait, in picoseconds, of a train of `units` units of service `my_unit_ps` each
/// on a channel that the `others` also use.
pub fn wait_ps(others: &[Load], units: u32, my_unit_ps: f64) -> f64 {
    let rho: f64 = others.iter().map(|l| l.rho).sum::<f64>().clamp(0.0, 0.999);
    if rho <= 0.0 || units == 0 {
        return 0.0;
    }
    let busy_service: f64 = others.iter().map(|l| l.rho * l.unit_ps).sum();
    let residual: f64 = others
        .iter()
        .map(|l| match l.tandem {
            false => l.rho * l.unit_ps / 2.0,
            true => l.rho * (l.unit_ps - my_unit_ps).max(0.0),
        })
        .sum();
    let their_unit = busy_service / others.iter().map(|l| l.rho).sum::<f64>();
    let per_next = (my_unit_ps * rho / (1.0 - rho)).min(their_unit);
    residual + (units - 1) as f64 * per_next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_channel_adds_nothing() {
        assert_eq!(wait_ps(&[], 4, 20.0), 0.0);
        let idle = Load {
            rho: 0.0,
            unit_ps: 20.0,
            tandem: false,
        };
        assert_eq!(wait_ps(&[idle], 4, 20.0), 0.0);
    }

    #[test]
    fn one_unit_waits_the_residual_of_the_unit_in_service() {
        // Busy 90% of the time with 20 ns units: on average 0.9 x 10 ns.
        let l = Load {
            rho: 0.9,
            unit_ps: 20_000.0,
            tandem: false,
        };
        assert!((wait_ps(&[l], 1, 3_000.0) - 9_000.0).abs() < 1e-6);
    }

    #[test]
    fn a_train_behind_a_backlog_alternates_with_it() {
        // Near saturation each further unit of ours waits one of theirs (20 ns): 3 x 20 ns plus
        // the first unit's residual.
        let l = Load {
            rho: 0.99,
            unit_ps: 20_000.0,
            tandem: false,
        };
        let w = wait_ps(&[l], 4, 20_000.0);
        assert!((w - (0.99 * 10_000.0 + 3.0 * 20_000.0)).abs() < 1e-6, "{w}");
    }

    #[test]
    fn a_light_load_stretches_each_unit_by_processor_sharing() {
        // A third of the link to the others: each unit of ours takes half again as long.
        let l = Load {
            rho: 1.0 / 3.0,
            unit_ps: 21_000.0,
            tandem: false,
        };
        let w = wait_ps(&[l], 4, 21_000.0);
        let want = 21_000.0 / 3.0 / 2.0 + 3.0 * 21_000.0 * 0.5;
        assert!((w - want).abs() < 1e-6, "{w} vs {want}");
    }

    #[test]
    fn behind_the_same_source_on_the_next_link_the_wait_is_the_rest_of_its_unit() {
        // A request (3 ns) that waited behind a write (20 ns) meets that write again in
        // service on the next link: it waits 17 ns whenever it met one (90% of the time).
        let l = Load {
            rho: 0.9,
            unit_ps: 20_000.0,
            tandem: true,
        };
        assert!((wait_ps(&[l], 1, 3_000.0) - 0.9 * 17_000.0).abs() < 1e-6);
    }
}
