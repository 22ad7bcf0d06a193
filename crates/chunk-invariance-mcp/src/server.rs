//! The server: its three tools and what it tells a client about them.

use std::num::NonZeroUsize;
use std::time::Duration;

use chunk_invariance::Splits;
use chunk_invariance_cli::{FilterCommand, Framing, Outcome, parse_splits};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::schemars::JsonSchema;
use rmcp::serde::Deserialize;
use rmcp::{ErrorData, ServerHandler, serde_json, tool, tool_handler, tool_router};

use crate::examples::Example;
use crate::explain::explanation;
use crate::regression::{
    Input, check_cuts, cuts_of_split, from_hex, is_identifier, regression_test, test_name,
};
use crate::schema;

/// What the server says about where a command runs and where the results
/// go, in its instructions and in the description of the tool that runs
/// commands.
macro_rules! safety {
    () => {
        "A command runs on this machine, with the server's rights, in a child process killed \
         after timeout_ms per run. The server makes no network calls and writes no files. Its \
         result repeats the input, the filter's outputs and the end of its standard error, and \
         goes into this conversation: use synthetic values only, never a real secret or real \
         personal data."
    };
}

const INSTRUCTIONS: &str = concat!(
    "Tests whether a streaming filter (a redactor, guardrail or rewriter that processes text in \
     chunks) gives the same output however its input is split. A filter that scans each chunk \
     alone leaks a value cut across two chunks. Use check_stream_filter on the user's filter \
     program (or a built-in example), then write_regression_test to turn the failing split it \
     reports into a Rust #[test] with chunk_invariance::assert_chunk_invariant_with and \
     Splits::explicit. explain shows why the common designs fail. ",
    safety!()
);

const CHECK: &str = concat!(
    "Check a stream filter: run it on the whole input, then on each split of the input (the \
     chunks written to its standard input one by one), and compare the joined output with the \
     whole-input output. The filter is a shell command line (reading stdin, writing stdout) or \
     a built-in example of the Rust crate chunk-invariance. With raw framing each chunk is \
     written only once the filter has taken the one before out of the pipe (Linux), so its \
     reads see every cut; where that cannot be confirmed the result is not ok (kind \
     unconfirmed) and says how to make the cuts reach the filter. Returns the report as text \
     (the smallest failing split with its cuts, both outputs and where they first differ, or \
     how many splits passed) and as JSON (structuredContent, and the second text block): ok, \
     kind, input, split, cuts, whole, streamed, first_difference, message, report. Pass its \
     input and cuts to write_regression_test. ",
    safety!()
);

const REGRESSION: &str = "Write a regression test for a failing split: Rust source of a \
    #[test] that replays the split with chunk_invariance::assert_chunk_invariant_with and \
    Splits::explicit, for the user's stream filter and whole-input filter (Rust expressions) \
    or a built-in example. Give the input and the split as check_stream_filter reported them \
    (its JSON's input and cuts, or split, and encoding). Returns a note, then the test's \
    source as its own text block (and both as structuredContent: note, source); save it under the crate's tests/ with chunk-invariance as a \
    dev-dependency. For a built-in example it also says whether the test fails today.";

const EXPLAIN: &str = "Explain why per-chunk and carry-over designs of a streaming filter \
    fail and what works: runs the three example redactors of the Rust crate chunk-invariance \
    and returns what each does at a chunk boundary with the check's real report. No inputs.";

/// The arguments of `check_stream_filter`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "rmcp::serde", deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct CheckParams {
    /// The filter as a shell command line (`sh -c`), reading its input on
    /// stdin and writing its output on stdout, started once per split.
    /// Give this or `example`.
    #[serde(default)]
    command: Option<String>,
    /// A built-in example filter instead of a command: `each_chunk` and
    /// `carry_over` are wrong designs, `holding_back` the right one.
    #[serde(default)]
    example: Option<Example>,
    /// The input text. Synthetic values only: it is echoed in the result.
    input: String,
    /// Which splits to try: `two` (default: the whole input, then every
    /// single cut), `all` (every split; inputs up to 16 units), `upto:K`
    /// (at most K parts), `random:N:SEED` (N seeded random splits).
    #[serde(default)]
    splits: Option<String>,
    /// Cut between any two bytes, also inside UTF-8 characters, and
    /// compare outputs as bytes (commands only). Default false: cut
    /// between characters.
    #[serde(default)]
    bytes: bool,
    /// How chunks are written to the command's stdin: `raw` (default:
    /// each chunk's bytes, written and flushed on their own) or
    /// `length-prefixed` (its length in ASCII decimal, a newline, then its
    /// bytes).
    #[serde(default)]
    framing: Option<FramingParam>,
    /// Milliseconds to wait between two chunks, on top of waiting (raw
    /// framing, Linux) until the filter has taken each chunk (commands
    /// only; default 0).
    #[serde(default)]
    pause_ms: Option<u64>,
    /// Milliseconds one run may take before it is killed and reported as
    /// a hang (commands only; default 10000).
    #[serde(default)]
    timeout_ms: Option<u64>,
    /// How many runs go on at once (commands only; default: the number of
    /// CPUs).
    #[serde(default)]
    jobs: Option<usize>,
}

/// How chunks are written to the command's stdin.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(crate = "rmcp::serde", rename_all = "kebab-case")]
#[schemars(crate = "rmcp::schemars")]
pub(crate) enum FramingParam {
    /// Each chunk's bytes as they are.
    Raw,
    /// Each chunk as its length, a newline, then its bytes.
    LengthPrefixed,
}

impl From<FramingParam> for Framing {
    fn from(param: FramingParam) -> Framing {
        match param {
            FramingParam::Raw => Framing::Raw,
            FramingParam::LengthPrefixed => Framing::LengthPrefixed,
        }
    }
}

/// The arguments of `write_regression_test`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(crate = "rmcp::serde", deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct RegressionParams {
    /// The input the split cuts, as in the check's report (`input`).
    input: String,
    /// The failing split as byte offsets of its cuts (`cuts` in the
    /// check's JSON). Give this or `split`.
    #[serde(default)]
    cuts: Option<Vec<usize>>,
    /// The failing split as its chunks (`split` in the check's JSON),
    /// which must join back to the input. Give this or `cuts`.
    #[serde(default)]
    split: Option<Vec<String>>,
    /// How `input` and `split` are written: `utf-8` (default) or `hex`,
    /// as `encoding` in the check's JSON. With `hex` the test checks a
    /// byte input.
    #[serde(default)]
    encoding: Option<Encoding>,
    /// The stream filter under test, a Rust expression in scope in the
    /// test: a function or closure taking the chunks of one split
    /// (`chunk_invariance::Chunks`) and returning output chunks, such as
    /// `per_chunk(...)`. Give it with `whole_filter`, or give `example`.
    #[serde(default)]
    stream_filter: Option<String>,
    /// The filter on the whole input, a Rust expression: a function or
    /// closure taking the whole input and returning the output.
    #[serde(default)]
    whole_filter: Option<String>,
    /// A built-in example as the filters instead: its stream filter
    /// against `chunk_invariance::examples::redact`.
    #[serde(default)]
    example: Option<Example>,
    /// The test function's name (default: from the cuts, such as
    /// `chunk_invariant_cut_at_5`).
    #[serde(default)]
    test_name: Option<String>,
}

/// How the input and split of a report are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "rmcp::serde")]
#[schemars(crate = "rmcp::schemars")]
pub(crate) enum Encoding {
    /// UTF-8 text.
    #[default]
    #[serde(rename = "utf-8")]
    Utf8,
    /// Hex digits, two per byte.
    #[serde(rename = "hex")]
    Hex,
}

/// The chunk-invariance MCP server.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Server {
    pub(crate) fn new() -> Server {
        Server {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = CHECK, output_schema = schema::check_output())]
    async fn check_stream_filter(
        &self,
        Parameters(params): Parameters<CheckParams>,
    ) -> Result<CallToolResult, ErrorData> {
        // The check blocks on child processes (or runs a long in-process
        // check); it must not hold up the transport.
        let checked = tokio::task::spawn_blocking(move || check(params))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the check stopped: {e}"), None))?;
        let outcome = match checked {
            Ok(outcome) => outcome,
            Err(message) => return Ok(CallToolResult::error(vec![ContentBlock::text(message)])),
        };
        let json = outcome.to_json();
        let value: serde_json::Value = serde_json::from_str(&json)
            .map_err(|e| ErrorData::internal_error(format!("the report is not JSON: {e}"), None))?;
        let mut result = CallToolResult::success(vec![
            ContentBlock::text(outcome.report()),
            ContentBlock::text(json),
        ]);
        result.structured_content = Some(value);
        Ok(result)
    }

    #[tool(description = REGRESSION, output_schema = schema::regression_output())]
    async fn write_regression_test(
        &self,
        Parameters(params): Parameters<RegressionParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let written = tokio::task::spawn_blocking(move || write_test(params))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the check stopped: {e}"), None))?;
        Ok(match written {
            Ok((note, source)) => {
                let value = serde_json::json!({"note": note, "source": source});
                let mut result = CallToolResult::success(vec![
                    ContentBlock::text(note),
                    ContentBlock::text(source),
                ]);
                result.structured_content = Some(value);
                result
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        })
    }

    #[tool(description = EXPLAIN)]
    async fn explain(&self) -> Result<CallToolResult, ErrorData> {
        let text = tokio::task::spawn_blocking(explanation)
            .await
            .map_err(|e| ErrorData::internal_error(format!("the check stopped: {e}"), None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }
}

/// Runs `check_stream_filter`; `Err` is a message for the caller.
fn check(params: CheckParams) -> Result<Outcome, String> {
    let splits = match &params.splits {
        Some(splits) => parse_splits(splits).map_err(|e| format!("splits: {e}"))?,
        None => Splits::TwoPart,
    };
    let cannot_try = |e: chunk_invariance::ChunkInvarianceError| {
        format!("these splits cannot be tried on this input: {e}")
    };
    match (params.command, params.example) {
        (Some(command), None) => {
            let mut filter = FilterCommand::new(command);
            if let Some(framing) = params.framing {
                filter = filter.framing(framing.into());
            }
            if let Some(ms) = params.pause_ms {
                filter = filter.pause(Duration::from_millis(ms));
            }
            if let Some(ms) = params.timeout_ms {
                filter = filter.timeout(Duration::from_millis(ms));
            }
            if let Some(jobs) = params.jobs {
                let jobs = NonZeroUsize::new(jobs).ok_or("jobs must be at least 1")?;
                filter = filter.jobs(jobs);
            }
            if params.bytes {
                filter.check_bytes(params.input.as_bytes(), &splits)
            } else {
                filter.check_text(&params.input, &splits)
            }
            .map_err(cannot_try)
        }
        (None, Some(example)) => {
            let for_commands = [
                ("bytes", params.bytes),
                ("framing", params.framing.is_some()),
                ("pause_ms", params.pause_ms.is_some()),
                ("timeout_ms", params.timeout_ms.is_some()),
                ("jobs", params.jobs.is_some()),
            ];
            if let Some((name, _)) = for_commands.iter().find(|(_, given)| *given) {
                return Err(format!(
                    "{name} applies to a command; the built-in examples run in the server on text"
                ));
            }
            Outcome::from_result(example.check(&params.input, splits)).map_err(cannot_try)
        }
        (Some(_), Some(_)) => Err("give either command or example, not both".to_owned()),
        (None, None) => {
            Err("give the filter: command (a shell command line) or example".to_owned())
        }
    }
}

/// Runs `write_regression_test`: the note and the test's source, or a
/// message for the caller.
fn write_test(params: RegressionParams) -> Result<(String, String), String> {
    let encoding = params.encoding.unwrap_or_default();
    let decode = |s: &str| match encoding {
        Encoding::Utf8 => Ok(s.as_bytes().to_vec()),
        Encoding::Hex => from_hex(s),
    };
    let input = match encoding {
        Encoding::Utf8 => Input::Text(params.input),
        Encoding::Hex => Input::Bytes(from_hex(&params.input)?),
    };
    let cuts = match (params.cuts, params.split) {
        (Some(cuts), None) => cuts,
        (None, Some(split)) => {
            let chunks = split
                .iter()
                .map(|chunk| decode(chunk))
                .collect::<Result<Vec<_>, _>>()?;
            if chunks.is_empty() {
                return Err("the split has no chunks".to_owned());
            }
            cuts_of_split(input.as_bytes(), &chunks)?
        }
        (Some(_), Some(_)) => return Err("give either cuts or split, not both".to_owned()),
        (None, None) => return Err("give the failing split: cuts or split".to_owned()),
    };
    check_cuts(&input, &cuts)?;
    if let (Some(example), Input::Bytes(_)) = (params.example, &input) {
        return Err(format!(
            "the built-in example {} takes text: give the input as utf-8",
            example.function()
        ));
    }
    let (stream_filter, whole_filter) =
        match (params.example, params.stream_filter, params.whole_filter) {
            (Some(example), None, None) => (
                format!("chunk_invariance::examples::{}", example.function()),
                "chunk_invariance::examples::redact".to_owned(),
            ),
            (None, Some(stream), Some(whole)) => (stream, whole),
            (Some(_), _, _) => {
                return Err(
                    "give either example or stream_filter and whole_filter, not both".to_owned(),
                );
            }
            (None, _, _) => return Err(
                "give the filters under test: stream_filter and whole_filter (Rust expressions), \
                 or example"
                    .to_owned(),
            ),
        };
    let name = match params.test_name {
        Some(name) if is_identifier(&name) => name,
        Some(name) => return Err(format!("test_name {name:?} cannot name a Rust function")),
        None => test_name(&cuts),
    };
    let source = regression_test(&input, &cuts, &stream_filter, &whole_filter, &name);
    let mut note = "A regression test for this split. Save it in a file under the crate's \
                    tests/ (the crate needs chunk-invariance as a dev-dependency)."
        .to_owned();
    if let (Some(example), Input::Text(text)) = (params.example, &input) {
        match example.check(text, Splits::Cuts(vec![cuts])) {
            Ok(_) => note.push_str(" It passes today."),
            Err(err) => {
                note.push_str(" It fails today, as the filter is not chunk-invariant:\n\n");
                note.push_str(&err.to_string());
            }
        }
    }
    Ok((note, source))
}
