//! The `ragate` binary: everything happens in [`ragate::run_cli`].

fn main() -> std::process::ExitCode {
    ragate::run_cli()
}
