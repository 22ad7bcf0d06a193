//! `srep` as a user runs it: a child process with pipes.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

fn srep() -> Command {
    Command::new(env!("CARGO_BIN_EXE_srep"))
}

fn run(args: &[&str], input: &[u8]) -> Output {
    let mut child = srep()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = thread::spawn(move || {
        // 7-byte writes, so rules see their matches cut across reads.
        for piece in input.chunks(7) {
            if stdin.write_all(piece).is_err() {
                break;
            }
        }
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("srep-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const INPUT: &str = "user ann@example.org paid with 4111 1111 1111 1111; key=sk-AbCd1234.\n\
                     password=hunter2 from 10.0.0.12, again ann@example.org\n";

// What the rules below give on INPUT: derived by hand from the rules.
const WANT: &str = "user [EMAIL] paid with [CARD]; key=[KEY].\n\
                    password=*** from [IP], again [EMAIL]\n";

const FLAGS: &[&str] = &[
    "-e",
    r"[\w.+-]+@[\w-]+\.\w+=[EMAIL]",
    "-e",
    r"\b(?:\d{4} ){3}\d{4}\b=[CARD]",
    "--literal",
    "sk-AbCd1234=[KEY]",
    "-e",
    r"(password=)\S+=${1}***",
    "-e",
    r"\b\d{1,3}(?:\.\d{1,3}){3}\b=[IP]",
];

#[test]
fn rules_from_flags() {
    let out = run(FLAGS, INPUT.as_bytes());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), WANT);
}

#[test]
fn earlier_rule_wins_a_tie_in_command_line_order() {
    let out = run(&["--literal", "abc=[L]", "-e", "a.c=[R]"], b"abc adc");
    assert_eq!(out.stdout, b"[L] [R]");
    let out = run(&["-e", "a.c=[R]", "--literal", "abc=[L]"], b"abc adc");
    assert_eq!(out.stdout, b"[R] [R]");
}

#[test]
fn rules_from_toml_and_json_files() {
    let toml = temp_file(
        "rules.toml",
        r#"
[[rule]]
pattern = '[\w.+-]+@[\w-]+\.\w+'
replacement = "[EMAIL]"

[[rule]]
pattern = '\b(?:\d{4} ){3}\d{4}\b'
replacement = "[CARD]"

[[rule]]
literal = "sk-AbCd1234"
replacement = "[KEY]"

[[rule]]
pattern = '(password=)\S+'
replacement = "${1}***"

[[rule]]
pattern = '\b\d{1,3}(?:\.\d{1,3}){3}\b'
replacement = "[IP]"
"#,
    );
    let json = temp_file(
        "rules.json",
        r#"[
  {"pattern": "[\\w.+-]+@[\\w-]+\\.\\w+", "replacement": "[EMAIL]"},
  {"pattern": "\\b(?:\\d{4} ){3}\\d{4}\\b", "replacement": "[CARD]"},
  {"literal": "sk-AbCd1234", "replacement": "[KEY]"},
  {"pattern": "(password=)\\S+", "replacement": "${1}***"},
  {"pattern": "\\b\\d{1,3}(?:\\.\\d{1,3}){3}\\b", "replacement": "[IP]"}
]"#,
    );
    for file in [&toml, &json] {
        let out = run(&["--rules", file.to_str().unwrap()], INPUT.as_bytes());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "{}",
            file.display()
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            WANT,
            "{}",
            file.display()
        );
    }
    // A file's rules take its place among the flags.
    let out = run(
        &[
            "--literal",
            "ann@example.org=[ANN]",
            "-f",
            json.to_str().unwrap(),
        ],
        INPUT.as_bytes(),
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        WANT.replace("[EMAIL]", "[ANN]")
    );
}

#[test]
fn check_reports_rule_and_span_without_the_text() {
    let out = run(
        &["--check"].iter().chain(FLAGS).copied().collect::<Vec<_>>(),
        INPUT.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8(out.stdout).unwrap();
    let mut seen = Vec::new();
    for line in report.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 4, "{line}");
        let rule: usize = cols[0].parse().unwrap();
        let (start, end): (usize, usize) = (cols[1].parse().unwrap(), cols[2].parse().unwrap());
        seen.push((rule, &INPUT[start..end]));
    }
    assert_eq!(
        seen,
        [
            (0, "ann@example.org"),
            (1, "4111 1111 1111 1111"),
            (2, "sk-AbCd1234"),
            (3, "password=hunter2"),
            (4, "10.0.0.12"),
            (0, "ann@example.org"),
        ]
    );
    assert!(
        !report.contains("hunter2"),
        "matched text must not be printed"
    );
    assert!(report.contains("\t\"sk-AbCd1234\""));

    let clean = run(&["--check", "-e", "secret=x"], b"nothing here\n");
    assert_eq!(clean.status.code(), Some(0));
    assert!(clean.stdout.is_empty());
}

// `tail -f app.log | srep ...`: a line comes out while stdin is still open.
#[test]
fn output_appears_before_end_of_input() {
    let mut child = srep()
        .args(["-e", r"sk-[A-Za-z0-9]{8}=[KEY]", "-e", r"\d+=[N]"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = thread::spawn(move || {
        let mut lines = BufReader::new(stdout);
        loop {
            let mut line = String::new();
            if lines.read_line(&mut line).unwrap() == 0 {
                break;
            }
            tx.send(line).unwrap();
        }
    });
    // A guard against hanging, not a timing assertion.
    let guard = Duration::from_secs(60);
    stdin.write_all(b"first sk-AbCd1234 line 12\n").unwrap();
    stdin.flush().unwrap();
    assert_eq!(rx.recv_timeout(guard).unwrap(), "first [KEY] line [N]\n");
    stdin.write_all(b"second 34\nthird").unwrap();
    stdin.flush().unwrap();
    assert_eq!(rx.recv_timeout(guard).unwrap(), "second [N]\n");
    drop(stdin);
    assert_eq!(rx.recv_timeout(guard).unwrap(), "third");
    reader.join().unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn usage_and_rule_errors_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "no rules"),
        (&["-e", "no-equals-sign"], "expected PATTERN=REPLACEMENT"),
        (&["-e", "=x"], "pattern before '=' is empty"),
        (&["-e", "a(b=x"], "-e #1"),
        (&["-e", "ok=x", "-e", r"(\d=$2"], "-e #2"),
        (
            &["--rules", "/nonexistent/rules.toml"],
            "cannot read rules file",
        ),
        (&["--bogus-flag"], "--bogus-flag"),
    ];
    for (args, message) in cases {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    let bad = temp_file(
        "bad.json",
        r#"[{"pattern": "a", "literal": "b", "replacement": ""}]"#,
    );
    let out = run(&["-f", bad.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("rule 1: give exactly one of"));
}

#[test]
fn held_limit_exits_4_without_the_held_text() {
    let mut child = srep()
        .args(["-e", r"<think>[\s\S]*?</think>=", "--max-held", "64"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut input = b"visible <think>".to_vec();
    // Never closed: everything from `<think>` on stays held, past the cap.
    input.extend(b"secret thought ".repeat(20));
    let _ = stdin.write_all(&input);
    drop(stdin);
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(4));
    assert_eq!(stdout, b"visible ");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("limit of 64"), "{stderr}");
}

#[test]
fn bytes_that_are_not_utf8_pass_through() {
    let out = run(&["--literal", "key=[K]"], b"\xff key \xc3\xa9 \xc3");
    assert_eq!(out.stdout, b"\xff [K] \xc3\xa9 \xc3");
}
