//! The avalanche cost curve: reads `scaling --csv` files named
//! `avalanche-<N>.csv` (one per body count), prints ms/step, µs per body
//! and the main phases' shares per body count and thread count, and draws
//! ms/step against the body count on log-log axes (one line per thread
//! count, and the line of linear growth through the 4k point, dashed).
//!
//! `cargo run --release -p archipelago-benches --features reports --bin cost_curve -- OUT.svg perf-reports/avalanche-*.csv`

use plotters::prelude::*;

struct Row {
    bodies: usize,
    threads: u32,
    ms: f64,
    broad: f64,
    narrow: f64,
    setup: f64,
    velocity: f64,
}

fn read(path: &str) -> Vec<Row> {
    let bodies: usize = std::path::Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.strip_prefix("avalanche-"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{path}: expected avalanche-<N>.csv"));
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("{path}: no column {name}"))
    };
    let (t, ms, b, n, s, v) = (
        col("threads"),
        col("ms_per_step"),
        col("broad_phase_pct"),
        col("narrow_phase_pct"),
        col("setup_pct"),
        col("velocity_solve_pct"),
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |k: usize| f[k].parse::<f64>().expect("number");
            Row {
                bodies,
                threads: f[t].parse().expect("threads"),
                ms: num(ms),
                broad: num(b),
                narrow: num(n),
                setup: num(s),
                velocity: num(v),
            }
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (svg, files) = args
        .split_first()
        .expect("usage: cost_curve OUT.svg avalanche-N.csv...");
    let mut rows: Vec<Row> = files.iter().flat_map(|f| read(f)).collect();
    rows.sort_by_key(|r| (r.threads, r.bodies));
    println!("| bodies | threads | ms/step | µs per body | broad phase | narrow phase | setup | velocity solve |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in &rows {
        println!(
            "| {} | {} | {:.3} | {:.2} | {:.1}% | {:.1}% | {:.1}% | {:.1}% |",
            r.bodies,
            r.threads,
            r.ms,
            r.ms * 1e3 / r.bodies as f64,
            r.broad,
            r.narrow,
            r.setup,
            r.velocity
        );
    }
    let per_body = |n: usize, t: u32| {
        rows.iter()
            .find(|r| r.bodies == n && r.threads == t)
            .map(|r| r.ms / r.bodies as f64)
    };
    let largest = rows.iter().map(|r| r.bodies).max().expect("rows");
    if let (Some(a), Some(b)) = (per_body(4096, 1), per_body(largest, 1)) {
        println!("per body at {largest} / at 4096, 1 thread: {:.2}x", b / a);
    }
    let (lo_n, hi_n) = (
        rows.iter().map(|r| r.bodies).min().expect("rows") as f64,
        largest as f64,
    );
    let (lo_ms, hi_ms) = rows
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), r| (a.min(r.ms), b.max(r.ms)));
    let root = SVGBackend::new(svg, (900, 560)).into_drawing_area();
    root.fill(&WHITE).expect("draw");
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "avalanche: ms/step against bodies (log-log)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (lo_n * 0.8..hi_n * 1.25).log_scale(),
            (lo_ms * 0.7..hi_ms * 1.4).log_scale(),
        )
        .expect("chart");
    chart
        .configure_mesh()
        .x_desc("bodies")
        .y_desc("ms per step")
        .draw()
        .expect("mesh");
    let colors = [RED, BLUE, GREEN, MAGENTA];
    let mut threads: Vec<u32> = rows.iter().map(|r| r.threads).collect();
    threads.dedup();
    for (k, &t) in threads.iter().enumerate() {
        let c = colors[k % colors.len()];
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.threads == t)
            .map(|r| (r.bodies as f64, r.ms))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
            .expect("line")
            .label(format!("{t} thread(s)"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))
            .expect("points");
    }
    if let Some(a) = per_body(4096, 1) {
        chart
            .draw_series(DashedLineSeries::new(
                [lo_n, hi_n].map(|n| (n, a * n)),
                6,
                4,
                BLACK.mix(0.5).stroke_width(1),
            ))
            .expect("linear")
            .label("linear through 4k, 1 thread")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.5)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .expect("legend");
    root.present().expect("write svg");
}
