//! A workload: flows that wait on flows. Message k of a gated flow starts once message
//! k - lag of each flow it names has been delivered (plus its GPU's reduction where it reduces),
//! and once its own window has a free slot. Its result is the completion time of the whole
//! workload (first start to the last delivery of every flow), with a critical chain that
//! crosses flows: which messages, reductions and waits, one after the other, set that time.
//!
//! Runs: the noise-free workload (completion time, stages, chain, links and bottleneck, each
//! flow's own figures) and jittered repeats of the whole workload (completion-time statistics,
//! bandwidth). Independent flows never come here: [`super::simulate_point`] keeps their
//! definitions.

use super::Point;
use super::paths;
use super::simulate::{PointResult, bottleneck, flow_row, iterations, link_rows, longest_limit};
use crate::components::Fabric;
use crate::config::{Config, Workload};
use crate::plan::Plan;
use crate::record::{Recorder, Span, Stage};
use crate::stats::{self, ChainRow, FlowRow, StageRow, Summary};
use crate::topology::Topology;
use crate::units::Ps;

/// What one run of the workload produced, per flow and message.
struct Timeline {
    /// Per flow, per message: start, delivery, window slot freed.
    msgs: Vec<Vec<(Ps, Ps, Ps)>>,
}

impl Timeline {
    fn of(out: &crate::components::Outcome) -> Self {
        Timeline {
            msgs: out
                .flows
                .iter()
                .map(|f| {
                    f.messages
                        .iter()
                        .zip(&f.finished)
                        .map(|(&(s, d), &e)| (s, d, e))
                        .collect()
                })
                .collect(),
        }
    }

    /// First start to last delivery over every flow.
    fn completion(&self) -> Ps {
        let all = self.msgs.iter().flatten();
        let first = all.clone().map(|m| m.0).min().unwrap_or(0);
        let last = all.map(|m| m.1).max().unwrap_or(0);
        last.saturating_sub(first)
    }
}

/// The fabric of one run of the workload: its flows' gates, reductions and message counts set.
fn fabric<'t>(
    cfg: &Config,
    topo: &'t Topology,
    plans: &[&'t Plan],
    w: &Workload,
    size: u64,
    opts: crate::components::SimOptions,
    sc: &crate::config::ScenarioSpec,
) -> Fabric<'t> {
    let mut f = Fabric::new(topo, plans, opts);
    for (i, d) in w.flows.iter().enumerate() {
        for &(on, lag) in &d.after {
            f.gate(i, on, lag);
        }
        if d.reduce {
            f.set_reduce(i, reduce_time(cfg, sc, i, size));
        }
        f.set_messages(i, messages(cfg, w, i, size));
    }
    f
}

/// Messages flow `i` carries: its `messages`, or the sweep's iterations for the size.
pub fn messages(cfg: &Config, w: &Workload, i: usize, size: u64) -> u32 {
    w.flows[i].messages.unwrap_or_else(|| iterations(cfg, size))
}

/// How long flow `i`'s reduction of `size` bytes takes on its sending GPU (0 without one: a
/// host-memory sender has no GPU to reduce on, and the config check refuses that).
fn reduce_time(cfg: &Config, sc: &crate::config::ScenarioSpec, i: usize, size: u64) -> Ps {
    let e = &sc.flows[i].sender;
    e.gpu
        .map(|g| cfg.hosts[e.host].machine.gpus[g].reduce.time(size))
        .unwrap_or(0)
}

/// Simulates point `p`, whose scenario is the workload `w`.
pub fn simulate(cfg: &Config, topo: &Topology, p: &Point, w: &Workload) -> PointResult {
    let sc = &cfg.scenarios[p.scenario];
    let built: Vec<paths::Built> = sc
        .flows
        .iter()
        .map(|f| paths::plan(cfg, f, topo, p.path, p.op, p.size).expect("plans were checked"))
        .collect();
    let plans: Vec<&Plan> = built.iter().map(|b| &b.plan).collect();
    let window = cfg.sim.stream_window.max(1);
    let mut events = 0;

    // The noise-free workload: completion time, stages, chain, links, each flow's figures.
    let opts = super::sim_options(cfg, p.seed).noise_free().recording();
    let mut f = fabric(cfg, topo, &plans, w, p.size, opts, sc);
    let model = f.run(window, 1);
    events += model.stats.events;
    let recorder = std::mem::take(&mut f.recorder);
    let line = Timeline::of(&model);
    let completion = line.completion();
    let chain = critical_chain(cfg, sc, w, &plans, &recorder, &line, p.size);
    let stages = stage_rows(&chain);

    // Jittered repeats of the whole workload.
    let total_msgs: u64 = line.msgs.iter().map(|m| m.len() as u64).sum();
    let n = iterations(cfg, p.size.saturating_mul(total_msgs.max(1)));
    let mut samples = Vec::with_capacity(n as usize);
    let mut own: Vec<Vec<Ps>> = vec![Vec::new(); sc.flows.len()];
    let mut past_horizon = model.stats.past_horizon;
    for i in 0..n {
        let opts = super::sim_options(cfg, super::mix(p.seed, &[1, i as u64]));
        let mut f = fabric(cfg, topo, &plans, w, p.size, opts, sc);
        let out = f.run(window, 1);
        events += out.stats.events;
        past_horizon |= out.stats.past_horizon;
        samples.push(Timeline::of(&out).completion());
        for (fl, o) in out.flows.iter().zip(own.iter_mut()) {
            o.extend(fl.messages.iter().map(|(s, e)| e - s));
        }
    }
    let lat = stats::latency_stats(&samples);
    let mean_s = lat.mean_us / 1e6;
    let bytes = p.size as f64 * total_msgs as f64;
    let (bw_gbps, msg_rate_mps) = if mean_s > 0.0 {
        (bytes / mean_s / 1e9, total_msgs as f64 / mean_s / 1e6)
    } else {
        (0.0, 0.0)
    };

    let flow_rows: Vec<FlowRow> = sc
        .flows
        .iter()
        .zip(&built)
        .enumerate()
        .map(|(i, (flow, b))| {
            let (s, e, _) = line.msgs[i][0];
            let pairs: Vec<(Ps, Ps)> = line.msgs[i].iter().map(|m| (m.0, m.1)).collect();
            let mut row = flow_row(cfg, topo, p, (i, flow, b), (e - s, &own[i], &pairs));
            row.bottleneck = longest_limit(topo, &model.flows[i].limits);
            row
        })
        .collect();
    let flows = sc.flows.len() as u64;
    let summary = Summary {
        scenario: sc.name.clone(),
        class: flow_rows[0].class,
        path: p.path,
        effective_path: flow_rows[0].effective_path,
        op: p.op,
        size_bytes: p.size,
        iterations: n,
        lat_model_ps: completion,
        lat,
        bw_gbps,
        msg_rate_mps,
        cpu_busy_ps: model.flows.iter().map(|f| f.cpu_busy).sum::<Ps>() / flows,
        host_mem_bytes: model.host_mem_bytes / total_msgs.max(1),
        setup_ps: built.iter().map(|b| b.setup).max().unwrap_or(0),
        stages,
        flows: flows as u32,
        bottleneck: bottleneck(topo, &model, completion, window),
        reason: built[0].reason.clone(),
        rnr_naks: model.rnr_naks,
        flow_rows,
        links: link_rows(topo, &model, completion),
        workload_ps: Some(completion),
        chain,
    };
    PointResult {
        summary,
        recorder,
        past_horizon,
        events,
    }
}

/// One piece of the critical chain before its stages are split out.
enum Piece {
    /// A message of a flow, from its start to its delivery (or to `until`, where the next
    /// piece began before the delivery).
    Message { flow: usize, msg: u32, until: Ps },
    /// A wait of a flow's message from `from` to `to`: its reduction, or a window slot.
    Wait {
        flow: usize,
        msg: u32,
        stage: Stage,
        from: Ps,
        to: Ps,
    },
}

/// The chain of messages, reductions and window waits that set the completion time, walking
/// back from the last delivery: at each message, what let it start (the gating delivery that
/// came last, plus the reduction; else the send completion that freed its window slot), until
/// a message that started at the workload's start. Returned in time order, split into stages,
/// each with its exclusive share: the shares sum exactly to the completion time.
fn critical_chain(
    cfg: &Config,
    sc: &crate::config::ScenarioSpec,
    w: &Workload,
    plans: &[&Plan],
    recorder: &Recorder,
    line: &Timeline,
    size: u64,
) -> Vec<ChainRow> {
    let origin = line.msgs.iter().flatten().map(|m| m.0).min().unwrap_or(0);
    // The last delivery; ties go to the lowest flow and message.
    let Some((mut flow, mut msg)) = (0..line.msgs.len())
        .flat_map(|f| (0..line.msgs[f].len()).map(move |k| (f, k)))
        .max_by_key(|&(f, k)| {
            (
                line.msgs[f][k].1,
                std::cmp::Reverse(f),
                std::cmp::Reverse(k),
            )
        })
    else {
        return Vec::new();
    };
    let mut pieces = Vec::new();
    let mut until = line.msgs[flow][msg].1;
    // Every step goes back to an earlier start or stops: at most one piece per message, plus
    // its wait.
    let bound: usize = line.msgs.iter().map(Vec::len).sum();
    for _ in 0..=bound {
        pieces.push(Piece::Message {
            flow,
            msg: msg as u32,
            until,
        });
        let start = line.msgs[flow][msg].0;
        if start <= origin {
            break;
        }
        let d = &w.flows[flow];
        let reduce = if d.reduce {
            reduce_time(cfg, sc, flow, size)
        } else {
            0
        };
        let gate = d
            .after
            .iter()
            .filter_map(|&(on, lag)| {
                let j = (msg as u32).checked_sub(lag)?;
                let j = j.min(line.msgs[on].len() as u32 - 1) as usize;
                let delivered = line.msgs[on][j].1;
                (delivered + reduce == start).then_some((on, j, delivered))
            })
            .next();
        if let Some((on, j, delivered)) = gate {
            if reduce > 0 {
                pieces.push(Piece::Wait {
                    flow,
                    msg: msg as u32,
                    stage: Stage::Reduce,
                    from: delivered,
                    to: start,
                });
            }
            (flow, msg, until) = (on, j, delivered);
            continue;
        }
        // Its window: the earlier message of its own flow whose send completion freed the slot.
        let slot = (0..msg)
            .filter(|&j| line.msgs[flow][j].2 == start)
            .max_by_key(|&j| line.msgs[flow][j].1);
        let Some(j) = slot else {
            pieces.push(Piece::Wait {
                flow,
                msg: msg as u32,
                stage: Stage::Window,
                from: origin,
                to: start,
            });
            break;
        };
        let delivered = line.msgs[flow][j].1;
        if delivered < start {
            pieces.push(Piece::Wait {
                flow,
                msg: msg as u32,
                stage: Stage::Window,
                from: delivered,
                to: start,
            });
        }
        (msg, until) = (j, delivered.min(start));
    }
    pieces.reverse();

    let mut spans = spans_by_message(recorder, line);
    let mut rows = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Message { flow, msg, until } => {
                let start = line.msgs[flow][msg as usize].0;
                let mine = std::mem::take(&mut spans[flow][msg as usize]);
                let shifted: Vec<Span> = mine
                    .iter()
                    .map(|s| Span {
                        start: s.start - start.min(s.start),
                        first_out: s.first_out - start.min(s.first_out),
                        last_in: s.last_in - start.min(s.last_in),
                        end: s.end - start.min(s.end),
                        ..(*s).clone()
                    })
                    .collect();
                let refs: Vec<&Span> = shifted.iter().collect();
                let stages = stats::critical_path(plans[flow], &refs, until - start, |c| {
                    recorder.component_name(c).to_string()
                });
                for s in stages.into_iter().filter(|s| s.critical_ps > 0) {
                    rows.push(ChainRow {
                        flow: w.flows[flow].name.clone(),
                        msg,
                        stage: s.stage,
                        component: s.component,
                        start_ps: s.start_ps + start - origin,
                        end_ps: s.end_ps + start - origin,
                        critical_ps: s.critical_ps,
                    });
                }
            }
            Piece::Wait {
                flow,
                msg,
                stage,
                from,
                to,
            } => rows.push(ChainRow {
                flow: w.flows[flow].name.clone(),
                msg,
                stage,
                component: match stage {
                    Stage::Reduce => gpu_name(cfg, &sc.flows[flow].sender),
                    _ => format!("{} window", w.flows[flow].name),
                },
                start_ps: from - origin,
                end_ps: to - origin,
                critical_ps: to - from,
            }),
        }
    }
    rows
}

/// "n0/gpu0": the GPU of an end (its host where it has none).
fn gpu_name(cfg: &Config, e: &crate::config::Endpoint) -> String {
    let h = &cfg.hosts[e.host];
    match e.gpu {
        Some(g) => format!("{}/{}", h.name, h.machine.gpus[g].name),
        None => h.name.clone(),
    }
}

/// The recorded spans grouped by flow and message.
fn spans_by_message<'r>(recorder: &'r Recorder, line: &Timeline) -> Vec<Vec<Vec<&'r Span>>> {
    let mut out: Vec<Vec<Vec<&Span>>> = line
        .msgs
        .iter()
        .map(|m| vec![Vec::new(); m.len()])
        .collect();
    for s in &recorder.spans {
        if let Some(slot) = out
            .get_mut(s.flow as usize)
            .and_then(|f| f.get_mut(s.msg as usize))
        {
            slot.push(s);
        }
    }
    out
}

/// stages.csv's rows of a workload: per stage kind, its summed share of the critical chain
/// (the shares sum to the completion time), the component of its largest share, and when it
/// first and last worked on the chain.
fn stage_rows(chain: &[ChainRow]) -> Vec<StageRow> {
    Stage::ALL
        .into_iter()
        .filter_map(|stage| {
            let of: Vec<&ChainRow> = chain.iter().filter(|c| c.stage == stage).collect();
            let main = of
                .iter()
                .max_by_key(|c| (c.critical_ps, std::cmp::Reverse(c.start_ps)))?;
            Some(StageRow {
                stage,
                component: main.component.clone(),
                start_ps: of.iter().map(|c| c.start_ps).min().unwrap_or(0),
                end_ps: of.iter().map(|c| c.end_ps).max().unwrap_or(0),
                critical_ps: of.iter().map(|c| c.critical_ps).sum(),
            })
        })
        .collect()
}
