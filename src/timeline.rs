//! `--timeline FILE`: a trace-event JSON (the Chrome / Perfetto "JSON trace event format") of a
//! simulation, opened as-is by <https://ui.perfetto.dev> or `chrome://tracing`.
//!
//! One process per run, one track (thread) per unit or memory client; every span is a complete
//! event (`"ph": "X"`) with its start and duration in microseconds at the arch's clock (cycle c
//! starts at c / clock_MHz us), its cycles in `args`. Tracks are named by metadata events.

use serde_json::{json, Value};
use std::path::Path;

/// A trace being built.
pub struct Timeline {
    clock_mhz: f64,
    events: Vec<Value>,
    tracks: Vec<String>,
}

impl Timeline {
    /// A trace of a run named `process` at `clock_mhz`.
    pub fn new(process: &str, clock_mhz: u32) -> Timeline {
        let events = vec![json!({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": process}})];
        Timeline { clock_mhz: clock_mhz.max(1) as f64, events, tracks: Vec::new() }
    }

    /// The track named `name` (created, with its name event, on first use).
    fn track(&mut self, name: &str) -> usize {
        if let Some(i) = self.tracks.iter().position(|t| t == name) {
            return i + 1;
        }
        self.tracks.push(name.to_string());
        let tid = self.tracks.len();
        self.events.push(json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": name}}));
        self.events
            .push(json!({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": tid, "args": {"sort_index": tid}}));
        tid
    }

    /// A span `name` on track `track` from cycle `start` to cycle `end` (exclusive), with `args`
    /// (an object; `cycles` is added).
    pub fn span(&mut self, track: &str, name: &str, start: u64, end: u64, mut args: Value) {
        let tid = self.track(track);
        if let Some(o) = args.as_object_mut() {
            o.insert("cycles".into(), json!(end.saturating_sub(start)));
            o.insert("start_cycle".into(), json!(start));
        }
        self.events.push(json!({
            "ph": "X",
            "name": name,
            "cat": track,
            "pid": 1,
            "tid": tid,
            "ts": start as f64 / self.clock_mhz,
            "dur": end.saturating_sub(start) as f64 / self.clock_mhz,
            "args": args,
        }));
    }

    /// Spans written so far (metadata events not counted).
    pub fn spans(&self) -> usize {
        self.events.iter().filter(|e| e["ph"] == "X").count()
    }

    /// Writes the trace.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let doc = json!({"displayTimeUnit": "ns", "traceEvents": self.events});
        std::fs::write(path, serde_json::to_vec(&doc)?).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_complete_events_in_microseconds_on_named_tracks() {
        let mut t = Timeline::new("test", 800);
        t.span("core", "job", 0, 800, json!({}));
        t.span("memory values", "burst", 100, 104, json!({"addr": 64}));
        t.span("core", "job 2", 800, 1600, json!({}));
        assert_eq!(t.spans(), 3);
        let x: Vec<&Value> = t.events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(x[0]["dur"], 1.0);
        assert_eq!(x[1]["ts"], 0.125);
        assert_eq!(x[1]["args"]["cycles"], 4);
        // Two tracks, each named once.
        let names: Vec<&Value> = t.events.iter().filter(|e| e["name"] == "thread_name").collect();
        assert_eq!(names.len(), 2);
        assert_eq!(x[0]["tid"], x[2]["tid"]);
    }
}
