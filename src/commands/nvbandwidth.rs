//! `gdrsim nvbandwidth`: run one of nvbandwidth's eight copy-engine testcases on the simulated
//! machine and print nvbandwidth's report: host to device, device to host, and device to device
//! (read and write), each one way and bidirectional (`--list` lists them by index and name).

use std::path::PathBuf;

use gdrsim::report;

use super::args::LimitArgs;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// The testcase, by nvbandwidth's name or index (required unless --list or -t).
    #[arg(required_unless_present_any = ["list", "testcase_flag"])]
    pub testcase: Option<String>,
    /// Config file (default: the embedded configs/default.toml).
    pub config: Option<PathBuf>,
    /// The testcase as nvbandwidth takes it (`-t host_to_device_memcpy_ce`); the first
    /// argument is then the config.
    #[arg(short = 't', long = "testcase", value_name = "TESTCASE")]
    pub testcase_flag: Option<String>,
    /// List the testcases.
    #[arg(short = 'l', long = "list")]
    pub list: bool,
    /// Memcpy buffer size in MiB.
    #[arg(
        short = 'b',
        long = "bufferSize",
        value_name = "MiB",
        default_value_t = 512,
        allow_negative_numbers = true
    )]
    pub buffer_size: u64,
    /// Samples of the benchmark (the median is reported).
    #[arg(
        short = 'i',
        long = "testSamples",
        default_value_t = 3,
        allow_negative_numbers = true
    )]
    pub test_samples: u32,
    /// Copies per sample.
    #[arg(
        long = "loopCount",
        default_value_t = 16,
        allow_negative_numbers = true
    )]
    pub loop_count: u32,
    /// Use the mean of the samples instead of the median.
    #[arg(short = 'm', long = "useMean")]
    pub use_mean: bool,
    /// The host whose GPUs are measured (default: the config's first).
    #[arg(long)]
    pub host: Option<String>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        testcase,
        testcase_flag,
        config,
        list,
        buffer_size,
        test_samples,
        loop_count,
        use_mean,
        host,
        limits,
    } = a;
    // nvbandwidth's own `-t NAME` moves the positional arguments up by one: the first is the
    // config.
    let (testcase, config) = match (testcase_flag, testcase, config) {
        (None, t, c) => (t, c),
        (Some(t), Some(p), Some(c)) => {
            return Err(gdrsim::config::ConfigError::new(
                "command line",
                "-t",
                format!(
                    "one testcase (with -t, the one argument after it is the config, here {})",
                    c.display()
                ),
                format!("-t {t} and {p}"),
            )
            .into());
        }
        (Some(t), p, c) => (Some(t), c.or(p.map(PathBuf::from))),
    };
    match (list, testcase) {
        (true, _) | (false, None) => report::emit(&gdrsim::nvbandwidth::list()),
        (false, Some(t)) => gdrsim::nvbandwidth::Testcase::parse(&t)
            .map(|t| gdrsim::nvbandwidth::Args {
                testcase: t,
                buffer_mib: buffer_size,
                samples: test_samples,
                loops: loop_count,
                use_mean,
                host,
            })
            .and_then(|a| Ok((a, limits.limits()?)))
            .map_err(Into::into)
            .and_then(|(a, l)| gdrsim::nvbandwidth::command(config.as_deref(), &a, &l))
            .and_then(|text| report::emit(&text)),
    }
}
