//! The command against real child processes: shell fixtures that read
//! length-prefixed frames, and `cat`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "fixtures", name]
        .iter()
        .collect();
    format!("sh '{}'", path.display())
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chunk-invariance"))
        .args(args)
        .output()
        .expect("the command runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

const KEY_INPUT: &str = "use sk-AbCd1234 now";

#[test]
fn a_right_filter_passes_every_split_with_exit_0() {
    let cmd = fixture("sed_whole_stream.sh");
    let out = run(&[
        "check",
        "--cmd",
        &cmd,
        "--text",
        KEY_INPUT,
        "--framing",
        "length-prefixed",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        stdout(&out),
        "chunk-invariant: 19 splits checked, each gave the whole-input output\n"
    );
    let out = run(&[
        "check",
        "--cmd",
        &cmd,
        "--text",
        "sk-AbCd12",
        "--framing",
        "length-prefixed",
        "--splits",
        "all",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout(&out), "{\"ok\":true,\"splits_checked\":256}\n");
}

#[test]
fn sed_on_each_chunk_fails_on_the_key_cut_after_its_s() {
    let cmd = fixture("sed_each_frame.sh");
    let out = run(&[
        "check",
        "--cmd",
        &cmd,
        "--text",
        KEY_INPUT,
        "--framing",
        "length-prefixed",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        stdout(&out),
        r#"stream filter is not chunk-invariant
  input:    "use sk-AbCd1234 now"
  split:    ["use s", "k-AbCd1234 now"] (cut at 5)
  whole:    "use [KEY] now"
  streamed: "use sk-AbCd1234 now"
  differ:   from byte 4: whole "[KEY] now", streamed "sk-AbCd1234 now"
  split #6 in the order tried; generated splits run fewest parts first
"#
    );
    let out = run(&[
        "check",
        "--cmd",
        &cmd,
        "--text",
        KEY_INPUT,
        "--framing",
        "length-prefixed",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let json = stdout(&out);
    for field in [
        r#""kind":"not_invariant""#,
        r#""split":["use s","k-AbCd1234 now"]"#,
        r#""cuts":[5]"#,
        r#""split_number":6"#,
        r#""whole":"use [KEY] now""#,
        r#""streamed":"use sk-AbCd1234 now""#,
        r#""first_difference":4"#,
        r#""shrunk_from":null"#,
    ] {
        assert!(json.contains(field), "{field} in {json}");
    }
}

#[test]
fn a_random_failure_is_shrunk_to_the_same_split() {
    let cmd = fixture("sed_each_frame.sh");
    let input = "a key: sk-AbCd1234, more text";
    let out = run(&[
        "check",
        "--cmd",
        &cmd,
        "--text",
        input,
        "--framing",
        "length-prefixed",
        "--splits",
        "random:20:3",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let json = stdout(&out);
    // The first cut inside the key, after its "s", is all it takes.
    assert!(
        json.contains(r#""split":["a key: s","k-AbCd1234, more text"]"#),
        "{json}"
    );
    assert!(json.contains(r#""shrunk_from":["#), "{json}");
}

#[test]
fn the_report_does_not_depend_on_the_number_of_jobs() {
    let cmd = fixture("sed_each_frame.sh");
    let reports: Vec<String> = ["1", "4"]
        .iter()
        .map(|jobs| {
            let out = run(&[
                "check",
                "--cmd",
                &cmd,
                "--text",
                KEY_INPUT,
                "--framing",
                "length-prefixed",
                "--splits",
                "upto:3",
                "--jobs",
                jobs,
            ]);
            assert_eq!(out.status.code(), Some(1), "{out:?}");
            stdout(&out)
        })
        .collect();
    assert_eq!(reports[0], reports[1]);
    assert!(reports[0].contains("(cut at 5)"), "{}", reports[0]);
}

#[test]
fn a_filter_that_hangs_on_one_split_is_reported_with_that_split() {
    let cmd = fixture("hang_on_a.sh");
    let out = run(&[
        "check",
        "--cmd",
        &cmd,
        "--text",
        "abc",
        "--framing",
        "length-prefixed",
        "--timeout-ms",
        "300",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let json = stdout(&out);
    assert!(json.contains(r#""kind":"timeout""#), "{json}");
    assert!(json.contains(r#""split":["a","bc"]"#), "{json}");
    assert!(json.contains(r#""cuts":[1]"#), "{json}");
    assert!(
        json.contains("no result after 300 ms: the filter hangs"),
        "{json}"
    );
}

#[test]
fn a_filter_that_crashes_on_one_split_is_reported_with_that_split() {
    let cmd = fixture("crash_on_b.sh");
    let out = run(&[
        "check",
        "--cmd",
        &cmd,
        "--text",
        "abc",
        "--framing",
        "length-prefixed",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    assert!(text.starts_with("stream filter failed\n"), "{text}");
    assert!(
        text.contains(r#"split:    ["a", "bc"] (cut at 1)"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#"error:    the filter exited with status 3; its stderr ends "cannot handle a chunk that starts with b""#
        ),
        "{text}"
    );
    let out = run(&[
        "check",
        "--cmd",
        &cmd,
        "--text",
        "abc",
        "--framing",
        "length-prefixed",
        "--json",
    ]);
    assert!(stdout(&out).contains(r#""kind":"crash""#), "{out:?}");
}

#[test]
fn a_filter_that_fails_on_the_whole_input_is_reported_without_a_split() {
    let out = run(&["check", "--cmd", "exit 4", "--text", "abc", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let json = stdout(&out);
    assert!(json.contains(r#""kind":"crash""#), "{json}");
    assert!(json.contains(r#""split":null"#), "{json}");
    assert!(json.contains("whole-input filter failed"), "{json}");
}

#[test]
fn raw_framing_and_bytes_cut_inside_characters() {
    let dir = std::env::temp_dir().join(format!("chunk-invariance-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("input.bin");
    std::fs::write(&file, "é€".as_bytes()).unwrap();
    let file = file.to_str().unwrap();
    // `cat` is chunk-invariant whatever the cuts: 5 bytes, 16 splits.
    let out = run(&[
        "check", "--cmd", "cat", "--input", file, "--bytes", "--splits", "all",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).starts_with("chunk-invariant: 16 splits checked"));
    // As text, the same input has one cut point.
    let out = run(&[
        "check", "--cmd", "cat", "--input", file, "--splits", "all", "--json",
    ]);
    assert_eq!(stdout(&out), "{\"ok\":true,\"splits_checked\":2}\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors_exit_2() {
    let cases: [&[&str]; 6] = [
        &["check", "--cmd", "cat"],
        &["check", "--cmd", "cat", "--text", "a", "--splits", "some"],
        &["check", "--cmd", "cat", "--text", "a", "--splits", "upto:0"],
        &[
            "check",
            "--cmd",
            "cat",
            "--text",
            "seventeen chars!!",
            "--splits",
            "all",
        ],
        &["check", "--cmd", "cat", "--input", "/nonexistent/input"],
        &["frobnicate"],
    ];
    for args in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
    }
    let invalid =
        std::env::temp_dir().join(format!("chunk-invariance-cli-{}.bin", std::process::id()));
    std::fs::write(&invalid, b"\xff\xfe").unwrap();
    let out = run(&[
        "check",
        "--cmd",
        "cat",
        "--input",
        invalid.to_str().unwrap(),
    ]);
    std::fs::remove_file(&invalid).unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("pass --bytes"),
        "{out:?}"
    );
}

/// The issue's input: "secret" runs from byte 3 to byte 9.
const SECRET_INPUT: &str = "my secret is here";

// A filter slow to start found every chunk already in the pipe at its first
// read, and so passed whatever it did per read. With raw framing a chunk is
// written only once the filter has taken the one before, so its reads see
// the cuts, with no pause to tune.
#[test]
#[cfg(target_os = "linux")]
fn a_slow_filter_that_replaces_per_read_fails_at_default_settings() {
    let cmd = format!(
        "python3 {}",
        fixture("per_read_filter.py").trim_start_matches("sh ")
    );
    let out = run(&["check", "--cmd", &cmd, "--text", SECRET_INPUT]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        stdout(&out),
        r#"stream filter is not chunk-invariant
  input:    "my secret is here"
  split:    ["my s", "ecret is here"] (cut at 4)
  whole:    "my [X] is here"
  streamed: "my secret is here"
  differ:   from byte 3: whole "[X] is here", streamed "secret is here"
  split #5 in the order tried; generated splits run fewest parts first
"#
    );
}

#[test]
#[cfg(target_os = "linux")]
fn a_line_buffered_filter_and_cat_pass_at_default_settings() {
    let line_filter = format!(
        "python3 {}",
        fixture("line_filter.py").trim_start_matches("sh ")
    );
    let text = "my secret\nis here\n";
    let out = run(&["check", "--cmd", &line_filter, "--text", text, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout(&out), "{\"ok\":true,\"splits_checked\":18}\n");

    let out = run(&["check", "--cmd", "cat", "--text", SECRET_INPUT]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        stdout(&out),
        "chunk-invariant: 17 splits checked, each gave the whole-input output\n"
    );
    // srep's own tests run it under this check (`FilterCommand`), with the
    // binary their build made.
}

#[test]
#[cfg(target_os = "linux")]
fn a_filter_that_never_reads_is_reported_at_the_time_limit() {
    let started = std::time::Instant::now();
    let out = run(&[
        "check",
        "--cmd",
        &fixture("never_reads.sh"),
        "--text",
        "abc",
        "--timeout-ms",
        "500",
        "--json",
    ]);
    // The filter sleeps for 60 s: ending well before shows that it was
    // killed at the limit, not waited for.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let json = stdout(&out);
    assert!(json.contains(r#""kind":"not_reading""#), "{json}");
    assert!(json.contains(r#""split":null"#), "{json}");
    assert!(
        json.contains(
            "no result after 500 ms: the filter was not reading its input: chunk 1 of 1 was \
             still in the pipe to its standard input"
        ),
        "{json}"
    );
}

#[test]
#[cfg(target_os = "linux")]
fn a_run_names_the_chunk_a_filter_did_not_take() {
    use chunk_invariance_cli::{FilterCommand, RunFailure};
    use std::time::Duration;

    // `head` takes the first chunk (two bytes) and exits; the shell then
    // sleeps with the input still open, reading none of it.
    let limit = Duration::from_millis(2000);
    let filter = FilterCommand::new("head -c 2 >/dev/null; sleep 60").timeout(limit);
    let failure = filter.run(&[b"ab", b"cd"]).unwrap_err();
    assert_eq!(
        failure,
        RunFailure::NotReading {
            limit,
            chunk: 2,
            chunks: 2
        }
    );

    // A filter that exits without reading all its input: what it wrote is
    // its output, and no read of it joined two chunks.
    let run = FilterCommand::new("head -c 1")
        .run(&[b"ab", b"cd"])
        .unwrap();
    assert_eq!(run.output(), b"a");
    assert!(run.boundaries_seen());
}
