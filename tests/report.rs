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
