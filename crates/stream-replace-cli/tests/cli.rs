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
        assert_eq!(cols.len(), 5, "{line}");
        assert_eq!(cols[4], "", "rules from flags have no id: {line}");
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

// The text before a blocked SSN, and the SSN's digits: none may reach stdout.
const SSN: &str = "123-45-6789";
const SSN_DIGITS: [&str; 3] = ["123", "45", "6789"];

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

#[test]
fn pack_pii_masks_and_leaves_what_its_validators_reject() {
    // 4111... passes Luhn, 4111...1112 does not; 000-12-3456 fails the SSN
    // range rules, so it neither blocks nor is masked.
    let input = "mail ann@example.org, card 4111 1111 1111 1111, \
                 order 4111 1111 1111 1112, ref 000-12-3456.\n";
    let out = run(&["--pack", "pii"], input.as_bytes());
    assert_eq!(stderr(&out), "");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "mail [EMAIL], card [CARD], order 4111 1111 1111 1112, ref 000-12-3456.\n"
    );
}

#[test]
fn pack_rules_take_the_flags_place() {
    let input = format!("ssn {SSN} mail ann@example.org\n");
    // Before the pack, a rule of one's own wins the tie at the same start.
    let out = run(
        &["--literal", &format!("{SSN}=[MINE]"), "--pack", "pii"],
        input.as_bytes(),
    );
    assert_eq!(stderr(&out), "");
    assert!(out.status.success());
    assert_eq!(out.stdout, b"ssn [MINE] mail [EMAIL]\n");
    // After it, the pack's block rule wins.
    let out = run(
        &["--pack", "pii", "--literal", &format!("{SSN}=[MINE]")],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(out.stdout, b"ssn ");
}

fn assert_blocked_at(out: &Output, want_stdout: &str, start: usize) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(String::from_utf8(out.stdout.clone()).unwrap(), want_stdout);
    assert!(err.contains("us_ssn"), "{err}");
    assert!(err.contains(&format!("byte {start} ")), "{err}");
    for digits in SSN_DIGITS {
        assert!(!err.contains(digits), "stderr names the value: {err}");
    }
}

#[test]
fn a_valid_ssn_blocks_with_exit_3_and_only_the_text_before_it() {
    let before = "mail ann@example.org, ssn ";
    let input = format!("{before}{SSN} and after it bob@example.org\nmore\n");
    let out = run(&["--pack", "pii"], input.as_bytes());
    // The text before the SSN, its email masked; none of the SSN, nothing
    // after it.
    assert_blocked_at(&out, "mail [EMAIL], ssn ", before.len());
}

// The SSN arrives in two writes, and srep has already written the text
// before it when the second write comes: the block still holds.
#[test]
fn an_ssn_split_across_writes_blocks() {
    let mut child = srep()
        .args(["--pack", "pii"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = thread::spawn(move || {
        let mut buf = [0; 1024];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => tx.send(buf[..n].to_vec()).unwrap(),
            }
        }
    });
    let before = "mail ann@example.org, ssn ";
    let (first, second) = SSN.split_at(5);
    stdin
        .write_all(format!("{before}{first}").as_bytes())
        .unwrap();
    stdin.flush().unwrap();
    // Wait (a guard against hanging, not a timing assertion) until srep has
    // written what is safe of the first write: then it holds "123-4".
    let guard = Duration::from_secs(60);
    let want = "mail [EMAIL], ssn ";
    let mut seen = Vec::new();
    while seen.len() < want.len() {
        seen.extend(rx.recv_timeout(guard).unwrap());
    }
    assert_eq!(String::from_utf8(seen.clone()).unwrap(), want);
    let _ = stdin.write_all(format!("{second} and after it\n").as_bytes());
    drop(stdin);
    reader.join().unwrap();
    seen.extend(rx.try_iter().flatten());
    let status = child.wait().unwrap();
    let mut err = Vec::new();
    child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
    let out = Output {
        status,
        stdout: seen,
        stderr: err,
    };
    assert_blocked_at(&out, want, before.len());
}

#[test]
fn check_reports_pack_triggers_with_their_id() {
    let input = format!("ref 000-12-3456 ssn {SSN} mail ann@example.org\n");
    let out = run(&["--check", "--pack", "pii"], input.as_bytes());
    assert_eq!(stderr(&out), "");
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8(out.stdout).unwrap();
    let seen: Vec<(&str, &str)> = report
        .lines()
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 5, "{line}");
            let (start, end): (usize, usize) = (cols[1].parse().unwrap(), cols[2].parse().unwrap());
            (cols[4], &input[start..end])
        })
        .collect();
    // The block rule is reported as a trigger; the SSN its validator
    // rejects is not.
    assert_eq!(seen, [("us_ssn", SSN), ("email", "ann@example.org")]);
    for digits in SSN_DIGITS {
        assert!(!report.contains(digits), "{report}");
    }
}
