//! Turns `scaling --csv` files into perf-reports' Markdown table and an SVG
//! plot of speedup against threads (one line per scene, plus the ideal).
//!
//! `cargo run --release -p archipelago-benches --features reports --bin report -- OUT.md OUT.svg A.csv B.csv ...`

use plotters::prelude::*;
use std::fmt::Write as _;

struct Row {
    scene: String,
    threads: u32,
    ms: f64,
    min: f64,
    max: f64,
    speedup: f64,
    efficiency: f64,
    hash: String,
    matches: String,
    parallelism: f64,
    oversubscribed: String,
}

fn read(path: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |n: &str| {
        header
            .iter()
            .position(|h| *h == n)
            .unwrap_or_else(|| panic!("{path}: no column {n}"))
    };
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |n: &str| f[col(n)].parse::<f64>().expect("number");
            Row {
                scene: f[col("scene")].to_string(),
                threads: f[col("threads")].parse().expect("threads"),
                ms: num("ms_per_step"),
                min: num("min_ms"),
                max: num("max_ms"),
                speedup: num("speedup"),
                efficiency: num("efficiency"),
                hash: f[col("hash")].to_string(),
                matches: f[col("matches_1_thread")].to_string(),
                parallelism: num("parallelism"),
                oversubscribed: f[col("oversubscribed")].to_string(),
            }
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: report OUT.md OUT.svg A.csv [B.csv ...]");
        std::process::exit(2);
    }
    let (md_path, svg_path) = (&args[0], &args[1]);
    let tables: Vec<Vec<Row>> = args[2..].iter().map(|p| read(p)).collect();

    let mut md = String::from(
        "| scene | threads | ms/step | min–max | speedup | efficiency | T1/T∞ | hash | = 1 thread |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    for r in tables.iter().flatten() {
        let _ = writeln!(
            md,
            "| {} | {}{} | {:.3} | {:.3}–{:.3} | {:.2}× | {:.0}% | {:.1} | `{}` | {} |",
            r.scene,
            r.threads,
            if r.oversubscribed == "true" {
                " (oversubscribed)"
            } else {
                ""
            },
            r.ms,
            r.min,
            r.max,
            r.speedup,
            100.0 * r.efficiency,
            r.parallelism,
            r.hash,
            if r.matches == "true" { "yes" } else { "NO" }
        );
    }
    std::fs::write(md_path, md).expect("write markdown");

    let max_t = tables
        .iter()
        .flatten()
        .map(|r| r.threads)
        .max()
        .unwrap_or(1);
    let max_s = tables
        .iter()
        .flatten()
        .map(|r| r.speedup)
        .fold(2.0f64, f64::max);
    let root = SVGBackend::new(svg_path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).expect("draw");
    let mut chart = ChartBuilder::on(&root)
        .caption("archipelago: speedup vs threads", ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(1u32..max_t, 0.0..(max_s * 1.1))
        .expect("chart");
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc("speedup vs 1 thread")
        .draw()
        .expect("mesh");
    chart
        .draw_series(LineSeries::new(
            (1..=max_t).map(|t| (t, (t as f64).min(max_s * 1.1))),
            BLACK.mix(0.3),
        ))
        .expect("ideal")
        .label("ideal")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.3)));
    let colors = [RED, BLUE, GREEN, MAGENTA, CYAN];
    for (k, t) in tables.iter().enumerate() {
        let color = colors[k % colors.len()];
        let name = t.first().map(|r| r.scene.clone()).unwrap_or_default();
        chart
            .draw_series(LineSeries::new(
                t.iter().map(|r| (r.threads, r.speedup)),
                color,
            ))
            .expect("line")
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(
                t.iter()
                    .map(|r| Circle::new((r.threads, r.speedup), 4, color.filled())),
            )
            .expect("points");
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .expect("legend");
    root.present().expect("write svg");
}
