//! `archipelago-viewer [--scene NAME] [--port N] [--threads N] [--paused]
//! [--record FILE | --replay FILE]`: serves the viewer on 127.0.0.1 and
//! prints its address.

use archipelago_viewer::{Options, Viewer};
use std::path::PathBuf;

const USAGE: &str = "usage: archipelago-viewer [--scene NAME] [--port N] [--threads N] [--paused] [--record FILE | --replay FILE]";

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        port: 8080,
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--scene" => o.scene = value()?.clone(),
            "--port" => o.port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--threads" => {
                o.threads = Some(value()?.parse().map_err(|e| format!("--threads: {e}"))?)
            }
            "--paused" => o.paused = true,
            "--record" => o.record = Some(PathBuf::from(value()?)),
            "--replay" => o.replay = Some(PathBuf::from(value()?)),
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if o.record.is_some() && o.replay.is_some() {
        return Err("--record and --replay exclude each other".into());
    }
    let names = archipelago_viewer::sim::scene_names();
    if !names.contains(&o.scene.as_str()) {
        return Err(format!(
            "no scene `{}`; scenes: {}",
            o.scene,
            names.join(", ")
        ));
    }
    Ok(o)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    match Viewer::start(&opts) {
        Ok(v) => {
            println!("archipelago viewer: {} (scene {})", v.url(), opts.scene);
            v.wait();
        }
        Err(e) => {
            eprintln!("archipelago-viewer: {e}");
            std::process::exit(1);
        }
    }
}
