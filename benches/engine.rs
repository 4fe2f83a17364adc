//! Speed figures: raw engine events per second, one 1 GiB message per path, one sweep point,
//! and the whole default sweep. Run with `cargo bench`.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use gdrsim::components::{Fabric, SimOptions};
use gdrsim::config::{self, PathKind};
use gdrsim::engine::{self, Handler, Queue};
use gdrsim::scenario::{self, Point};
use gdrsim::units::Ps;

fn main() {
    divan::main();
}

/// A synthetic load: 1024 timers, each rescheduling itself at a pseudo-random delay, until
/// `budget` events have been handled. Exercises the heap at a realistic depth.
struct Timers {
    left: u64,
    x: u64,
}

impl Handler for Timers {
    type Event = u32;
    fn handle(&mut self, now: Ps, ev: u32, q: &mut Queue<u32>) {
        if self.left == 0 {
            return;
        }
        self.left -= 1;
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        q.schedule(now + 1 + (self.x % 10_000), ev);
    }
}

const EVENTS: u64 = 1_000_000;

#[divan::bench]
fn engine_events(b: Bencher) {
    b.counter(ItemsCount::new(EVENTS)).bench(|| {
        let mut q = Queue::new();
        for i in 0..1024 {
            q.schedule(i as Ps, i);
        }
        let mut h = Timers {
            left: EVENTS,
            x: 0x9E37_79B9_7F4A_7C15,
        };
        black_box(engine::run(&mut h, &mut q))
    });
}

fn message(path: PathKind, size: u64, b: Bencher) {
    let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
    let topo = scenario::topology(&cfg);
    let built = scenario::paths::plan(&cfg, cfg.scenarios[0].first(), &topo, path, size).unwrap();
    let opts = SimOptions {
        tlp_granularity: false,
        coalesce_above: cfg.sim.coalesce_above,
        jitter: false,
        seed: 1,
        record: false,
    };
    b.bench(|| {
        let mut f = Fabric::new(&topo, &[&built.plan], opts);
        black_box(f.run(1, 1))
    });
}

/// One noise-free 1 GiB message on the default PIX placement.
#[divan::bench(args = [PathKind::Host, PathKind::Staged, PathKind::GpuDirect])]
fn one_gib_message(b: Bencher, path: PathKind) {
    message(path, 1 << 30, b);
}

/// One point of the default sweep as `gdrsim run` computes it (model, iterations, streaming).
#[divan::bench(args = [8u64, 1 << 20, 1 << 30])]
fn sweep_point_gpudirect(b: Bencher, size: u64) {
    let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
    let topo = scenario::topology(&cfg);
    let p = Point {
        scenario: 0,
        path: PathKind::GpuDirect,
        op: "write".into(),
        size,
        seed: 1,
    };
    b.bench(|| black_box(scenario::simulate_point(&cfg, &topo, &p).events));
}

/// The whole default sweep (279 points) on all cores, without writing files.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn default_sweep(b: Bencher) {
    let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
    b.bench(|| black_box(gdrsim::app::simulate(&cfg, 0, false).unwrap().len()));
}
