//! The small dense linear algebra of the uncertainty estimate: inverse, covariance, standard
//! errors, and the collinear and correlated parameter pairs.

use super::*;

/// The inverse of a small symmetric positive matrix (Gauss-Jordan with partial pivoting);
/// None when singular.
pub fn invert(m: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..n).map(|j| if i == j { 1.0 } else { 0.0 }));
            r
        })
        .collect();
    let scale = m
        .iter()
        .flatten()
        .fold(0.0f64, |s, x| s.max(x.abs()))
        .max(1e-300);
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() <= scale * 1e-12 {
            return None;
        }
        a.swap(c, p);
        let d = a[c][c];
        for x in &mut a[c] {
            *x /= d;
        }
        for r in 0..n {
            if r != c {
                let f = a[r][c];
                if f != 0.0 {
                    let pivot = a[c].clone();
                    for (x, p) in a[r].iter_mut().zip(&pivot) {
                        *x -= f * p;
                    }
                }
            }
        }
    }
    Some(a.into_iter().map(|r| r[n..].to_vec()).collect())
}

/// The covariance of the parameters from the Jacobian `j` (m rows of n) and the residuals
/// `r`: s^2 (J^T J)^-1, s^2 = SSR / (m - n); None with no more rows than parameters or a
/// singular J^T J.
pub fn covariance(j: &[Vec<f64>], r: &[f64]) -> Option<Vec<Vec<f64>>> {
    let n = j.first()?.len();
    let m = r.len();
    if m <= n {
        return None;
    }
    let jtj: Vec<Vec<f64>> = (0..n)
        .map(|a| {
            (0..n)
                .map(|b| j.iter().map(|row| row[a] * row[b]).sum())
                .collect()
        })
        .collect();
    let inv = invert(&jtj)?;
    let s2 = ssr(r) / (m - n) as f64;
    Some(
        inv.into_iter()
            .map(|row| row.into_iter().map(|c| s2 * c).collect())
            .collect(),
    )
}

/// Standard errors of the parameters: sqrt of the diagonal of [`covariance`].
pub fn standard_errors(j: &[Vec<f64>], r: &[f64]) -> Option<Vec<f64>> {
    Some(deviations(&covariance(j, r)?))
}

/// The square roots of a covariance matrix's diagonal (each parameter's standard error).
pub(super) fn deviations(c: &[Vec<f64>]) -> Vec<f64> {
    (0..c.len()).map(|k| c[k][k].max(0.0).sqrt()).collect()
}

/// The pairs of Jacobian columns (one per parameter) that are parallel within 1% (|cosine| >
/// 0.99): such a pair moves every row alike, so the rows cannot set the two apart. Reported
/// with the correlation their estimates would have (minus the cosine: parameters that push
/// the rows the same way trade off against each other).
pub fn collinear_pairs(cols: &[Vec<f64>]) -> Vec<(usize, usize, f64)> {
    let norm = |c: &[f64]| c.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut out = Vec::new();
    for a in 0..cols.len() {
        for b in a + 1..cols.len() {
            let d = norm(&cols[a]) * norm(&cols[b]);
            let dot: f64 = cols[a].iter().zip(&cols[b]).map(|(x, y)| x * y).sum();
            if d > 0.0 && (dot / d).abs() > 0.99 {
                out.push((a, b, -dot / d));
            }
        }
    }
    out
}

/// The pairs of parameters whose correlation (from the covariance `c`) is beyond
/// [`CORRELATED`] in magnitude. The correlation does not depend on the residuals' size, so it
/// flags pairs the rows cannot separate even when the fit is exact (synthetic data).
pub fn correlated_pairs(c: &[Vec<f64>]) -> Vec<(usize, usize, f64)> {
    let mut out = Vec::new();
    for a in 0..c.len() {
        for b in a + 1..c.len() {
            let d = (c[a][a] * c[b][b]).sqrt();
            if d > 0.0 && (c[a][b] / d).abs() > CORRELATED {
                out.push((a, b, c[a][b] / d));
            }
        }
    }
    out
}
