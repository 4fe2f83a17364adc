//! `gdrsim perftest TEST`: the simulated machine measured the way linux-rdma/perftest measures
//! it, printed in perftest's layout, so a user can put a simulated run beside a real one.
//!
//! What is perftest's, from its source (src/perftest_parameters.c, print_report_bw and
//! print_report_lat):
//! - Bandwidth tests stream `-n` messages (default 5000) with `-t` in flight (default 128).
//!   *BW average* is all bytes over the time from the first post to the last completion;
//!   *BW peak* is the best rate over any run of messages from post i to completion j, j on the
//!   CQ-moderation grid (every cq_mod-th message, and the last); MiB/sec divides by 2^20 and
//!   `--report_gbits` gives 1e9 bit/s; *MsgRate* is messages per second / 1e6.
//! - CQ moderation (`-Q`/`--cq-mod`, src/perftest_parameters.c force_dependecies and
//!   src/perftest_resources.c run_iter_bw): a bandwidth test's poster asks for a completion on
//!   every cq_mod-th work request only (index k with k % cq_mod = cq_mod - 1, and the last),
//!   and each completion it polls frees cq_mod slots of its `-t` window. cq_mod is 100
//!   (DEF_CQ_MOD) unless `-Q` says otherwise; it is 1 for a size above 8192 B
//!   (MSG_SIZE_CQ_MOD_LIMIT) when `-Q` is not given and `-a` is not either (perftest keeps it
//!   for `-a`, whose sizes share one setting); it is never above the TX depth. An unsignaled
//!   work request's NIC writes no completion and the posting thread polls none, so at small
//!   sizes the thread posts about 100 messages per poll instead of one. RDMA Read tests print
//!   and report on perftest's setting but simulate a completion per read: the model's window
//!   of a read stream is the NIC's outstanding reads (max_rd_atomic), not perftest's deeper
//!   TX depth, and freeing it only every cq_mod-th read would idle the NIC where perftest's
//!   queue keeps it busy.
//! - Latency tests take `-n` samples (default 1000), `n - 1` post-to-post deltas of a ping-pong:
//!   one round trip, reported halved for Write and Send (RDMA Read reports the whole round trip).
//!   Sorted, the two largest dropped; t_typical is the median (perftest's rule for an even
//!   count), t_max the largest kept-plus-one as perftest indexes it, the percentiles index
//!   `ceil(n * 0.99)` and `ceil(n * 0.999)`. t_stdev is the true standard deviation (perftest
//!   truncates each difference to an int, a known quirk not copied).
//! - Inline: Write latency posts up to 220 B inline, Send latency 236 B (capped at the NIC's
//!   maximum), every other test and every `--use_cuda` test none. `--use_cuda` puts both
//!   buffers in GPU memory (the GPUDirect path), and `ib_write_lat --use_cuda` is refused as
//!   perftest refuses it.
//!
//! What is the model's: a round trip is the simulated one-way message there and the one back
//! (the hosts of a scenario are alike), each with the config's jitter; completions are the
//! messages' deliveries. The banner names the simulated NIC; no addresses are printed.

use anyhow::{Context, Result};

use crate::components::Fabric;
use crate::config::{Config, ConfigError, FlowSpec, Op, PathKind};
use crate::scenario::{self, paths};
use crate::study;
use crate::topology::Topology;
use crate::units::{PS_PER_S, Ps};

const LINE: &str =
    "---------------------------------------------------------------------------------------\n";
/// perftest's default CQ moderation of a bandwidth test (DEF_CQ_MOD).
pub const DEF_CQ_MOD: u32 = 100;
/// perftest's bounds on `-Q` (MIN_CQ_MOD, MAX_CQ_MOD).
const MIN_CQ_MOD: u32 = 1;
/// See [`MIN_CQ_MOD`].
const MAX_CQ_MOD: u32 = 1024;
/// Above this size, perftest turns CQ moderation off unless `-Q` or `-a` is given
/// (MSG_SIZE_CQ_MOD_LIMIT, bytes).
const MSG_SIZE_CQ_MOD_LIMIT: u64 = 8192;
/// perftest's LAT_MEASURE_TAIL: the largest samples dropped.
const TAIL: usize = 2;
/// The most messages a test may ask for.
pub const MAX_ITERS: u32 = 100_000;
/// perftest's MAX_QP_NUM.
const MAX_QPS: u32 = 16_384;
/// The most messages one size may simulate, over every QP and both directions (memory grows
/// with it: every message keeps its step times for the report).
pub const MAX_MESSAGES: u64 = 400_000;

/// One of perftest's tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// ib_write_lat: RDMA Write ping-pong latency.
    WriteLat,
    /// ib_write_bw: RDMA Write streaming bandwidth.
    WriteBw,
    /// ib_read_lat: RDMA Read latency (one request and its response per sample).
    ReadLat,
    /// ib_read_bw: RDMA Read streaming bandwidth.
    ReadBw,
    /// ib_send_lat: Send ping-pong latency.
    SendLat,
    /// ib_send_bw: Send streaming bandwidth.
    SendBw,
}

impl Test {
    /// Every test with the program name that selects it.
    pub const ALL: [(&'static str, Test); 6] = [
        ("ib_write_lat", Test::WriteLat),
        ("ib_write_bw", Test::WriteBw),
        ("ib_read_lat", Test::ReadLat),
        ("ib_read_bw", Test::ReadBw),
        ("ib_send_lat", Test::SendLat),
        ("ib_send_bw", Test::SendBw),
    ];

    /// The test of the program name `s` ("ib_write_bw"), or the error naming every program.
    pub fn parse(s: &str) -> Result<Test, ConfigError> {
        Test::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|&(_, t)| t)
            .ok_or_else(|| {
                let names: Vec<&str> = Test::ALL.iter().map(|(n, _)| *n).collect();
                ConfigError::new(
                    "command line",
                    "TEST",
                    format!("one of {}", names.join(", ")),
                    format!("{s:?}"),
                )
            })
    }

    fn latency(self) -> bool {
        matches!(self, Test::WriteLat | Test::ReadLat | Test::SendLat)
    }

    /// perftest's `-s` default: DEF_SIZE_LAT (2) for latency tests, DEF_SIZE_BW (65536) else.
    pub fn default_size(self) -> u64 {
        if self.latency() { 2 } else { 65536 }
    }

    fn op(self) -> Op {
        match self {
            Test::WriteLat | Test::WriteBw => Op::Write,
            Test::ReadLat | Test::ReadBw => Op::Read,
            Test::SendLat | Test::SendBw => Op::Send,
        }
    }

    /// perftest's banner title as ctx_print_test_info composes it: testsStr[verb], then
    /// `Bidirectional` for `-b`, then `BW` or `Latency`, then `Test`.
    fn title(self, duplex: bool) -> String {
        let verb = match self {
            Test::WriteLat | Test::WriteBw => "RDMA_Write",
            Test::ReadLat | Test::ReadBw => "RDMA_Read",
            Test::SendLat | Test::SendBw => "Send",
        };
        let kind = if self.latency() { "Latency" } else { "BW" };
        let both = if duplex { "Bidirectional " } else { "" };
        format!("{verb} {both}{kind} Test")
    }

    /// The inline size perftest picks (before the device's cap).
    fn inline(self, cuda: bool) -> u64 {
        match (self, cuda) {
            (_, true) => 0,
            (Test::WriteLat, _) => 220,
            (Test::SendLat, _) => 236,
            _ => 0,
        }
    }
}

/// perftest's bounds on `-t` (MIN_TX and MAX_TX in perftest_parameters.h).
const MIN_TX: u32 = 1;
/// See [`MIN_TX`].
const MAX_TX: u32 = 15_000;

/// What the command line asks.
#[derive(Clone, Debug)]
pub struct Args {
    /// The perftest program emulated.
    pub test: Test,
    /// The scenario to run on (by name; the config's first when absent).
    pub scenario: Option<String>,
    /// One size (`-s`), or every power of two from 2 B to 8 MiB (`-a`).
    pub sizes: Vec<u64>,
    /// Iterations (`-n`); perftest's default (1000 latency, 5000 bandwidth) when absent.
    pub iters: Option<u32>,
    /// Messages in flight per QP (`-t`); perftest's default (1 latency, 128 bandwidth) when
    /// absent.
    pub tx_depth: Option<u32>,
    /// Queue pairs (`-q`, bandwidth tests only): each streams `iters` messages with its own
    /// `tx_depth` window, all at once over the same NICs.
    pub qps: u32,
    /// Both directions at once (`-b`, bandwidth tests only): each side streams to the other
    /// and the figures are the sum of the two sides' reports, as perftest prints them.
    pub duplex: bool,
    /// Buffers in GPU memory (`--use_cuda`): GPUDirect RDMA instead of host memory.
    pub use_cuda: bool,
    /// Bandwidth in Gb/s (`--report_gbits`) instead of MiB/s.
    pub report_gbits: bool,
    /// CQ moderation asked for (`-Q`/`--cq-mod`, bandwidth tests): a completion every this
    /// many work requests. None: perftest's default ([`DEF_CQ_MOD`], or 1 above 8192 B
    /// without `-a`).
    pub cq_mod: Option<u32>,
    /// Every size of [`all_sizes`] (`-a`): perftest then keeps CQ moderation at every size.
    pub run_all: bool,
}

/// perftest's `-a` sizes: 2 B to 8 MiB.
pub fn all_sizes() -> Vec<u64> {
    (1..=23).map(|e| 1u64 << e).collect()
}

/// The config with every NIC posting inline up to `inline` bytes (at most its own maximum).
fn with_inline(cfg: &Config, inline: u64) -> Config {
    let mut c = cfg.clone();
    for h in &mut c.hosts {
        for n in &mut h.machine.nics {
            n.inline_max = n.inline_max.min(inline);
        }
    }
    c
}

/// How one size runs: the operation on which path, `total` messages per QP with `window` in
/// flight on each, over `qps` QPs, one way or both (`duplex`), a completion asked for every
/// `signal` messages, reported on perftest's CQ-moderation grid `cq_mod`.
#[derive(Clone, Copy)]
struct Stream {
    path: PathKind,
    op: Op,
    size: u64,
    window: u32,
    total: u32,
    qps: u32,
    duplex: bool,
    signal: u32,
    cq_mod: u32,
}

/// Per side (the scenario's sender, then with `duplex` its receiver sending back), the
/// (post, completion) times of its messages over all its QPs: posts in time order beside
/// completions in time order, as perftest's tposted and tcompleted arrays hold them (each
/// counts posts and polls, not messages: a polled completion counts the cq_mod messages it
/// stands for, so every message of its group completes when it does). All QPs of both sides
/// run at once on one fabric, so they share its links and NICs.
fn sides(cfg: &Config, si: usize, s: Stream) -> Result<Vec<Vec<(Ps, Ps)>>> {
    let topo = scenario::topology(cfg);
    let built = ways(cfg, &topo, si, s)?;
    let plans: Vec<&crate::plan::Plan> = built
        .iter()
        .flat_map(|b| std::iter::repeat_n(&b.plan, s.qps as usize))
        .collect();
    // perftest is one single-threaded process per side: its thread posts for every QP and
    // polls every CQ. A way's plan has its sender's thread, then its receiver's; the way back
    // swaps the processes.
    let processes: Vec<Vec<usize>> = (0..built.len())
        .flat_map(|w| std::iter::repeat_n(vec![w, 1 - w], s.qps as usize))
        .collect();
    let seed = scenario::point_seed(cfg.seed, si, s.path, s.op, s.size);
    let opts = scenario::sim_options(cfg, seed);
    let mut f = Fabric::with_processes(&topo, &plans, opts, &processes);
    for flow in 0..plans.len() {
        f.set_signal_every(flow, s.signal);
    }
    let out = f.run(s.window, s.total);
    if out.stats.past_horizon {
        anyhow::bail!("the run passed the simulator's horizon");
    }
    Ok(out
        .flows
        .chunks(s.qps as usize)
        .map(|side| {
            let mut posts: Vec<Ps> = side
                .iter()
                .flat_map(|f| f.messages.iter().map(|m| m.0))
                .collect();
            // Each signaled message's completion with the messages it completes (run_iter_bw:
            // ccnt += cq_mod, the last group what is left), polled in time order.
            let mut polled: Vec<(Ps, usize)> = side
                .iter()
                .flat_map(|f| {
                    let n = f.messages.len() as u32;
                    let k = s.signal.min(s.window).max(1) as usize;
                    let signaled = move |i: usize| {
                        crate::components::signaled(i as u32, s.signal, s.window, n)
                    };
                    f.messages
                        .iter()
                        .enumerate()
                        .filter(move |&(i, _)| signaled(i))
                        .map(move |(i, m)| (m.1, i + 1 - i / k * k))
                })
                .collect();
            polled.sort_unstable();
            let done = polled
                .into_iter()
                .flat_map(|(t, fill)| std::iter::repeat_n(t, fill));
            posts.sort_unstable();
            posts.into_iter().zip(done).collect()
        })
        .collect())
}

/// The paths of stream `s` on scenario `si`: the way there, and with `duplex` the way back.
fn ways(cfg: &Config, topo: &Topology, si: usize, s: Stream) -> Result<Vec<paths::Built>> {
    let flow = cfg.scenarios[si].first();
    let back = FlowSpec {
        sender: flow.receiver.clone(),
        receiver: flow.sender.clone(),
        qp: flow.qp,
    };
    let ways: &[&FlowSpec] = if s.duplex { &[flow, &back] } else { &[flow] };
    ways.iter()
        .map(|w| {
            paths::plan(cfg, w, topo, s.path, s.op, s.size)
                .with_context(|| format!("building the {} path", s.path.name()))
        })
        .collect()
}

/// BW peak, BW average (bytes/s) and MsgRate (Mpps), as print_report_bw computes them, the
/// peak's completions on the grid of CQ moderation `cq_mod`.
pub fn bw_figures(m: &[(Ps, Ps)], size: u64, cq_mod: u32) -> (f64, f64, f64) {
    let cq_mod = cq_mod.max(1) as usize;
    let n = m.len();
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let t0 = m[0].0;
    let last = m[n - 1].1;
    let secs = |ps: Ps| ps as f64 / PS_PER_S as f64;
    let total = secs(last.saturating_sub(t0)).max(1e-18);
    let avg = size as f64 * n as f64 / total;
    let rate = n as f64 / total / 1e6;
    let mut best = m[0].1.saturating_sub(m[0].0) as f64;
    for i in 0..n {
        let mut j = (i + 1).div_ceil(cq_mod) * cq_mod - 1;
        while j < n {
            best = best.min(m[j].1.saturating_sub(m[i].0) as f64 / (j - i + 1) as f64);
            j += cq_mod;
        }
        if !n.is_multiple_of(cq_mod) {
            let j = n - 1;
            best = best.min(m[j].1.saturating_sub(m[i].0) as f64 / (j - i + 1) as f64);
        }
    }
    let peak = size as f64 / (best.max(1.0) / PS_PER_S as f64);
    (peak, avg, rate)
}

/// perftest's latency figures of round-trip samples (µs, already divided by the RTT factor):
/// t_min, t_max, t_typical, t_avg, t_stdev, 99%, 99.9%.
pub fn lat_figures(mut delta: Vec<f64>) -> [f64; 7] {
    delta.sort_by(f64::total_cmp);
    let cnt = delta.len().saturating_sub(TAIL).max(1);
    let median = if (cnt - 1) % 2 == 1 {
        (delta[cnt / 2] + delta[cnt / 2 - 1]) / 2.0
    } else {
        delta[cnt / 2]
    };
    let avg = delta[..cnt].iter().sum::<f64>() / cnt as f64;
    let var = delta[..cnt].iter().map(|d| (avg - d).powi(2)).sum::<f64>() / cnt as f64;
    let at = |q: f64| delta[((cnt as f64 * q).ceil() as usize).min(delta.len() - 1)];
    [
        delta[0],
        delta[cnt.min(delta.len() - 1)],
        median,
        avg,
        var.sqrt(),
        at(0.99),
        at(0.999),
    ]
}

/// A test ready to run: its config (with perftest's inline size), scenario, iterations,
/// window and CQ moderation, after perftest's own refusals.
struct Setup {
    cfg: Config,
    si: usize,
    iters: u32,
    tx_depth: u32,
    inline: u64,
    cq_mod: u32,
}

/// The CQ moderation perftest settles on for a bandwidth test of `a` at `size` with
/// `tx_depth` in flight (force_dependecies): `-Q` or DEF_CQ_MOD, 1 above
/// MSG_SIZE_CQ_MOD_LIMIT where neither `-Q` nor `-a` was given, at most the TX depth. 1 for a
/// latency test (its ping-pong polls every message).
fn cq_mod(a: &Args, size: u64, tx_depth: u32) -> u32 {
    if a.latency() {
        return 1;
    }
    let mut c = a.cq_mod.unwrap_or(DEF_CQ_MOD);
    if size > MSG_SIZE_CQ_MOD_LIMIT && !a.run_all && a.cq_mod.is_none() {
        c = 1;
    }
    c.min(tx_depth).max(1)
}

fn setup(cfg: &Config, a: &Args) -> Result<Setup> {
    if a.use_cuda && a.test == Test::WriteLat {
        return Err(ConfigError::new(
            "command line",
            "--use_cuda",
            "a test perftest runs on device memory: perftest refuses ib_write_lat with CUDA \
             buffers (\"Perftest doesn't support device memory latency test with write (without \
             immediate) verb\")",
            "ib_write_lat --use_cuda",
        )
        .into());
    }
    let iters = a.iters.unwrap_or(if a.latency() { 1000 } else { 5000 });
    if !(2..=MAX_ITERS).contains(&iters) {
        return Err(ConfigError::new(
            "command line",
            "-n",
            format!("from 2 to {MAX_ITERS} iterations"),
            iters.to_string(),
        )
        .into());
    }
    if a.latency() && a.qps > 1 {
        return Err(ConfigError::new(
            "command line",
            "-q",
            "one QP: perftest refuses more on latency tests (\"Multiple QPs only available on bw \
             tests\")",
            a.qps.to_string(),
        )
        .into());
    }
    if a.latency() && a.duplex {
        return Err(ConfigError::new(
            "command line",
            "-b",
            "a bandwidth test: perftest refuses -b on latency tests (\"Bidirectional is only \
             available in BW test\")",
            format!(
                "{} -b",
                Test::ALL.iter().find(|t| t.1 == a.test).map_or("", |t| t.0)
            ),
        )
        .into());
    }
    if !(1..=MAX_QPS).contains(&a.qps) {
        return Err(ConfigError::new(
            "command line",
            "-q",
            format!("from 1 to {MAX_QPS} QPs (perftest's MIN_QP_NUM and MAX_QP_NUM)"),
            a.qps.to_string(),
        )
        .into());
    }
    let messages = u64::from(iters) * u64::from(a.qps) * if a.duplex { 2 } else { 1 };
    if messages > MAX_MESSAGES {
        return Err(ConfigError::new(
            "command line",
            "-n/-q/-b",
            format!(
                "at most {MAX_MESSAGES} messages per size over every QP and direction \
                 (iterations x QPs x 2 with -b)"
            ),
            format!(
                "{iters} x {}{} = {messages}",
                a.qps,
                if a.duplex { " x 2" } else { "" }
            ),
        )
        .into());
    }
    in_range(
        ("-t", a.tx_depth),
        MIN_TX..=MAX_TX,
        format!(
            "a TX depth from {MIN_TX} to {MAX_TX} (perftest: \" Tx depth should be between \
             {MIN_TX} and {MAX_TX}\")"
        ),
    )?;
    // perftest's force_dependecies: an iterations run never keeps more in flight than it posts.
    let tx_depth = a
        .tx_depth
        .unwrap_or(if a.latency() { 1 } else { 128 })
        .min(iters.max(1));
    in_range(
        ("-Q", a.cq_mod),
        MIN_CQ_MOD..=MAX_CQ_MOD,
        format!(
            "a CQ moderation from {MIN_CQ_MOD} to {MAX_CQ_MOD} (perftest's MIN_CQ_MOD and \
             MAX_CQ_MOD)"
        ),
    )?;
    // One setting for the run: perftest decides it once, on `-s` (or for `-a`).
    let cq_mod = cq_mod(a, a.sizes.first().copied().unwrap_or(0), tx_depth);
    let si = crate::inspect::network_scenario(cfg, a.scenario.as_deref(), "perftest")?;
    let inline = a.test.inline(a.use_cuda);
    Ok(Setup {
        cfg: with_inline(cfg, inline),
        si,
        iters,
        tx_depth,
        inline,
        cq_mod,
    })
}

/// Runs the test on the config's scenario and returns perftest's text.
pub fn run(cfg: &Config, a: &Args) -> Result<String> {
    let setup = setup(cfg, a)?;
    let Setup {
        ref cfg,
        si,
        iters,
        tx_depth,
        inline,
        cq_mod,
    } = setup;
    let flow = cfg.scenarios[si].first();
    let m = &cfg.hosts[flow.sender.host].machine;
    let nic = &m.nics[flow.sender.nic];
    let mut out = String::new();
    // force_dependecies' warning where -Q keeps moderation on a large message.
    if !a.latency()
        && a.cq_mod.is_some_and(|c| c > 1)
        && !a.run_all
        && a.sizes.iter().any(|&s| s > MSG_SIZE_CQ_MOD_LIMIT)
    {
        out.push_str(LINE);
        out.push_str("Warning: Large message requested and CQ moderation enabled\n");
        out.push_str("Warning: It can lead to inaccurate results\n");
    }
    // The banner as ctx_print_test_info prints it (the lines this model has values for).
    out.push_str(LINE);
    out.push_str(&format!("                    {}\n", a.test.title(a.duplex)));
    out.push_str(&format!(
        " Dual-port       : OFF\t\tDevice         : {}\n",
        nic.name
    ));
    out.push_str(&format!(
        " Number of qps   : {}\t\tTransport type : IB\n",
        a.qps
    ));
    out.push_str(" Connection type : RC\t\tUsing SRQ      : OFF\n");
    out.push_str(&format!(" TX depth        : {tx_depth}\n"));
    if !a.latency() {
        out.push_str(&format!(" CQ Moderation   : {cq_mod}\n"));
    }
    out.push_str(&format!(" Mtu             : {}[B]\n", nic.mtu));
    out.push_str(" Link type       : IB\n");
    if a.test.op() != Op::Read {
        out.push_str(&format!(
            " Max inline data : {}[B]\n",
            inline.min(nic.inline_max)
        ));
    } else {
        out.push_str(&format!(
            " Outstand reads  : {}\n",
            outstanding_reads(cfg, &flow.receiver)
        ));
    }
    out.push_str(LINE);
    if a.latency() {
        out.push_str(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n");
    } else {
        let unit = if a.report_gbits { "Gb/sec" } else { "MiB/sec" };
        out.push_str(&format!(
            " #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]\n"
        ));
    }
    let div = if a.report_gbits {
        125_000_000.0
    } else {
        1_048_576.0
    };
    for row in measure(&setup, a)? {
        out.push_str(&match row {
            Row::Lat { size, f } => format!(
                " {:<7} {}          {:<7.2}        {:<7.2}      {:<7.2}  \t       {:<7.2}     \t{:<7.2}\t\t{:<7.2} \t\t{:<7.2}\n",
                size, iters, f[0], f[1], f[2], f[3], f[4], f[5], f[6]
            ),
            Row::Bw { size, peak, avg, rate } => format!(
                " {:<7}    {:<10}       {:<7.2}            {:<7.2}\t\t     {:<7.6}\n",
                size,
                u64::from(iters) * u64::from(a.qps),
                peak / div,
                avg / div,
                rate
            ),
        });
    }
    out.push_str(LINE);
    Ok(out)
}

/// One size's figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Row {
    /// t_min, t_max, t_typical, t_avg, t_stdev, 99%, 99.9% (µs).
    Lat {
        /// Message size, in bytes.
        size: u64,
        /// The seven figures, in that order, in microseconds.
        f: [f64; 7],
    },
    /// BW peak and average (bytes/s), MsgRate (Mpps).
    Bw {
        /// Message size, in bytes.
        size: u64,
        /// Peak bandwidth, in bytes per second.
        peak: f64,
        /// Average bandwidth, in bytes per second.
        avg: f64,
        /// Message rate, in millions of messages per second.
        rate: f64,
    },
}

/// The RDMA Reads the NIC of endpoint `e` keeps in flight (its max_rd_atomic).
fn outstanding_reads(cfg: &Config, e: &crate::config::Endpoint) -> u32 {
    cfg.hosts[e.host].machine.nics[e.nic].max_rd_atomic
}

/// The run of each size of the test on scenario `si` of `cfg`: a latency test's round trips
/// one message at a time, a bandwidth test's messages `tx_depth` in flight per QP (RDMA Reads
/// no more than the NICs keep outstanding).
fn streams(s: &Setup, a: &Args) -> Vec<Stream> {
    let Setup {
        ref cfg,
        si,
        iters,
        tx_depth,
        cq_mod,
        ..
    } = *s;
    let path = if a.use_cuda {
        PathKind::GpuDirect
    } else {
        PathKind::Host
    };
    let op = a.test.op();
    let flow = cfg.scenarios[si].first();
    a.sizes
        .iter()
        .map(|&size| {
            let stream = Stream {
                path,
                op,
                size,
                window: tx_depth,
                total: iters,
                qps: a.qps,
                duplex: a.duplex,
                signal: 1,
                cq_mod,
            };
            if a.latency() {
                // A round trip: the message there and the one back; Read's is one message.
                let total = if op == Op::Read { iters } else { 2 * iters };
                return Stream {
                    window: 1,
                    total,
                    ..stream
                };
            }
            let mut window = tx_depth;
            if op == Op::Read {
                // Each initiator's reads in flight are capped by its NIC's max_rd_atomic.
                window = window.min(outstanding_reads(cfg, &flow.receiver));
                if a.duplex {
                    window = window.min(outstanding_reads(cfg, &flow.sender));
                }
                // A completion per read (see the module's note on CQ moderation).
                return Stream { window, ..stream };
            }
            Stream {
                window,
                signal: cq_mod,
                ..stream
            }
        })
        .collect()
}

/// The runs the test makes, one per size (every QP's messages, both ways with `-b`), each
/// named with its estimated events and memory.
pub fn runs(cfg: &Config, a: &Args) -> Result<Vec<(String, u64, u64)>> {
    let s = setup(cfg, a)?;
    let topo = scenario::topology(&s.cfg);
    streams(&s, a)
        .into_iter()
        .map(|st| {
            let built = ways(&s.cfg, &topo, s.si, st)?;
            let qps = st.qps as usize;
            let flows: Vec<(&crate::plan::Plan, u64)> = built
                .iter()
                .flat_map(|b| std::iter::repeat_n((&b.plan, u64::from(st.total)), qps))
                .collect();
            let window = u64::from(st.window);
            let (events, memory) = scenario::cost::fabric_run(&s.cfg, &flows, window);
            Ok((format!("{} B", st.size), events, memory))
        })
        .collect()
}

/// What the test is about to simulate, for the cost gate: its [`runs`], one after another.
pub fn work(cfg: &Config, a: &Args) -> Result<study::Work> {
    let runs = runs(cfg, a)?;
    let s = setup(cfg, a)?;
    let ways = if a.duplex { 2 } else { 1 };
    let qps = u64::from(a.qps) * ways;
    let over = format!(
        "{} messages over {qps} queue pair{} at {} size{}",
        u64::from(s.iters) * qps,
        if qps == 1 { "" } else { "s" },
        a.sizes.len(),
        if a.sizes.len() == 1 { "" } else { "s" },
    );
    let name = Test::ALL.iter().find(|t| t.1 == a.test).map_or("", |t| t.0);
    let cut = "fewer iterations (-n), queue pairs (-q) or sizes";
    Ok(study::runs_work(
        &format!("an {name} run"),
        over,
        &runs,
        cut,
        1,
    ))
}

/// The figures of every size of the test on scenario `si` of `cfg` (its inline already set).
fn measure(s: &Setup, a: &Args) -> Result<Vec<Row>> {
    let (cfg, si, iters) = (&s.cfg, s.si, s.iters);
    let op = a.test.op();
    let mut rows = Vec::new();
    for stream in streams(s, a) {
        let size = stream.size;
        if a.latency() {
            let msgs = sides(cfg, si, stream)?.swap_remove(0);
            let one: Vec<f64> = msgs.iter().map(|(s, e)| (e - s) as f64 / 1e6).collect();
            let delta: Vec<f64> = if op == Op::Read {
                one.into_iter().take(iters as usize - 1).collect()
            } else {
                one.chunks(2)
                    .take(iters as usize - 1)
                    .map(|p| p.iter().sum::<f64>() / 2.0)
                    .collect()
            };
            rows.push(Row::Lat {
                size,
                f: lat_figures(delta),
            });
        } else {
            let each = sides(cfg, si, stream)?;
            // print_full_bw_report adds the remote side's report to the local one.
            let (peak, avg, rate) = each.iter().fold((0.0, 0.0, 0.0), |(p, a, r), m| {
                let (mp, ma, mr) = bw_figures(m, size, stream.cq_mod);
                (p + mp, a + ma, r + mr)
            });
            rows.push(Row::Bw {
                size,
                peak,
                avg,
                rate,
            });
        }
    }
    Ok(rows)
}

/// The figures of the test as `run` prints them, without the text.
pub fn figures(cfg: &Config, a: &Args) -> Result<Vec<Row>> {
    let s = setup(cfg, a)?;
    measure(&s, a)
}

impl Args {
    fn latency(&self) -> bool {
        self.test.latency()
    }
}

/// `gdrsim perftest`: loads the config and runs the test, refused before any work where it
/// costs more than `limits`.
pub fn command(
    config: Option<&std::path::Path>,
    a: &Args,
    limits: &study::Limits,
) -> Result<String> {
    let cfg = study::load_config(config)?;
    study::admit(&study::source_name(config), &work(&cfg, a)?, limits)?;
    run(&cfg, a)
}

/// Refuses option `flag`'s value where it is given and outside `range` (what perftest accepts),
/// saying what is `expected`.
fn in_range(
    (flag, value): (&str, Option<u32>),
    range: std::ops::RangeInclusive<u32>,
    expected: String,
) -> Result<(), ConfigError> {
    match value {
        Some(v) if !range.contains(&v) => Err(ConfigError::new(
            "command line",
            flag,
            expected,
            v.to_string(),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// print_report_bw: the average is all bytes over first post to last completion; the peak
    /// the best run from a post to a completion on the CQ-moderation grid.
    #[test]
    fn bandwidth_figures_follow_perftest() {
        // 1000 messages of 4096 B posted at once, one completing every 100 ns after 2 µs.
        let m: Vec<(Ps, Ps)> = (0..1000u64).map(|i| (0, 2_000_000 + i * 100_000)).collect();
        let (peak, avg, rate) = bw_figures(&m, 4096, 100);
        let total = 101.9e-6;
        assert!((avg - 4096.0 * 1000.0 / total).abs() < 1.0, "average {avg}");
        assert!((rate - 1000.0 / total / 1e6).abs() < 1e-9, "{rate}");
        assert!(
            (peak - avg).abs() < 1.0,
            "all posted at 0: the longest run is the best"
        );
        // A slow first message (50 µs), then one every 100 ns, each posted when the one 128
        // before it completed: runs after the first message are faster than the whole, so the
        // peak is above the average, and no run beats the completion interval.
        let done = |k: u64| 50_000_000 + k * 100_000;
        let m: Vec<(Ps, Ps)> = (0..1000u64)
            .map(|i| (if i < 128 { 0 } else { done(i - 128) }, done(i)))
            .collect();
        let (peak, avg, _) = bw_figures(&m, 4096, 100);
        assert!(peak > avg * 1.01, "peak {peak} average {avg}");
        assert!(
            peak <= 4096.0 / 100e-9 * 1.0001,
            "no run beats the completion interval"
        );
    }

    /// force_dependecies' CQ moderation: DEF_CQ_MOD, 1 above 8192 B unless -Q or -a, never
    /// above the TX depth; 1 for a latency test.
    #[test]
    fn cq_moderation_follows_perftest() {
        let a = |test, cq_mod, run_all| Args {
            test,
            scenario: None,
            sizes: vec![64],
            iters: None,
            tx_depth: None,
            qps: 1,
            duplex: false,
            use_cuda: false,
            report_gbits: false,
            cq_mod,
            run_all,
        };
        assert_eq!(cq_mod(&a(Test::WriteBw, None, false), 64, 128), 100);
        assert_eq!(cq_mod(&a(Test::WriteBw, None, false), 8192, 128), 100);
        assert_eq!(cq_mod(&a(Test::WriteBw, None, false), 8193, 128), 1);
        assert_eq!(cq_mod(&a(Test::WriteBw, None, true), 1 << 23, 128), 100);
        assert_eq!(cq_mod(&a(Test::SendBw, Some(7), false), 1 << 20, 128), 7);
        assert_eq!(cq_mod(&a(Test::ReadBw, Some(500), false), 64, 128), 128);
        assert_eq!(cq_mod(&a(Test::WriteBw, None, false), 64, 10), 10);
        assert_eq!(cq_mod(&a(Test::WriteLat, None, false), 2, 1), 1);
    }

    /// ctx_print_test_info's title: verb, `Bidirectional` for -b, BW or Latency, `Test`.
    #[test]
    fn titles_follow_perftest() {
        assert_eq!(Test::WriteBw.title(false), "RDMA_Write BW Test");
        assert_eq!(Test::SendBw.title(true), "Send Bidirectional BW Test");
        assert_eq!(Test::ReadLat.title(false), "RDMA_Read Latency Test");
        for (name, t) in Test::ALL {
            let parsed = crate::measured::perftest_log::title(&t.title(false)).unwrap();
            assert_eq!(parsed.test, name, "the log reader reads our title back");
        }
    }

    /// print_report_lat: two largest dropped, median of an odd count, percentiles by ceil.
    #[test]
    fn latency_figures_follow_perftest() {
        let d: Vec<f64> = (1..=12).map(f64::from).collect(); // 12 samples: 10 kept
        let f = lat_figures(d);
        assert_eq!(f[0], 1.0);
        assert_eq!(f[1], 11.0, "t_max indexes the count kept, as perftest does");
        assert_eq!(f[2], 5.5, "median of 10 (perftest averages the middle two)");
        assert_eq!(f[3], 5.5);
        assert_eq!(f[5], 11.0);
    }
}
