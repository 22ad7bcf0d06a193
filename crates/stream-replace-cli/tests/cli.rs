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
            (1, "ann@example.org"),
            (2, "4111 1111 1111 1111"),
            (3, "sk-AbCd1234"),
            (4, "password=hunter2"),
            (5, "10.0.0.12"),
            (1, "ann@example.org"),
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
        (&["-e", "a(b=x"], "rule 1 (-e \"a(b\"): invalid regex"),
        (&["-e", "ok=x", "-e", r"(\d=$2"], "rule 2 (-e"),
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
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("rule 1 (the 1st rule of ") && err.contains("give exactly one of"),
        "{err}"
    );
}

#[test]
fn held_limit_exits_4_without_the_held_text() {
    let mut child = srep()
        .args(["-z", "-e", r"<think>[\s\S]*?</think>=", "--max-held", "64"])
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

// Runs srep with `args` on no input and returns (status, stderr).
fn fails(args: &[&str]) -> (Option<i32>, String) {
    let out = run(args, b"");
    (out.status.code(), stderr(&out))
}

fn text(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

// Line mode: `^` is the start of each line, not only of the stream.
#[test]
fn an_anchored_rule_matches_on_every_line() {
    let input = "x\nAuthorization: Bearer sk-live-1234\nAuthorization: Basic YWxhZGRpbg==\r\ny\n";
    let out = run(
        &["-e", "^Authorization: .*=Authorization: ***"],
        input.as_bytes(),
    );
    assert_eq!(stderr(&out), "");
    // As in sed, `\r` is part of the line and `.*` takes it.
    assert_eq!(text(&out), "x\nAuthorization: ***\nAuthorization: ***\ny\n");
    for secret in ["sk-live-1234", "YWxhZGRpbg"] {
        assert!(!text(&out).contains(secret));
    }
    // `$` is the end of each line; on a CRLF line it is after the `\r`.
    let out = run(&["-e", r"\w+$=[LAST]"], b"one two\nthree four\r\nfive");
    assert_eq!(text(&out), "one [LAST]\nthree four\r\n[LAST]");
    let out = run(&["-e", r"\w+\r$=[LAST]"], b"one two\nthree four\r\nfive");
    assert_eq!(text(&out), "one two\nthree [LAST]\nfive");
}

// The README's `password=[^ ]+`: a password at the end of a line must not
// take the next line with it.
#[test]
fn a_negated_class_stops_at_the_line_end() {
    let input = "login password=hunter2\nnext line stays\npassword=x y\n";
    let rule = ["-e", r"(password=)[^ ]+=${1}***"];
    let out = run(&rule, input.as_bytes());
    assert_eq!(stderr(&out), "");
    assert_eq!(
        text(&out),
        "login password=***\nnext line stays\npassword=*** y\n"
    );
    // `\s` and `\W` leave out `\n` too.
    let out = run(
        &["-e", r"a\s+b=[AB]", "-e", r"c\W+d=[CD]"],
        b"a\nb a b\nc\nd c-d",
    );
    assert_eq!(text(&out), "a\nb [AB]\nc\nd [CD]");
    // With -z the input is one text and the class runs on.
    let out = run(&["-z", rule[0], rule[1]], input.as_bytes());
    assert_eq!(
        text(&out),
        "login password=*** line stays\npassword=*** y\n"
    );
}

#[test]
fn a_rule_written_to_cross_lines_needs_z() {
    for rule in [
        r"<think>[\s\S]*?</think>=",
        r"(?s)<think>.*?</think>=",
        r"a\nb=x",
    ] {
        let (code, err) = fails(&["-e", rule]);
        assert_eq!(code, Some(2), "{rule}");
        assert!(err.starts_with("srep: rule 1 (-e "), "{err}");
        assert!(err.contains("give -z"), "{err}");
    }
    let (code, err) = fails(&["--literal", "a\nb=x"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("rule 1 (--literal): it matches a newline"),
        "{err}"
    );
    let input = "keep <think>one\ntwo</think>this\n";
    let out = run(&["-z", "-e", r"<think>[\s\S]*?</think>="], input.as_bytes());
    assert_eq!(stderr(&out), "");
    assert_eq!(text(&out), "keep this\n");
}

// Pack rules run as the pack defines them: a PEM private key spans lines.
#[test]
fn pack_rules_span_lines_without_z() {
    let key = "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----";
    let input = format!("before\n{key}\nafter\n");
    let out = run(&["--pack", "pii"], input.as_bytes());
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(text(&out), "before\n");
}

#[test]
fn files_are_read_one_after_the_other_with_dash_for_stdin() {
    let a = temp_file("a.txt", "secret one\nlast line without newline");
    let b = temp_file("b.txt", "^secret two\n");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let rules = ["-e", "^secret=[S]", "--literal", "newline=[N]"];
    let out = run(&[&rules[..], &[a, "-", b]].concat(), b"secret stdin\n");
    assert_eq!(stderr(&out), "");
    // As in sed, `a.txt`'s last line is ended before the next file.
    assert_eq!(
        text(&out),
        "[S] one\nlast line without [N]\n[S] stdin\n^secret two\n"
    );
    // With -z files are joined byte for byte.
    let out = run(&[&["-z"], &rules[..], &[a, b]].concat(), b"");
    assert_eq!(text(&out), "[S] one\nlast line without [N]^secret two\n");
    // --check counts offsets in the joined input.
    let out = run(&[&["--check"], &rules[..], &[b, a]].concat(), b"");
    assert_eq!(
        text(&out).lines().collect::<Vec<_>>(),
        ["1\t12\t18\t\"^secret\"\t", "2\t41\t48\t\"newline\"\t"]
    );
}

#[test]
fn a_missing_file_is_refused_before_anything_is_written() {
    let a = temp_file("present.txt", "secret\n");
    let out = run(
        &[
            "-e",
            "secret=x",
            a.to_str().unwrap(),
            "/nonexistent/srep-input",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("cannot read /nonexistent/srep-input"),
        "{}",
        stderr(&out)
    );
    let dir = std::env::temp_dir();
    let (code, err) = fails(&["-e", "a=b", dir.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("is a directory"), "{err}");
}

// A directory of its own per test, for -i's temporary files.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("srep-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[cfg(unix)]
#[test]
fn in_place_rewrites_each_file_and_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("in-place");
    let a = dir.join("a.log");
    let b = dir.join("b.log");
    std::fs::write(&a, "password=one\r\nok\n").unwrap();
    std::fs::write(&b, "x password=two").unwrap();
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.join("link.log");
    std::os::unix::fs::symlink("b.log", &link).unwrap();
    let out = run(
        &[
            "-i",
            "-e",
            r"(password=)[^ \r]+=${1}***",
            a.to_str().unwrap(),
            link.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(stderr(&out), "");
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    // Each file is a stream of its own: no newline is added between them.
    assert_eq!(std::fs::read(&a).unwrap(), b"password=***\r\nok\n");
    assert_eq!(std::fs::read(&b).unwrap(), b"x password=***");
    let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    // The link still points at the edited file; no temporary file is left.
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(entries(&dir), ["a.log", "b.log", "link.log"]);
}

#[test]
fn in_place_leaves_a_blocked_file_as_it_was() {
    let dir = temp_dir("in-place-block");
    let a = dir.join("a.log");
    let b = dir.join("b.log");
    let c = dir.join("c.log");
    std::fs::write(&a, "mail ann@example.org\n").unwrap();
    let blocked = format!("ssn {SSN} and ann@example.org\n");
    std::fs::write(&b, &blocked).unwrap();
    std::fs::write(&c, "mail bob@example.org\n").unwrap();
    let paths = [
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        c.to_str().unwrap(),
    ];
    let out = run(&[&["-i", "--pack", "pii"], &paths[..]].concat(), b"");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(out.stdout.is_empty());
    assert!(err.contains("(--pack pii: us_ssn)"), "{err}");
    assert!(err.contains(&format!("at byte 4 of {}", paths[1])), "{err}");
    assert!(err.contains("the file is left as it was"), "{err}");
    for digits in SSN_DIGITS {
        assert!(!err.contains(digits), "{err}");
    }
    // The files before are edited, the blocked one is untouched, srep
    // stopped before the next, and no temporary file is left.
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "mail [EMAIL]\n");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), blocked);
    assert_eq!(
        std::fs::read_to_string(&c).unwrap(),
        "mail bob@example.org\n"
    );
    assert_eq!(entries(&dir), ["a.log", "b.log", "c.log"]);
}

#[test]
fn in_place_leaves_a_file_over_the_held_limit_as_it_was() {
    let dir = temp_dir("in-place-held");
    let a = dir.join("a.txt");
    let text = format!("kept <think>{}", "thought ".repeat(40));
    std::fs::write(&a, &text).unwrap();
    let out = run(
        &[
            "-i",
            "-z",
            "-e",
            r"<think>[\s\S]*?</think>=",
            "--max-held",
            "64",
            a.to_str().unwrap(),
        ],
        b"",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("(--max-held)"), "{err}");
    assert!(err.contains("the file is left as it was"), "{err}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), text);
    assert_eq!(entries(&dir), ["a.txt"]);
}

#[test]
fn in_place_refuses_what_it_cannot_edit() {
    let dir = temp_dir("in-place-refuse");
    let a = dir.join("a.log");
    std::fs::write(&a, "secret\n").unwrap();
    let a = a.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["-i", "-e", "secret=x", a, "-"], "cannot edit stdin"),
        (
            &["-i", "-e", "secret=x", a, "/nonexistent/f"],
            "cannot edit /nonexistent/f",
        ),
        (
            &["-i", "-e", "secret=x", dir.to_str().unwrap()],
            "not a regular file",
        ),
        (&["-i", "-e", "secret=x"], "<FILE>"),
        (&["-i", "--check", "-e", "secret=x", a], "--check"),
    ];
    for (args, message) in cases {
        let (code, err) = fails(args);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    // Nothing was edited.
    assert_eq!(std::fs::read_to_string(a).unwrap(), "secret\n");
}

// Messages count rules one way, from 1 in command-line order, and name
// no library type.
#[test]
fn messages_count_rules_from_1_and_name_no_library_type() {
    let rules = temp_file(
        "two.json",
        r#"[{"literal": "x", "replacement": "y"}, {"pattern": "a(", "replacement": ""}]"#,
    );
    // The -e after the pack's rules.
    let after_pack = format!(
        "rule {} (-e \"(\"): invalid regex",
        stream_replace::pack::pii().rules().len() + 2
    );
    let cases: &[(&[&str], &str)] = &[
        (
            &["-e", "ok=x", "-e", r"(\d)=$2"],
            "rule 2 (-e \"(\\\\d)\"): replacement names an unknown capture group",
        ),
        (
            &["--literal", "a=b", "-e", "a(=x"],
            "rule 2 (-e \"a(\"): invalid regex",
        ),
        (
            &["-e", "a=b", "-f", rules.to_str().unwrap()],
            "rule 3 (the 2nd rule of ",
        ),
        (
            &["--literal", "a=b", "--pack", "pii", "-e", "(=x"],
            after_pack.as_str(),
        ),
        (
            &["-e", r"(?:\w{1000}){1000}=x"],
            "rule 1 (-e \"(?:\\\\w{1000}){1000}\"): too big",
        ),
        // Each fits the size limit, the four together do not.
        (
            &[
                "-e",
                r"\w{150}x1=y",
                "-e",
                r"\w{150}x2=y",
                "-e",
                r"\w{150}x3=y",
                "-e",
                r"\w{150}x4=y",
            ],
            "rule 4 (-e \"\\\\w{150}x4\"): too big: rules 1 to 4 together",
        ),
    ];
    for (args, message) in cases {
        let (code, err) = fails(args);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(!err.contains("rule 0"), "{args:?}: {err}");
        assert!(!err.contains("Config"), "{args:?}: {err}");
    }
    // The held limit names the flag that sets it.
    let out = run(
        &["-z", "-e", r"<think>[\s\S]*?</think>=", "--max-held", "64"],
        &[b"<think>".as_slice(), &[b'x'; 200]].concat(),
    );
    assert_eq!(out.status.code(), Some(4));
    let err = stderr(&out);
    assert!(
        err.contains("more than the limit of 64 (--max-held)"),
        "{err}"
    );
    assert!(!err.contains("Config"), "{err}");
    // A block names the rule by the same count.
    let out = run(
        &["--literal", "a=b", "--pack", "pii"],
        format!("ssn {SSN}\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("blocked by rule "), "{err}");
    let n: usize = err["srep: blocked by rule ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let check = run(
        &["--check", "--literal", "a=b", "--pack", "pii"],
        format!("ssn {SSN}\n").as_bytes(),
    );
    assert_eq!(
        text(&check).split('\t').next(),
        Some(n.to_string().as_str())
    );
}

// `[[:alnum:]]` is ASCII-only in this syntax, unlike sed's in a UTF-8
// locale; `\w` is Unicode. The help says so.
#[test]
fn posix_classes_are_ascii_and_the_help_says_so() {
    let input = "zoë@example.org ann@example.org\n";
    let out = run(
        &["-e", r"[[:alnum:]]+@example\.org=[EMAIL]"],
        input.as_bytes(),
    );
    assert_eq!(text(&out), "zoë@example.org [EMAIL]\n");
    let out = run(&["-e", r"\w+@example\.org=[EMAIL]"], input.as_bytes());
    assert_eq!(text(&out), "[EMAIL] [EMAIL]\n");
    let help = srep().arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("[[:alnum:]]` does not match `ë`"), "{help}");
    assert!(help.contains("use `\\w`"), "{help}");
    assert!(help.contains("unless -z"), "{help}");
}

// The README's first example, on an address with a dotted domain.
#[test]
fn the_readme_email_rule_takes_the_whole_domain() {
    let readme = include_str!("../README.md");
    let rule = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+=[EMAIL]";
    assert!(readme.contains(rule), "the README's example changed");
    let out = run(&["-e", rule], b"user=bob.lee@corp.example.org ann@x.io.\n");
    assert_eq!(text(&out), "user=[EMAIL] [EMAIL].\n");
}

// Regression: line mode once ended the line at the end of every read, not
// only at the end of a file, which cut lines in two and let an SSN split
// across reads through (`an_ssn_split_across_writes_blocks`).
#[test]
fn a_line_split_across_reads_stays_one_line() {
    let mut child = srep()
        .args(["-e", "^abcdef$=[LINE]"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
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
    let guard = Duration::from_secs(60);
    // "x\n" is written once srep has read it: the next write is another
    // read.
    stdin.write_all(b"x\nabc").unwrap();
    stdin.flush().unwrap();
    assert_eq!(rx.recv_timeout(guard).unwrap(), b"x\n");
    stdin.write_all(b"def\nabc").unwrap();
    drop(stdin);
    reader.join().unwrap();
    let rest: Vec<u8> = rx.try_iter().flatten().collect();
    assert_eq!(String::from_utf8(rest).unwrap(), "[LINE]\nabc");
    assert!(child.wait().unwrap().success());
}

// sed sees no line after the input's last newline, nor in an empty input:
// a rule that can match empty text must not match there. (Found while
// comparing with sed: `printf 'a\n' | srep -e '^=> '` gave "> a\n> ".)
// Each want is GNU sed 4.9's output for `sed -E 's/RULE/REPL/g'`.
#[test]
fn a_rule_matching_empty_text_sees_the_lines_sed_sees() {
    let cases: &[(&str, &str, &str)] = &[
        ("^=> ", "a\nb\n", "> a\n> b\n"),
        ("^=> ", "", ""),
        ("^=> ", "\n", "> \n"),
        ("^=> ", "a\n\n", "> a\n> \n"),
        ("^=> ", "abc", "> abc"),
        ("$=;", "a\r\nb\r\n", "a\r;\nb\r;\n"),
        ("$=;", "a\nb", "a;\nb;"),
        ("x*=-", "abc\n", "-a-b-c-\n"),
        ("^$=E", "a\n\nb\n", "a\nE\nb\n"),
        (r"^\w*=[$0]", "ab\n\ncd\n", "[ab]\n[]\n[cd]\n"),
    ];
    for (rule, input, want) in cases {
        let out = run(&["-e", rule], input.as_bytes());
        assert_eq!(stderr(&out), "", "{rule} on {input:?}");
        assert_eq!(text(&out), *want, "{rule} on {input:?}");
        // The same with more rules, and with a line split across reads.
        let out = run(&["-e", "zz=y", "-e", rule], input.as_bytes());
        assert_eq!(text(&out), *want, "{rule} on {input:?}");
    }
    // Across files: the added newline ends the first file's line.
    let a = temp_file("empty-a.txt", "a");
    let b = temp_file("empty-b.txt", "b\n");
    let out = run(
        &["-e", "^=>", a.to_str().unwrap(), b.to_str().unwrap()],
        b"",
    );
    assert_eq!(text(&out), ">a\n>b\n");
    // With -z the input is one text, as replacing it whole gives.
    let out = run(&["-z", "-e", "$=;"], b"a\nb\n");
    assert_eq!(text(&out), "a\nb\n;");
}

// The check `chunk-invariance check --cmd "srep --literal 'secret=[X]'"
// --splits upto:3` runs, through the library the command is built on: the
// raw framing writes each chunk only once srep has taken the one before, so
// srep's reads see every cut.
#[test]
#[cfg(target_os = "linux")]
fn srep_passes_the_chunk_invariance_check_at_default_settings() {
    use chunk_invariance::Splits;
    use chunk_invariance_cli::FilterCommand;

    let cmd = format!("'{}' --literal 'secret=[X]'", env!("CARGO_BIN_EXE_srep"));
    let outcome = FilterCommand::new(cmd)
        .check_text("my secret is here", &Splits::UpTo(3))
        .unwrap();
    assert_eq!(
        outcome.report(),
        "chunk-invariant: 137 splits checked, each gave the whole-input output"
    );
}
