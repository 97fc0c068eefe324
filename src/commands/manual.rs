//! `ragate completions SHELL` (clap_complete) and `ragate man [--out DIR]` (clap_mangen): the
//! shell completion scripts and the man pages, generated from the command line's definition.

use std::path::PathBuf;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::error::{Error, Result};
use crate::exit_code::{self, ExitStatus};
use crate::outputs::stdout::write_stdout;
use crate::outputs::writer;
use crate::term;

/// The name the scripts complete and the pages document.
const BIN: &str = "ragate";

/// Prints the completion script for `args.shell` on stdout.
pub(super) fn completions(args: CompletionsArgs) -> Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), BIN, &mut script);
    let script = String::from_utf8(script).map_err(|e| {
        Error::Usage(format!(
            "the {} completion script is not UTF-8 ({e}): report this as a bug",
            args.shell
        ))
    })?;
    write_stdout(&script)?;
    Ok(exit_code::SUCCESS)
}

/// Prints ragate.1 on stdout, or writes ragate.1 and one page per subcommand into `--out`.
pub(super) fn man(args: ManArgs) -> Result<i32> {
    let pages = pages()?;
    let Some(dir) = args.out else {
        write_stdout(&pages[0].1)?;
        return Ok(exit_code::SUCCESS);
    };
    for (name, text) in &pages {
        writer::write_in_folder(&dir.join(name), text).map_err(|e| e.named_by("--out"))?;
    }
    term::info(format!(
        "ragate man: {} pages written to {} (read one with `man {}`)",
        pages.len(),
        dir.display(),
        dir.join("ragate.1").display()
    ));
    Ok(exit_code::SUCCESS)
}

/// Every page as (file name, roff text): ragate.1 first, then `ragate-gate.1`,
/// `ragate-baseline-accept.1`, ... in the order of the command line's definition.
fn pages() -> Result<Vec<(String, String)>> {
    // No `help` subcommand page (as clap_mangen::generate_to); building sets the subcommands'
    // display names (`ragate-baseline-accept`).
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let mut pages = Vec::new();
    add_pages(command, &mut pages)?;
    pages[0].1 = with_exit_status(&pages[0].1);
    Ok(pages)
}

/// ragate.1 with an EXIT STATUS section (before VERSION, where man-pages(7) puts it) that lists
/// every [`ExitStatus`] with its meaning, as `ragate --help` ends.
fn with_exit_status(page: &str) -> String {
    let mut section = String::from(".SH \"EXIT STATUS\"\n");
    for status in ExitStatus::ALL {
        section.push_str(&format!(
            ".TP\n\\fB{status}\\fR\n{}\n",
            roff_text(status.meaning())
        ));
    }
    match page.find("\n.SH VERSION\n") {
        Some(at) => format!("{}\n{section}{}", &page[..at], &page[at + 1..]),
        None => format!("{page}{section}"),
    }
}

/// `text` (one line of ragate's own) as roff prints it: backslashes, hyphens and apostrophes
/// escaped as clap_mangen escapes them, and a leading `.` or `'` kept from reading as a request.
fn roff_text(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\e")
        .replace('-', "\\-")
        .replace('\'', "\\*(Aq");
    if escaped.starts_with('.') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

fn add_pages(command: clap::Command, pages: &mut Vec<(String, String)>) -> Result<()> {
    // The exit codes `ragate --help` ends with are a section of their own (EXIT STATUS, see
    // `with_exit_status`), not clap_mangen's EXTRA.
    let page = command.clone().after_help(None::<&'static str>);
    let man = clap_mangen::Man::new(page);
    let name = man.get_filename();
    let mut text = Vec::new();
    man.render(&mut text)
        .map_err(|e| Error::write(&PathBuf::from(&name), e))?;
    let text = String::from_utf8(text).map_err(|e| {
        Error::Usage(format!(
            "the man page {name} is not UTF-8 ({e}): report this as a bug"
        ))
    })?;
    pages.push((name, text));
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        add_pages(sub.clone(), pages)?;
    }
    Ok(())
}

/// The page file names, for tests and messages.
#[cfg(test)]
fn page_names() -> Vec<String> {
    pages().unwrap().into_iter().map(|(name, _)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ragate_1_has_an_exit_status_section_with_every_code_before_version() {
        let pages = pages().unwrap();
        let page = &pages[0].1;
        let section = page
            .find(".SH \"EXIT STATUS\"\n")
            .expect("an EXIT STATUS section");
        assert!(section < page.find(".SH VERSION\n").unwrap(), "{page}");
        assert!(!page.contains(".SH EXTRA"), "{page}");
        for status in ExitStatus::ALL {
            let entry = format!(".TP\n\\fB{status}\\fR\n{}\n", roff_text(status.meaning()));
            assert!(page[section..].contains(&entry), "{entry} in {page}");
        }
        assert_eq!(roff_text(".x-y's \\"), "\\&.x\\-y\\*(Aqs \\e");
        assert!(pages[1..].iter().all(|(_, p)| !p.contains("EXIT STATUS")));
    }

    #[test]
    fn one_page_per_command_with_the_full_names() {
        let names = page_names();
        assert_eq!(names[0], "ragate.1");
        for expected in [
            "ragate-gate.1",
            "ragate-eval.1",
            "ragate-baseline.1",
            "ragate-baseline-accept.1",
            "ragate-baseline-show.1",
            "ragate-completions.1",
            "ragate-man.1",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} in {names:?}"
            );
        }
        assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
    }
}
