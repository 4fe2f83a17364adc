//! The fitting problem: the fitted parameters as factors of their config values, the model's
//! relative residuals at a point, and the cost Nelder-Mead minimises.

use super::*;

/// The fitting problem: the base config as TOML, the parameters, the measured runs.
pub(super) struct Problem<'a> {
    pub(super) doc: Table,
    pub(super) params: Vec<ParamValue>,
    /// Per parameter, the keys of the identical devices set to the same value.
    pub(super) siblings: Vec<Vec<String>>,
    pub(super) sel: &'a Selection,
    pub(super) si: Option<String>,
    pub(super) opts: &'a Options,
    pub(super) ln_range: f64,
    pub(super) evaluations: std::sync::atomic::AtomicUsize,
}

impl Problem<'_> {
    /// The emulation of run `k`: a perftest test's arguments, or an nvbandwidth testcase's.
    pub(super) fn emulation(&self, k: &RunKey) -> Result<Emulation> {
        Ok(match *k {
            RunKey::Perftest {
                test,
                gpu,
                size,
                iters,
                qps,
                duplex,
            } => Emulation::Perftest(
                test,
                perftest::Args {
                    test: Test::parse(test)?,
                    scenario: self.si.clone(),
                    sizes: vec![size],
                    iters: Some(iters),
                    tx_depth: None,
                    qps,
                    duplex,
                    use_cuda: gpu,
                    report_gbits: false,
                    cq_mod: None,
                    run_all: false,
                },
            ),
            RunKey::Nvbandwidth(tc) => Emulation::Nvbandwidth(self.opts.nvbandwidth_args(tc)),
        })
    }

    /// What the fit is about to simulate, for the cost gate: every evaluation runs every
    /// emulation (side by side on the worker threads); Nelder-Mead, restarted once, evaluates
    /// its n + 1 starting points and at most two points an iteration, `max_iters` iterations
    /// each time, then the residuals at the optimum and the Jacobian's 2n.
    pub(super) fn work(&self, cfg: &Config, n: usize) -> Result<study::Work> {
        let n = n as u64;
        let evaluations = 2 + 2 * (n + 1 + 2 * self.opts.max_iters) + 2 * n;
        let mut runs = Vec::new();
        for k in &self.sel.runs {
            let each = match self.emulation(k)? {
                Emulation::Perftest(_, a) => perftest::runs(cfg, &a)?,
                Emulation::Nvbandwidth(a) => nvbandwidth::runs(cfg, &a)?,
            };
            for (at, events, memory) in each {
                let label = format!("{} {at}", k.name());
                runs.push((label, events.saturating_mul(evaluations), memory));
            }
        }
        let count = self.sel.runs.len();
        let over = format!(
            "{count} emulated run{} of up to {evaluations} evaluations",
            if count == 1 { "" } else { "s" }
        );
        let cut = "fewer measured rows (--stats), --fit keys or iterations (--iters)";
        Ok(study::runs_work(
            "a calibration",
            over,
            &runs,
            cut,
            study::threads(0),
        ))
    }

    /// The config with parameter k at factor f_k; the values set.
    pub(super) fn config(&self, ln_f: &[f64]) -> Result<(Config, Vec<Value>)> {
        let mut d = self.doc.clone();
        let mut values = Vec::new();
        for (i, (p, lf)) in self.params.iter().zip(ln_f).enumerate() {
            // scaled gives None where the value does not change (factor 1, a bound).
            let v = match sensitivity::scaled(p, lf.exp()) {
                Some(v) => {
                    params::set(&mut d, &p.key, v.clone())
                        .ok_or_else(|| anyhow::anyhow!("setting {}", p.key))?;
                    v
                }
                None => p
                    .key
                    .rsplit_once('.')
                    .and_then(|(at, last)| params::table_at_mut(&mut d, at)?.get(last).cloned())
                    .ok_or_else(|| anyhow::anyhow!("reading {}", p.key))?,
            };
            for k in self.siblings.get(i).into_iter().flatten() {
                params::set(&mut d, k, v.clone()).ok_or_else(|| anyhow::anyhow!("setting {k}"))?;
            }
            values.push(v);
        }
        Ok((config::parse(&toml::to_string(&d)?, "calibrated")?, values))
    }

    /// The relative residuals at ln(factors) `ln_f`.
    pub(super) fn residuals(&self, ln_f: &[f64]) -> Result<Vec<f64>> {
        self.evaluations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (cfg, _) = self.config(ln_f)?;
        let figures: Vec<Figures> = self
            .sel
            .runs
            .par_iter()
            .map(|k| match self.emulation(k)? {
                Emulation::Perftest(test, a) => perftest::figures(&cfg, &a)?
                    .into_iter()
                    .next()
                    .map(Figures::Perftest)
                    .ok_or_else(|| anyhow::anyhow!("no figures for {test}")),
                Emulation::Nvbandwidth(a) => {
                    nvbandwidth::figures(&cfg, &a).map(Figures::Nvbandwidth)
                }
            })
            .collect::<Result<_>>()?;
        self.sel
            .targets
            .iter()
            .map(|t| {
                let model = match (&figures[t.run], t.figure) {
                    (Figures::Perftest(Row::Lat { f, .. }), Figure::Lat(i)) => f[i],
                    (Figures::Perftest(Row::Bw { peak, .. }), Figure::BwPeak) => *peak,
                    (Figures::Perftest(Row::Bw { avg, .. }), Figure::BwAvg) => *avg,
                    (Figures::Perftest(Row::Bw { rate, .. }), Figure::MsgRate) => *rate,
                    (Figures::Nvbandwidth(row), Figure::Nvb(gpu)) => {
                        let gbs = row.get(gpu).ok_or_else(|| {
                            ConfigError::new(
                                "measured data",
                                "column",
                                format!(
                                    "nvbandwidth GPU columns of the config's first host \
                                     (0 to {})",
                                    row.len().saturating_sub(1)
                                ),
                                gpu.to_string(),
                            )
                        })?;
                        gbs * 1e9
                    }
                    _ => f64::NAN,
                };
                Ok(model / t.measured - 1.0)
            })
            .collect()
    }

    pub(super) fn ln_f(&self, u: &[f64]) -> Vec<f64> {
        u.iter().map(|x| self.ln_range * x.tanh()).collect()
    }
}

pub(super) fn ssr(r: &[f64]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

pub(super) fn rms(r: &[f64]) -> f64 {
    (ssr(r) / r.len().max(1) as f64).sqrt()
}

/// argmin's view of the problem: the sum of squared residuals over the unbounded u.
pub(super) struct Cost<'a, 'b>(pub(super) &'a Problem<'b>);

impl CostFunction for Cost<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, u: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        let c = self
            .0
            .residuals(&self.0.ln_f(u))
            .map(|r| ssr(&r))
            .unwrap_or(f64::MAX);
        Ok(if c.is_finite() { c } else { f64::MAX })
    }
}
