//! Turns `scaling --csv` files into perf-reports' Markdown table and an SVG
//! plot of speedup against threads (one line per scene, plus the ideal),
//! and `scaling --predict-csv` files (told apart by their header) into a
//! second table and dashed lines of the predicted speedup beside the
//! measured points (hollow where the row was oversubscribed).
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

/// One predicted worker count (`scaling --predict-csv`).
struct Predicted {
    scene: String,
    workers: u32,
    ms: f64,
    speedup: f64,
    efficiency: f64,
    limiter: String,
}

enum Table {
    Measured(Vec<Row>),
    Predicted(Vec<Predicted>),
}

fn read(path: &str) -> Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    if text.starts_with("scene,workers,predicted_ms") {
        return Table::Predicted(read_predicted(&text));
    }
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |n: &str| {
        header
            .iter()
            .position(|h| *h == n)
            .unwrap_or_else(|| panic!("{path}: no column {n}"))
    };
    let rows = lines
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
        .collect();
    Table::Measured(rows)
}

/// `scene,workers,predicted_ms,predicted_speedup,predicted_efficiency,"limiter"`.
fn read_predicted(text: &str) -> Vec<Predicted> {
    text.lines()
        .skip(1)
        .map(|l| {
            let (nums, limiter) = l.split_once(",\"").expect("a quoted limiter");
            let f: Vec<&str> = nums.split(',').collect();
            let num = |k: usize| f[k].parse::<f64>().expect("number");
            Predicted {
                scene: f[0].to_string(),
                workers: f[1].parse().expect("workers"),
                ms: num(2),
                speedup: num(3),
                efficiency: num(4),
                limiter: limiter.trim_end_matches('"').to_string(),
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
    let mut tables: Vec<Vec<Row>> = Vec::new();
    let mut predictions: Vec<Vec<Predicted>> = Vec::new();
    for p in &args[2..] {
        match read(p) {
            Table::Measured(t) => tables.push(t),
            Table::Predicted(t) => predictions.push(t),
        }
    }

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
    if !predictions.is_empty() {
        md.push_str("\nPredicted from 1-thread traces (`scaling --predict`, `StepTrace::replay`):\n\n| scene | workers | predicted ms/step | speedup | efficiency | limited by |\n| --- | ---: | ---: | ---: | ---: | --- |\n");
        for p in predictions.iter().flatten() {
            let _ = writeln!(
                md,
                "| {} | {} | {:.3} | {:.2}× | {:.0}% | {} |",
                p.scene,
                p.workers,
                p.ms,
                p.speedup,
                100.0 * p.efficiency,
                p.limiter
            );
        }
    }
    std::fs::write(md_path, md).expect("write markdown");

    let max_t = tables
        .iter()
        .flatten()
        .map(|r| r.threads)
        .chain(predictions.iter().flatten().map(|p| p.workers))
        .max()
        .unwrap_or(2)
        .max(2);
    let max_s = tables
        .iter()
        .flatten()
        .map(|r| r.speedup)
        .chain(predictions.iter().flatten().map(|p| p.speedup))
        .fold(2.0f64, f64::max);
    // threads on a log2 axis, labelled 1, 2, 4, ...
    let x = |t: u32| (t as f64).log2();
    let root = SVGBackend::new(svg_path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).expect("draw");
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "archipelago: speedup vs threads (points measured, dashed predicted)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..x(max_t), 0.0..(max_s * 1.1))
        .expect("chart");
    chart
        .configure_mesh()
        .x_labels(x(max_t) as usize + 1)
        .x_label_formatter(&|v| format!("{}", 2f64.powf(*v).round()))
        .x_desc("threads (log scale)")
        .y_desc("speedup vs 1 thread")
        .draw()
        .expect("mesh");
    let ideal: Vec<u32> =
        std::iter::successors(Some(1u32), |t| (*t < max_t).then(|| (t * 2).min(max_t))).collect();
    chart
        .draw_series(LineSeries::new(
            ideal.iter().map(|&t| (x(t), (t as f64).min(max_s * 1.1))),
            BLACK.mix(0.3),
        ))
        .expect("ideal")
        .label("ideal")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.3)));
    // one colour per scene for up to eight scenes
    let colors = [
        RED,
        BLUE,
        GREEN,
        MAGENTA,
        CYAN,
        RGBColor(230, 140, 0),
        RGBColor(120, 70, 20),
        RGBColor(100, 100, 100),
    ];
    let mut scenes: Vec<String> = tables
        .iter()
        .filter_map(|t| t.first().map(|r| r.scene.clone()))
        .chain(
            predictions
                .iter()
                .filter_map(|t| t.first().map(|p| p.scene.clone())),
        )
        .collect();
    scenes.sort();
    scenes.dedup();
    for (k, name) in scenes.iter().enumerate() {
        let color = colors[k % colors.len()];
        if let Some(t) = tables
            .iter()
            .find(|t| t.first().is_some_and(|r| &r.scene == name))
        {
            chart
                .draw_series(LineSeries::new(
                    t.iter().map(|r| (x(r.threads), r.speedup)),
                    color.mix(0.5),
                ))
                .expect("line")
                .label(format!("{name} measured"))
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
            chart
                .draw_series(t.iter().map(|r| {
                    let style = if r.oversubscribed == "true" {
                        color.stroke_width(1)
                    } else {
                        color.filled()
                    };
                    Circle::new((x(r.threads), r.speedup), 4, style)
                }))
                .expect("points");
        }
        if let Some(p) = predictions
            .iter()
            .find(|t| t.first().is_some_and(|p| &p.scene == name))
        {
            chart
                .draw_series(DashedLineSeries::new(
                    p.iter().map(|p| (x(p.workers), p.speedup)),
                    6,
                    4,
                    color.stroke_width(2),
                ))
                .expect("predicted")
                .label(format!("{name} predicted"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
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
