//! `memory::arbiter`: which requester gets the memory port's one request of a cycle.
//!
//! Contract: [`Arbiter::grant`] is called once per cycle in which the port can accept a request,
//! with the requesters that have one ready (by port index, `lacuna_spec::MemRequester::index`
//! within a unit); it returns the one granted under the `Arch`'s policy:
//! - fixed priority: the lowest index;
//! - round robin: the first index after the last one granted, wrapping (the ring starts at 0),
//!   so a requester waits at most `ports - 1` grants.
//!
//! A cycle with no grant (no requester, or the port full) leaves the ring where it was.

use lacuna_spec::Arbitration;

/// The arbiter of one memory port.
#[derive(Clone, Debug)]
pub struct Arbiter {
    policy: Arbitration,
    ports: usize,
    /// Round robin: the index searched first.
    next: usize,
}

impl Arbiter {
    /// An arbiter over `ports` requesters.
    pub fn new(policy: Arbitration, ports: usize) -> Arbiter {
        Arbiter { policy, ports, next: 0 }
    }

    /// The requester that would be granted among those with `ready[i]` (`ready.len()` is the
    /// port count), without granting it (the RTL presents this request whether or not the
    /// memory takes it).
    pub fn choose(&self, ready: &[bool]) -> Option<usize> {
        debug_assert_eq!(ready.len(), self.ports);
        match self.policy {
            Arbitration::FixedPriority => ready.iter().position(|&r| r),
            Arbitration::RoundRobin => (0..self.ports).map(|i| (self.next + i) % self.ports).find(|&i| ready[i]),
        }
    }

    /// Grants [`Arbiter::choose`]'s requester (the memory takes its request).
    pub fn grant(&mut self, ready: &[bool]) -> Option<usize> {
        let i = self.choose(ready)?;
        self.next = (i + 1) % self.ports;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_priority_always_grants_the_lowest_ready_index() {
        let mut a = Arbiter::new(Arbitration::FixedPriority, 4);
        for _ in 0..3 {
            assert_eq!(a.grant(&[false, true, true, true]), Some(1));
        }
        assert_eq!(a.grant(&[false; 4]), None);
    }

    #[test]
    fn round_robin_grants_each_ready_requester_in_turn() {
        let mut a = Arbiter::new(Arbitration::RoundRobin, 4);
        let all = [true; 4];
        let grants: Vec<_> = (0..6).map(|_| a.grant(&all).unwrap()).collect();
        assert_eq!(grants, [0, 1, 2, 3, 0, 1]);
        // 2 is next; it is not ready, so 3 goes, then the ring wraps to 0.
        assert_eq!(a.grant(&[true, false, false, true]), Some(3));
        assert_eq!(a.grant(&[true, false, false, true]), Some(0));
        // No grant leaves the ring where it was.
        assert_eq!(a.grant(&[false; 4]), None);
        assert_eq!(a.grant(&all), Some(1));
    }
}
