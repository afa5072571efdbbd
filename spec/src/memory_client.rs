//! `memory_client`: who uses the shared memory port, with the id the RTL's `req_client` and the
//! co-simulation's request log carry, and the block that asks.
//!
//! One definition for the cycle model (its byte counters and request log), the RTL (the memory
//! port's response-routing ids) and the testbench (naming the block of a divergent request).

/// A client of the memory port: a kind of traffic and the block that moves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum MemClient {
    /// Activation loads (`act_load`).
    Activations,
    /// Column pointers (`colptr_fetch`).
    Colptr,
    /// FP16 values (`chunk_fetch`).
    Values,
    /// Run lengths (`chunk_fetch`).
    Runs,
    /// Output writes (`drain`).
    Outputs,
    /// Expert channel records, A8W4 (the expert unit's `channel_fetch`).
    ExpertChannels,
    /// The expert unit's calibration statistics and unrouted means, FP16 (`channel_fetch`).
    ExpertStats,
}

impl MemClient {
    /// Every client, in id order.
    pub const ALL: [MemClient; 7] = [
        MemClient::Outputs,
        MemClient::Activations,
        MemClient::Colptr,
        MemClient::Values,
        MemClient::Runs,
        MemClient::ExpertChannels,
        MemClient::ExpertStats,
    ];

    /// The core's clients (those of [`MemRequester::ALL`], the requesters the RTL's memory port
    /// serves today), in id order.
    pub const CORE: [MemClient; 5] =
        [MemClient::Outputs, MemClient::Activations, MemClient::Colptr, MemClient::Values, MemClient::Runs];

    /// The id on the RTL's `req_client` and in request logs.
    pub const fn id(self) -> u64 {
        match self {
            MemClient::Outputs => 0,
            MemClient::Activations => 1,
            MemClient::Colptr => 2,
            MemClient::Values => 3,
            MemClient::Runs => 4,
            MemClient::ExpertChannels => 5,
            MemClient::ExpertStats => 6,
        }
    }

    /// The client with id `id`, if any.
    pub fn from_id(id: u64) -> Option<MemClient> {
        MemClient::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The block that issues this client's requests (the name of its file in `model/` and `rtl/`).
    pub const fn block(self) -> &'static str {
        match self {
            MemClient::Outputs => "drain",
            MemClient::Activations => "act_load",
            MemClient::Colptr => "colptr_fetch",
            MemClient::Values | MemClient::Runs => "chunk_fetch",
            MemClient::ExpertChannels | MemClient::ExpertStats => "channel_fetch",
        }
    }

    /// "0 drain, 1 act_load, ...": the core's ids as the RTL's port documentation lists them.
    pub fn legend() -> String {
        let names = MemClient::CORE.map(|c| match c {
            MemClient::Values => "chunk_fetch values".to_string(),
            MemClient::Runs => "chunk_fetch runs".to_string(),
            c => c.block().to_string(),
        });
        MemClient::CORE.iter().zip(names).map(|(c, n)| format!("{} {n}", c.id())).collect::<Vec<_>>().join(", ")
    }
}

/// A requester on the memory port: a block with a request port of its own (`chunk_fetch` issues
/// both values and runs through one). The arbiter chooses among requesters; in
/// [`MemRequester::ALL`] order under fixed priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemRequester {
    /// `drain`: output writes. First (under fixed priority), so a full write buffer never stalls
    /// the accumulator longer than a burst.
    Drain,
    /// `act_load`: activation loads (needed before the scan can start).
    ActLoad,
    /// `colptr_fetch`: column pointers (needed before a column's slices can be fetched).
    ColptrFetch,
    /// `chunk_fetch`: values and run lengths.
    ChunkFetch,
}

impl MemRequester {
    /// Every requester of the core, in fixed-priority order (highest first).
    pub const ALL: [MemRequester; 4] =
        [MemRequester::Drain, MemRequester::ActLoad, MemRequester::ColptrFetch, MemRequester::ChunkFetch];

    /// Its position in [`MemRequester::ALL`] (the arbiter's port index).
    pub const fn index(self) -> usize {
        match self {
            MemRequester::Drain => 0,
            MemRequester::ActLoad => 1,
            MemRequester::ColptrFetch => 2,
            MemRequester::ChunkFetch => 3,
        }
    }

    /// Whether its requests are writes (the memory port sends the writer's data with them).
    /// One writer at most: the port has one write-data input.
    pub const fn writes(self) -> bool {
        matches!(self, MemRequester::Drain)
    }

    /// The clients whose requests it issues.
    pub const fn clients(self) -> &'static [MemClient] {
        match self {
            MemRequester::Drain => &[MemClient::Outputs],
            MemRequester::ActLoad => &[MemClient::Activations],
            MemRequester::ColptrFetch => &[MemClient::Colptr],
            MemRequester::ChunkFetch => &[MemClient::Values, MemClient::Runs],
        }
    }

    /// The block's name (its file in `model/` and `rtl/`).
    pub const fn block(self) -> &'static str {
        match self {
            MemRequester::Drain => "drain",
            MemRequester::ActLoad => "act_load",
            MemRequester::ColptrFetch => "colptr_fetch",
            MemRequester::ChunkFetch => "chunk_fetch",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_and_read_back() {
        for (i, c) in MemClient::ALL.into_iter().enumerate() {
            assert_eq!(c.id(), i as u64);
            assert_eq!(MemClient::from_id(c.id()), Some(c));
        }
        assert_eq!(MemClient::from_id(7), None);
        assert_eq!(MemRequester::ALL.iter().filter(|r| r.writes()).count(), 1, "one writer");
        let mut owned: Vec<MemClient> = MemRequester::ALL.iter().flat_map(|r| r.clients().iter().copied()).collect();
        owned.sort_by_key(|c| c.id());
        assert_eq!(owned, MemClient::CORE, "every core client has one requester");
        for (i, r) in MemRequester::ALL.into_iter().enumerate() {
            assert_eq!(r.index(), i);
        }
        // Each client's block is a requester's.
        for c in MemClient::CORE {
            assert!(MemRequester::ALL.iter().any(|r| r.block() == c.block()), "{c:?}");
        }
        assert_eq!(
            MemClient::legend(),
            "0 drain, 1 act_load, 2 colptr_fetch, 3 chunk_fetch values, 4 chunk_fetch runs"
        );
    }
}
