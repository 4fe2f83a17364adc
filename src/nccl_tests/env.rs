//! NCCL's environment as `gdrsim nccl-tests` reads it (the environment and `--env`): the
//! variables the model honours (NCCL_ALGO, NCCL_PROTO, NCCL_NET_GDR_LEVEL, NCCL_PXN_DISABLE,
//! NCCL_MIN/MAX_NCHANNELS, NCCL_IB_QPS_PER_CONNECTION), what each becomes in the generated study, and a refusal naming the
//! variable for a value the model cannot run.

use super::{CLI, parse_int};
use crate::config::ConfigError;
use crate::config::collective::{Algorithm, Protocol};

/// The NCCL environment variables the command reads, from the environment and `--env`.
pub const NCCL_VARS: [&str; 9] = [
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_READ",
    "NCCL_PXN_DISABLE",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_BUFFSIZE",
];

/// NCCL's settings the run uses, from the environment and `--env`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nccl {
    /// NCCL_PXN_DISABLE where set: 1 turns PXN off, 0 on (unset: the config's `[sim] pxn`,
    /// default on as NCCL's).
    pub pxn: Option<bool>,
    /// NCCL_NET_GDR_LEVEL as given and the model's class it allows GPUDirect up to (None: LOC,
    /// GPUDirect off, NCCL's host path for every GPU), with whether NCCL's P2C (NVLink-C2C) is
    /// allowed too.
    pub gdr_level: Option<(String, Option<crate::topology::Affinity>, bool)>,
    /// NCCL_NET_GDR_READ where set: 0 no GPUDirect reads on the send side, a positive value
    /// always, a negative one NCCL's default (`[sim] net_gdr_read`).
    pub gdr_read: Option<crate::config::GdrRead>,
    /// NCCL_MIN_NCHANNELS.
    pub min_channels: Option<u32>,
    /// NCCL_MAX_NCHANNELS.
    pub max_channels: Option<u32>,
    /// NCCL_PROTO where set (one protocol); unset, NCCL's tuner chooses per size.
    pub protocol: Option<Protocol>,
    /// NCCL_IB_QPS_PER_CONNECTION where set: the study's `[network] qps_per_connection` on a
    /// two-tier fabric (on the single-switch fabric every path is private and QPs change
    /// nothing).
    pub qps_per_connection: Option<u32>,
    /// NCCL_BUFFSIZE where set: the Simple protocol's buffer per connection, bytes (the
    /// collective's `buffsize`).
    pub buffsize: Option<u64>,
    /// NCCL_ALGO where set: Ring, Tree, or `Auto` for a list of both (NCCL's tuner chooses
    /// between them per size); unset: as both, NCCL's default.
    pub algorithm: Option<Algorithm>,
    /// NCCL_* variables set but not modelled (name=value).
    pub ignored: Vec<String>,
}

impl Nccl {
    /// NCCL's settings from `vars` (name, value; a later one wins), refusing what the model
    /// cannot run: NCCL_ALGO other than Ring, Tree or a list of them, NCCL_PROTO other than one of Simple, LL and
    /// LL128, a GDR level below PIX.
    pub fn from_vars(vars: &[(String, String)]) -> Result<Nccl, ConfigError> {
        let get = |name: &str| {
            vars.iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.trim().to_string())
        };
        let algorithm = get("NCCL_ALGO").map(|v| algorithm(&v)).transpose()?;
        let protocol = get("NCCL_PROTO")
            .map(|v| {
                [Protocol::Simple, Protocol::Ll, Protocol::Ll128]
                    .into_iter()
                    .find(|p| p.nccl_name().eq_ignore_ascii_case(&v))
                    .ok_or_else(|| {
                        ConfigError::new(
                            CLI,
                            "NCCL_PROTO",
                            "one of Simple, LL, LL128 (a single protocol) or unset (NCCL's \
                             tuner chooses per size)",
                            format!("{v:?}"),
                        )
                    })
            })
            .transpose()?;
        let pxn = get("NCCL_PXN_DISABLE")
            .map(|v| parse_int("NCCL_PXN_DISABLE", &v, 0, 1, "0 or 1").map(|d| d == 0))
            .transpose()?;
        let gdr_level = get("NCCL_NET_GDR_LEVEL")
            .map(|v| gdr_level(&v).map(|(a, c2c)| (v, a, c2c)))
            .transpose()?;
        let gdr_read = get("NCCL_NET_GDR_READ")
            .map(|v| {
                parse_int(
                    "NCCL_NET_GDR_READ",
                    &v,
                    i64::from(i32::MIN),
                    i64::from(i32::MAX),
                    "an integer (0: no GPUDirect reads, 1: always, negative: NCCL's default)",
                )
                .map(|r| match r {
                    0 => crate::config::GdrRead::Off,
                    r if r > 0 => crate::config::GdrRead::On,
                    _ => crate::config::GdrRead::Auto,
                })
            })
            .transpose()?;
        let channels = |name: &str| {
            get(name)
                .map(|v| {
                    parse_int(
                        name,
                        &v,
                        1,
                        crate::config::collective::MAX_CHANNELS.into(),
                        "channels",
                    )
                })
                .transpose()
                .map(|c| c.map(|c| c as u32))
        };
        let min_channels = channels("NCCL_MIN_NCHANNELS")?;
        let max_channels = channels("NCCL_MAX_NCHANNELS")?;
        let qps_per_connection = get("NCCL_IB_QPS_PER_CONNECTION")
            .map(|v| {
                let max = crate::config::limits::MAX_QPS_PER_CONNECTION;
                parse_int(
                    "NCCL_IB_QPS_PER_CONNECTION",
                    &v,
                    1,
                    max.into(),
                    "queue pairs per connection (NCCL_IB_MAX_QPS is 128)",
                )
                .map(|q| q as u32)
            })
            .transpose()?;
        let buffsize = get("NCCL_BUFFSIZE")
            .map(|v| {
                let (lo, hi) = crate::config::collective::BUFFSIZE_RANGE;
                parse_int(
                    "NCCL_BUFFSIZE",
                    &v,
                    lo as i64,
                    hi as i64,
                    "bytes of the Simple protocol's buffer per connection",
                )
                .map(|b| b as u64)
            })
            .transpose()?;
        let mut ignored: Vec<String> = vars
            .iter()
            .filter(|(n, _)| !NCCL_VARS.contains(&n.as_str()))
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        ignored.dedup();
        Ok(Nccl {
            pxn,
            gdr_level,
            gdr_read,
            min_channels,
            max_channels,
            protocol,
            qps_per_connection,
            buffsize,
            algorithm,
            ignored,
        })
    }

    /// The path the collective runs: NCCL's choice per GPU-NIC pair (`auto`), or its host path
    /// everywhere where NCCL_NET_GDR_LEVEL is LOC (`nccl_host`).
    pub fn path(&self) -> &'static str {
        match self.gdr_level {
            Some((_, None, _)) => "nccl_host",
            _ => "auto",
        }
    }

    /// The channels NCCL runs where its own choice is `auto`: at most NCCL_MAX_NCHANNELS, then
    /// duplicated up to NCCL_MIN_NCHANNELS (NCCL's `ncclTopoPostset`).
    pub fn channels(&self, auto: u32) -> u32 {
        let c = self.max_channels.map_or(auto, |m| auto.min(m));
        self.min_channels.map_or(c, |m| c.max(m))
    }
}

/// NCCL_NET_GDR_LEVEL (`ncclGetLevel`): a path type's name or the old numbering (0 LOC, 1 PIX,
/// 2 PXB, 3 PHB, 4 and above SYS), as the model's class GPUDirect is allowed up to (None for
/// LOC: GPUDirect off, the path `nccl_host`), and whether NCCL's P2C is allowed (P2C and
/// above). NCCL's PHB is any path through the CPU of the NIC's socket: the model's PHB and
/// NODE.
fn gdr_level(v: &str) -> Result<(Option<crate::topology::Affinity>, bool), ConfigError> {
    use crate::topology::Affinity as A;
    let word = match v.trim().parse::<u64>() {
        Ok(0) => "LOC".to_string(),
        Ok(1) => "PIX".into(),
        Ok(2) => "PXB".into(),
        Ok(3) => "PHB".into(),
        Ok(_) => "SYS".into(),
        Err(_) => v.trim().to_ascii_uppercase(),
    };
    match word.as_str() {
        "LOC" => Ok((None, false)),
        "PIX" => Ok((Some(A::Pix), false)),
        "PXB" | "PXN" => Ok((Some(A::Pxb), false)),
        "P2C" => Ok((Some(A::Pxb), true)),
        "PHB" => Ok((Some(A::Node), true)),
        "SYS" => Ok((Some(A::Sys), true)),
        "NVL" | "NVB" | "C2C" => Err(ConfigError::new(
            CLI,
            "NCCL_NET_GDR_LEVEL",
            "LOC, PIX, PXB, P2C, PHB or SYS (a GPU-NIC path is a PCIe one in the model)",
            format!("{v:?}"),
        )),
        _ => Err(ConfigError::new(
            CLI,
            "NCCL_NET_GDR_LEVEL",
            "one of NCCL's path types (LOC, PIX, PXB, P2C, PHB, SYS) or 0 to 4",
            format!("{v:?}"),
        )),
    }
}

/// NCCL_ALGO (NCCL's `parseList`: names separated by commas, any case): Ring, Tree, or both
/// (`Auto`: NCCL's tuner chooses between them per size); any other algorithm (NVLS, NVLSTree,
/// CollnetDirect, CollnetChain, PAT), a `^` exclusion list or a per-function list is refused,
/// naming the variable.
fn algorithm(v: &str) -> Result<Algorithm, ConfigError> {
    let refuse = || {
        ConfigError::new(
            CLI,
            "NCCL_ALGO",
            "Ring, Tree or Ring,Tree (the algorithms modelled), or unset",
            format!("{v:?}"),
        )
    };
    let (mut ring, mut tree) = (false, false);
    for word in v.split(',').map(str::trim) {
        if word.eq_ignore_ascii_case("ring") {
            ring = true;
        } else if word.eq_ignore_ascii_case("tree") {
            tree = true;
        } else {
            return Err(refuse());
        }
    }
    match (ring, tree) {
        (true, true) => Ok(Algorithm::Auto),
        (false, true) => Ok(Algorithm::Tree),
        (true, false) => Ok(Algorithm::Ring),
        (false, false) => Err(refuse()),
    }
}
