//! The review-ready outputs of a real run of the default config: every chart in both formats,
//! readable (title and axis text present, PNG of the configured size and not blank), and a
//! report.md whose sections exist and whose links all resolve.

use std::path::Path;

fn run_default(dir: &Path) {
    gdrsim::app::run(None, Some(dir), None, 0, true, "cargo run --release").expect("default run");
}

/// Width, height and RGBA-ish pixels of a PNG.
fn decode_png(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let px = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|c| [c[0], c[c.len().min(2) - 1], c[c.len().min(3) - 1]])
        .collect();
    (info.width, info.height, px)
}

#[test]
fn default_run_writes_readable_charts_and_a_consistent_report() {
    let dir = std::env::temp_dir().join(format!("gdrsim-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    run_default(&dir);
    let titles = [
        ("latency", "latency"),
        ("bandwidth", "andwidth"),
        ("speedup", "peedup"),
        ("breakdown", "time goes"),
        ("scenarios", "cenario"),
    ];
    for (chart, title_word) in titles {
        let svg = std::fs::read_to_string(dir.join(format!("{chart}.svg"))).unwrap();
        assert!(
            svg.trim_start().starts_with("<svg") || svg.trim_start().starts_with("<?xml"),
            "{chart}.svg is not SVG"
        );
        assert!(
            svg.trim_end().ends_with("</svg>"),
            "{chart}.svg is truncated"
        );
        assert_eq!(svg.matches("<svg").count(), svg.matches("</svg>").count());
        assert!(svg.contains(title_word), "{chart}.svg lacks its title");
        assert!(svg.contains("H100"), "{chart}.svg title names the hardware");
        let (w, h, px) = decode_png(&dir.join(format!("{chart}.png")));
        assert_eq!((w, h), (1600, 1000), "{chart}.png size");
        let ink = |p: &[u8; 3]| p.iter().any(|&c| c < 200);
        let all = px.iter().filter(|p| ink(p)).count();
        assert!(
            all > (w * h) as usize / 100,
            "{chart}.png is nearly blank ({all} ink pixels)"
        );
        let title_band = px[..(w * h / 12) as usize]
            .iter()
            .filter(|p| ink(p))
            .count();
        assert!(
            title_band > 500,
            "{chart}.png has no title text ({title_band} ink pixels in the top band)"
        );
    }
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for section in [
        "## What was simulated",
        "## Key results",
        "## Crossovers",
        "## Where the time goes",
        "## Charts",
        "## Reproduce",
    ] {
        assert!(report.contains(section), "report.md lacks {section}");
    }
    assert!(report.contains("cargo run --release"));
    // Every relative link or image resolves to a file of the run.
    let mut links = 0;
    for part in report.split("](").skip(1) {
        let target = part.split(')').next().unwrap();
        if target.starts_with("http") || target.starts_with('#') {
            continue;
        }
        links += 1;
        assert!(
            dir.join(target).exists(),
            "report.md links {target}, which does not exist"
        );
    }
    assert!(links >= 10, "report.md embeds the charts ({links} links)");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Where the NIC's root complex caps peer-to-peer reads (80 Gb/s on PHB), GPUDirect wins small
/// messages and pipelined staging wins large ones: report.md names the crossover against
/// `staged_pipelined` and the speedup chart marks it (its headline and a dashed line).
#[test]
fn a_p2p_read_cap_gives_a_crossover_with_pipelined_staging_that_report_and_chart_mark() {
    let dir = std::env::temp_dir().join(format!("gdrsim-cap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let rc0 = "name = \"rc0\"\nsocket = \"cpu0\"\nlatency_ns = 200                  # calibrated to C10/C11 (64 B DMA read ~0.55 us)\np2p_read = true";
    let mut text = gdrsim::config::DEFAULT_TOML.to_string();
    for (from, to) in [
        (rc0, format!("{rc0}\np2p_read_rate_gbps = 80")),
        (
            "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
            "sizes = { from = \"4KiB\", to = \"64MiB\", factor = 4 }".into(),
        ),
        (
            "paths = [\"host\", \"staged\", \"gpudirect\"]",
            "paths = [\"staged_pipelined\", \"gpudirect\"]".into(),
        ),
        (
            "charts = [\"latency\", \"bandwidth\", \"speedup\", \"breakdown\", \"scenarios\"]",
            "charts = [\"speedup\"]".into(),
        ),
        ("formats = [\"svg\", \"png\"]", "formats = [\"svg\"]".into()),
    ] {
        assert!(text.contains(from), "default.toml lacks {from}");
        text = text.replacen(from, &to, 1);
    }
    let cfg = dir.join("cap.toml");
    std::fs::write(&cfg, text).unwrap();
    let out = dir.join("out");
    gdrsim::app::run(Some(&cfg), Some(&out), None, 0, true, "test").expect("capped run");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let line = md
        .lines()
        .find(|l| l.starts_with("- **PHB vs staged_pipelined**, latency:"))
        .unwrap_or_else(|| panic!("no PHB latency line against the pipeline:\n{md}"));
    assert!(
        line.contains("GPUDirect wins up to") && line.contains("staged_pipelined from"),
        "{line}"
    );
    let svg = std::fs::read_to_string(out.join("speedup.svg")).unwrap();
    assert!(
        svg.contains("Latency: staged_pipelined wins at ≥") && svg.contains(" on PHB."),
        "the speedup chart does not mark the PHB crossover"
    );
    assert!(svg.contains("dashed: chunked and pipelined"), "subtitle");
    let _ = std::fs::remove_dir_all(&dir);
}
