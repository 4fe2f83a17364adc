use gdrsim::app::load_config;
use gdrsim::config::PathKind;
use gdrsim::scenario::{self, Point};

#[test]
fn explore() {
    let cfg = load_config(None).unwrap();
    let topos = scenario::topologies(&cfg);
    for path in [PathKind::Staged, PathKind::GpuDirect] {
        let p = Point { scenario: 0, path, op: "write".into(), size: 4096, seed: 1 };
        let r = scenario::simulate_point(&cfg, &topos[0], &p);
        println!("=== {:?} lat {} host_mem {}", path, r.summary.lat_model_ps, r.summary.host_mem_bytes);
        for s in &r.recorder.spans { println!("span {:?} {} {} {} {} {} {}", s.stage, r.recorder.component_name(s.component), s.start, s.first_out, s.last_in, s.end, s.bytes); }
        for d in &r.recorder.descriptors { println!("desc {:?}", d); }
        for h in &r.recorder.hops { println!("hop m{} t{} {:<32} {:>10} {:>10} p{} u{} {}", h.msg, h.train, r.recorder.component_name(h.channel), h.start, h.end, h.payload, h.units, h.what); }
        for s in &r.summary.stages { println!("row {:?}", s); }
    }
}
