//! The DMA requesters that keep reads in flight under a window of their own: each NIC's data
//! reads and its WQE fetches, each GPU copy engine's reads over PCIe and over NVLink. They are
//! numbered once per topology ([`ReadEngineId`]) so that a plan names a window by a number that
//! costs the same on 2 hosts as on 128, and [`Topology::owner_of`] says whose window a number
//! is, so that the fabric keeps each window in the device that owns it.

use super::{Topology, WQE_FETCH_READS};

/// A DMA requester's outstanding-read window: its index in [`Topology::read_windows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReadEngineId(pub u32);

impl ReadEngineId {
    /// Its index into per-window tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Whose window a [`ReadEngineId`] is, with the device's index over every host (NICs in host
/// order, GPUs in host order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadEngineOwner {
    /// NIC `n`'s payload reads (gathers, RDMA Read responses, flushes).
    NicData(usize),
    /// NIC `n`'s WQE fetches: a queue of its own, so that a WQE never waits behind the data
    /// reads of earlier messages.
    NicWqe(usize),
    /// GPU `g`'s copy engine reading over PCIe.
    CopyEngine(usize),
    /// GPU `g`'s copy engine reading peers over NVLink (a window of its own: NVLink keeps many
    /// more reads in flight than a PCIe requester).
    CopyEngineNvlink(usize),
}

impl Topology {
    /// Outstanding-read windows of every DMA requester with one: each NIC's data reads (host
    /// by host), each GPU's copy engine, each NIC's descriptor (WQE) fetches, then each GPU's
    /// copy engine again for its reads of peers over NVLink. [`Topology::nic_engine`],
    /// [`Topology::gpu_engine`], [`Topology::wqe_engine`] and [`Topology::gpu_nvlink_engine`]
    /// index it.
    pub fn read_windows(&self) -> &[u32] {
        &self.windows
    }

    /// [`Topology::read_windows`] from the hosts' specs.
    pub(super) fn windows_of_hosts(&self) -> Vec<u32> {
        let nics = self
            .hosts
            .iter()
            .flat_map(|h| h.spec.nics.iter().map(|n| n.read_window));
        let gpus = self
            .hosts
            .iter()
            .flat_map(|h| h.spec.gpus.iter().map(|g| g.copy_engine.read_window));
        let wqe = self
            .hosts
            .iter()
            .flat_map(|h| h.spec.nics.iter().map(|_| WQE_FETCH_READS));
        let nvlink = self
            .hosts
            .iter()
            .flat_map(|h| h.spec.gpus.iter().map(|g| g.copy_engine.nvlink_read_window));
        nics.chain(gpus).chain(wqe).chain(nvlink).collect()
    }

    /// Whose window read engine `e` is.
    pub fn owner_of(&self, e: ReadEngineId) -> ReadEngineOwner {
        let (nics, gpus) = (self.nic_count(), self.gpu_count());
        let e = e.index();
        if e < nics {
            ReadEngineOwner::NicData(e)
        } else if e < nics + gpus {
            ReadEngineOwner::CopyEngine(e - nics)
        } else if e < 2 * nics + gpus {
            ReadEngineOwner::NicWqe(e - nics - gpus)
        } else {
            ReadEngineOwner::CopyEngineNvlink(e - 2 * nics - gpus)
        }
    }

    /// What read engine `e` is, for reports: "node-a/nic0 read window".
    pub fn engine_name(&self, e: ReadEngineId) -> String {
        // The host whose items of a table of per-host offsets hold index `i`, and its item.
        let find = |before: &[usize], i: usize| {
            let h = before.partition_point(|&b| b <= i) - 1;
            (h, i - before[h])
        };
        let nic = |i: usize| {
            let (h, n) = find(&self.nics_before, i);
            format!("{}/{}", self.hosts[h].name, self.hosts[h].spec.nics[n].name)
        };
        let gpu = |i: usize| {
            let (h, g) = find(&self.gpus_before, i);
            format!("{}/{}", self.hosts[h].name, self.hosts[h].spec.gpus[g].name)
        };
        match self.owner_of(e) {
            ReadEngineOwner::NicData(n) => format!("{} read window", nic(n)),
            ReadEngineOwner::CopyEngine(g) => format!("{} copy engine read window", gpu(g)),
            ReadEngineOwner::NicWqe(n) => format!("{} WQE fetch window", nic(n)),
            ReadEngineOwner::CopyEngineNvlink(g) => {
                format!("{} copy engine NVLink read window", gpu(g))
            }
        }
    }

    /// NICs over every host.
    pub fn nic_count(&self) -> usize {
        self.nics_before[self.hosts.len()]
    }

    /// GPUs over every host.
    pub fn gpu_count(&self) -> usize {
        self.gpus_before[self.hosts.len()]
    }

    /// NIC `nic` of host `host`, numbered over every host.
    pub fn nic_index(&self, host: usize, nic: usize) -> usize {
        debug_assert!(nic < self.hosts[host].spec.nics.len());
        self.nics_before[host] + nic
    }

    /// GPU `gpu` of host `host`, numbered over every host.
    pub fn gpu_index(&self, host: usize, gpu: usize) -> usize {
        debug_assert!(gpu < self.hosts[host].spec.gpus.len());
        self.gpus_before[host] + gpu
    }

    /// NIC `n`'s (numbered over every host) read engines: payload reads, WQE fetches.
    pub fn nic_engines(&self, n: usize) -> (ReadEngineId, ReadEngineId) {
        (id(n), id(self.nic_count() + self.gpu_count() + n))
    }

    /// GPU `g`'s (numbered over every host) copy engine's read engines: over PCIe, over
    /// NVLink.
    pub fn copy_engines(&self, g: usize) -> (ReadEngineId, ReadEngineId) {
        let (nics, gpus) = (self.nic_count(), self.gpu_count());
        (id(nics + g), id(2 * nics + gpus + g))
    }

    /// The read engine of NIC `nic`'s WQE fetches.
    pub fn wqe_engine(&self, host: usize, nic: usize) -> ReadEngineId {
        self.nic_engines(self.nic_index(host, nic)).1
    }

    /// The read engine of the copy engine of GPU `gpu` of host `host` for its reads of peers
    /// over NVLink.
    pub fn gpu_nvlink_engine(&self, host: usize, gpu: usize) -> ReadEngineId {
        self.copy_engines(self.gpu_index(host, gpu)).1
    }

    /// The read engine of NIC `nic` of host `host` (its payload reads).
    pub fn nic_engine(&self, host: usize, nic: usize) -> ReadEngineId {
        self.nic_engines(self.nic_index(host, nic)).0
    }

    /// The read engine of the copy engine of GPU `gpu` of host `host`.
    pub fn gpu_engine(&self, host: usize, gpu: usize) -> ReadEngineId {
        self.copy_engines(self.gpu_index(host, gpu)).0
    }
}

/// A read engine's number (a topology has far fewer than 2^32 windows: 2 per NIC and per GPU).
fn id(e: usize) -> ReadEngineId {
    ReadEngineId(u32::try_from(e).expect("fewer than 2^32 read windows"))
}
