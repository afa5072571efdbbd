//! `act_scan`: finds the active columns of each panel.
//!
//! Contract: examines `scan_width` consecutive activations per cycle, k increasing from 0 for
//! every panel, once they are in the activation SRAM and the activation queue has room for every
//! active one of the group; pushes (k, x_k) for each active one, then an end-of-panel marker (its
//! own cycle) after a panel's last group.

use crate::core::slice::Token;
use half::f16;
use lacuna_spec::ActivationFilter;
use std::collections::VecDeque;

/// An active column found by the scan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActiveColumn {
    /// Panel.
    pub panel: u32,
    /// Column.
    pub k: u32,
    /// Its activation.
    pub x: f16,
}

/// The activation scan.
pub struct ActScan {
    width: usize,
    depth: usize,
    panels: u32,
    panel: u32,
    k: usize,
    /// The activation queue: active columns or markers.
    pub queue: VecDeque<Token<ActiveColumn>>,
}

impl ActScan {
    /// A scan over `panels` panels.
    pub fn new(width: u32, depth: u32, panels: u32) -> ActScan {
        ActScan { width: width as usize, depth: depth as usize, panels, panel: 0, k: 0, queue: VecDeque::new() }
    }

    /// Every panel scanned and every marker pushed.
    pub fn done(&self) -> bool {
        self.panel >= self.panels
    }

    /// One cycle; `loaded` is the bytes of x in the SRAM. Returns true on progress.
    pub fn step(&mut self, x: &[f16], loaded: u64, filter: ActivationFilter) -> bool {
        if self.done() {
            return false;
        }
        if self.k >= x.len() {
            if self.queue.len() < self.depth {
                self.queue.push_back(Token::EndPanel(self.panel));
                self.panel += 1;
                self.k = 0;
                return true;
            }
            return false;
        }
        let end = (self.k + self.width).min(x.len());
        if loaded < 2 * end as u64 {
            return false;
        }
        let active = x[self.k..end].iter().filter(|&&v| filter.is_active(v)).count();
        if self.queue.len() + active > self.depth {
            return false;
        }
        for (k, &xk) in x.iter().enumerate().take(end).skip(self.k) {
            if filter.is_active(xk) {
                self.queue.push_back(Token::Work(ActiveColumn { panel: self.panel, k: k as u32, x: xk }));
            }
        }
        self.k = end;
        true
    }
}
