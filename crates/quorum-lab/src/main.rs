//! `quorum-lab`: Quorum's measurements (eval, mutation testing, benchmarks).
//! Every command here is what a `make` target runs; the operator CLI is
//! `quorum`.

use anyhow::Context;
use clap::{Parser, Subcommand};
use quorum_lab::{
    bench, bench_console, bench_index, bench_retrieval, bench_search, calibrate_similarity, eval, judge_cmd,
    memory_eval, mutate,
};

#[derive(Parser)]
#[command(
    name = "quorum-lab",
    version,
    about = "Quorum measured: the eval, mutation testing and benchmarks"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the seeded-bug eval through the pipeline and score it.
    Eval(Box<eval::EvalArgs>),
    /// Measure review memory's effect (eval/memory): dismissed findings, learned conventions, clean controls.
    EvalMemory(memory_eval::EvalMemoryArgs),
    /// Whether a title-embedding threshold separates a dismissed finding's paraphrases from other findings (eval/memory/similarity).
    CalibrateSimilarity(calibrate_similarity::CalibrateSimilarityArgs),
    /// Measure the explained-judge against the labelled sample
    /// (`eval/judge/labels.json`): agreement and Cohen's kappa.
    JudgeAgreement {
        #[command(flatten)]
        judge: judge_cmd::JudgeArgs,
        /// Print the measurement as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Mutate every sampled site of a real codebase (rename, add/remove/reorder a parameter, options object, return None, swap arguments; invert a condition, drop a re-raise) and count what the graph checks and rules catch, with inverse controls.
    Mutate(mutate::MutateArgs),
    /// Measure webhook-to-review overhead with the offline engine.
    Bench(bench::BenchArgs),
    /// Time the console's run list (operator API) with 200 and 10,000 runs in Redis.
    BenchConsole(bench_console::BenchConsoleArgs),
    /// Benchmark the code graph on a pip-fetched sdist.
    BenchIndex(bench_index::BenchIndexArgs),
    /// Benchmark the hybrid index on a pip-fetched sdist (Django by default).
    BenchSearch(bench_search::BenchSearchArgs),
    /// Hybrid search's answer quality (MRR@10, recall@1/5): docstring and
    /// identifier queries mined from a codebase, or hand-written questions.
    BenchRetrieval(bench_retrieval::BenchRetrievalArgs),
}

/// Measurements print their own progress; logs only for warnings.
fn quiet_logs() {
    quorum_runtime::telemetry::set_default_level("warn");
    quorum_runtime::telemetry::init_logging(false);
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Eval(args) => {
            quiet_logs();
            eval::run(*args).await?;
        }
        Command::EvalMemory(args) => {
            quiet_logs();
            let report = memory_eval::run(&args).await?;
            println!("{}", report.summary());
        }
        Command::CalibrateSimilarity(args) => {
            quiet_logs();
            let c = calibrate_similarity::run(&args).await?;
            println!("{}", c.summary());
        }
        Command::JudgeAgreement { judge, json } => {
            quiet_logs();
            judge_cmd::run(judge, json).await?;
        }
        Command::Mutate(args) => {
            quiet_logs();
            let report = mutate::run(&args)?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.render());
            }
        }
        Command::Bench(args) => {
            bench::run(args).await?;
        }
        Command::BenchConsole(args) => {
            quiet_logs();
            let r = bench_console::run(args).await?;
            println!("{}", serde_json::to_string_pretty(&r)?);
        }
        Command::BenchIndex(args) => {
            let r = tokio::task::spawn_blocking(move || bench_index::run(args)).await??;
            println!("{}", serde_json::to_string_pretty(&r)?);
        }
        Command::BenchSearch(args) => {
            quiet_logs();
            let out = args.out.clone();
            let r = bench_search::run(args).await?;
            let json = serde_json::to_string_pretty(&r)?;
            if let Some(p) = out {
                std::fs::write(&p, format!("{json}\n"))?;
            }
            println!("{json}");
        }
        Command::BenchRetrieval(args) => {
            quiet_logs();
            let out = args.out.clone();
            let gate = args.check.clone().map(|p| (p, args.tolerance));
            let r = bench_retrieval::run(args).await?;
            if let Some(p) = out {
                std::fs::write(&p, format!("{}\n", serde_json::to_string_pretty(&r)?))?;
            }
            println!("{}", bench_retrieval::table(&r));
            if let Some((path, tolerance)) = gate {
                let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
                let baseline: bench_retrieval::Baseline =
                    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
                let failures = bench_retrieval::check(&r, &baseline, tolerance);
                for f in &failures {
                    eprintln!("search-check: {f}");
                }
                anyhow::ensure!(
                    failures.is_empty(),
                    "retrieval fell below {} ({} groups)",
                    path.display(),
                    failures.len()
                );
                eprintln!(
                    "search-check: OK: {} holds {} within {tolerance}",
                    r.shipped,
                    path.display()
                );
            }
        }
    }
    Ok(())
}
