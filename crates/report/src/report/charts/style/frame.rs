//! A chart's frame: its coordinate system, messages in place of a plot, boxed labels.

use super::*;

/// Sets up a chart in `area` with the standard margins, grid, tick labels and axis titles.
pub struct ChartSpec<'a> {
    pub x: Axis,
    pub y: Axis,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub x_fmt: &'a dyn Fn(&f64) -> String,
    pub y_fmt: &'a dyn Fn(&f64) -> String,
    /// An optional caption above the plotting area (for panels).
    pub caption: Option<&'a str>,
    /// Width of the y label area when the caller draws its own y labels (bar charts), instead of
    /// sizing it to the tick labels.
    pub y_label_space: Option<i32>,
}

/// Builds the chart and draws its mesh; returns the context to draw series into.
pub fn build_chart<'a, DB: DrawingBackend + 'a>(
    area: &'a Area<DB>,
    th: &Theme,
    spec: &ChartSpec,
) -> Result<ChartContext<'a, DB, Coord>> {
    let tick = th.font(fs::TICK);
    let y_label_w = spec
        .y
        .bold
        .iter()
        .map(|v| text_size(&tick, &(spec.y_fmt)(v)).0)
        .max()
        .unwrap_or(0);
    // Room for the y title only where there is one (a faceted chart titles one column).
    let y_title = if spec.y_desc.is_empty() {
        0
    } else {
        (th.fs(fs::AXIS_DESC) * 1.6) as i32
    };
    let y_area = match spec.y_label_space {
        Some(w) => w,
        None => y_label_w + th.px(18.0) + y_title,
    };
    let mut b = ChartBuilder::on(area);
    b.margin_top(th.px(14.0))
        .margin_right(th.px(24.0))
        .margin_left(th.px(8.0))
        .margin_bottom(th.px(6.0))
        .x_label_area_size(th.px(34.0) + (th.fs(fs::AXIS_DESC) * 1.5) as i32)
        .y_label_area_size(y_area);
    if let Some(c) = spec.caption {
        b.caption(c, th.bold(fs::PANEL).color(&INK));
    }
    let mut chart = b
        .build_cartesian_2d(spec.x.clone(), spec.y.clone())
        .plot()?;
    chart
        .configure_mesh()
        .x_desc(spec.x_desc)
        .y_desc(spec.y_desc)
        .x_label_formatter(spec.x_fmt)
        .y_label_formatter(spec.y_fmt)
        .label_style(tick.color(&INK))
        .axis_desc_style(th.font(fs::AXIS_DESC).color(&INK))
        .bold_line_style(GRID_BOLD.stroke_width(1))
        .light_line_style(GRID_LIGHT.stroke_width(1))
        .axis_style(MUTED.stroke_width(th.stroke(1.5)))
        .set_all_tick_mark_size(th.px(6.0))
        .draw()
        .plot()?;
    Ok(chart)
}

/// Draws `text` centred in `area` (for charts that have nothing to show).
pub fn message<DB: DrawingBackend>(area: &Area<DB>, th: &Theme, text: &str) -> Result<()> {
    let (w, h) = area.dim_in_pixel();
    let font = th.font(fs::PANEL);
    let lines = wrap(&font, text, w as i32 * 8 / 10);
    let lh = (th.fs(fs::PANEL) * 1.5) as i32;
    let mut y = h as i32 / 2 - lh * lines.len() as i32 / 2;
    for line in lines {
        area.draw_text(
            &line,
            &font.color(&MUTED).pos(Pos::new(HPos::Center, VPos::Center)),
            (w as i32 / 2, y),
        )
        .plot()?;
        y += lh;
    }
    Ok(())
}

/// A text label with a white, slightly transparent backing box so it stays readable over grid
/// lines and data; `at` is in pixels of `area`, anchored at `pos`.
pub fn boxed_label<DB: DrawingBackend>(
    area: &Area<DB>,
    th: &Theme,
    text: &str,
    at: (i32, i32),
    pos: Pos,
    color: &RGBColor,
    base: f64,
) -> Result<()> {
    let font = th.font(base);
    let (w, h) = text_size(&font, text);
    let x0 = match pos.h_pos {
        HPos::Left => at.0,
        HPos::Center => at.0 - w / 2,
        HPos::Right => at.0 - w,
    };
    let y0 = match pos.v_pos {
        VPos::Top => at.1,
        VPos::Center => at.1 - h / 2,
        VPos::Bottom => at.1 - h,
    };
    let p = th.px(4.0);
    area.draw(&Rectangle::new(
        [(x0 - p, y0 - p), (x0 + w + p, y0 + h + p)],
        WHITE.mix(0.85).filled(),
    ))
    .plot()?;
    area.draw_text(text, &font.color(color).pos(pos), at).plot()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_axis_labels_powers_of_two_and_survives_one_size() {
        let a = size_axis(&[8, 1 << 30], 12);
        let labels: Vec<String> = a.bold.iter().map(|v| size_label(*v)).collect();
        assert!(
            labels.contains(&"1 KiB".to_string()) || labels.contains(&"4 KiB".to_string()),
            "{labels:?}"
        );
        assert!(labels.len() <= 12 && labels.len() >= 4, "{labels:?}");
        let one = size_axis(&[4096], 12);
        assert!(one.range.start < 12.0 && one.range.end > 12.0);
        assert!(one.bold.contains(&12.0));
        let none = size_axis(&[], 12);
        assert!(none.range.end > none.range.start);
    }

    #[test]
    fn time_and_ratio_axes_are_never_empty() {
        for (lo, hi) in [(1.0, 1.0), (0.0, 0.0), (f64::NAN, 5.0), (2.0, 2e6)] {
            let a = log_time_axis(lo, hi, 12);
            assert!(a.range.end > a.range.start, "{lo} {hi}");
            assert!(!a.bold.is_empty(), "{lo} {hi}");
        }
        let r = ratio_axis(0.8, 2.5);
        assert!(r.bold.iter().any(|v| v.abs() < 1e-12), "1x always labelled");
        let r = ratio_axis(1.0, 1.0);
        assert!(r.range.start < 0.0 && r.range.end > 0.0);
        assert!(r.bold.len() >= 3, "{:?}", r.bold);
        let t = log_time_axis(4.1, 4.9, 12);
        assert!(
            t.bold.len() >= 2,
            "a narrow range still gets labels: {:?}",
            t.bold
        );
        let l = linear_axis(0.0, 8, 0.1);
        assert!(l.range.end > l.range.start && !l.bold.is_empty());
    }
}
