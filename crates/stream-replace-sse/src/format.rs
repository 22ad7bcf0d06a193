//! Which fields of an event carry the streamed text.

use crate::error::PointerError;

/// Which fields of each event are the streamed text, and which events end
/// them.
///
/// # Example
///
/// ```
/// use stream_replace_sse::Format;
///
/// let openai = Format::OpenAiChat;
/// let anthropic = Format::AnthropicMessages;
/// let generic = Format::pointers(["/text", "/meta/note"])?;
/// # let _ = (openai, anthropic, generic);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenAI chat completions (`chat.completion.chunk` events).
    ///
    /// One field stream per choice index and field:
    /// `choices[i].delta.content`, `choices[i].delta.reasoning_content`,
    /// `choices[i].delta.tool_calls[j].function.arguments` (keyed by the
    /// tool call's `index`), the legacy
    /// `choices[i].delta.function_call.arguments`, and every other string
    /// field of the delta but `role` (`refusal`, a provider's own field),
    /// by name. A choice ends at a non-null `finish_reason`; every stream
    /// ends at `data: [DONE]`.
    OpenAiChat,
    /// Anthropic messages.
    ///
    /// One field stream per content block index and field:
    /// `content_block_delta` with `text_delta.text`,
    /// `input_json_delta.partial_json` or `thinking_delta.thinking`, and
    /// the initial `text` / `thinking` of `content_block_start`. A block
    /// ends at its `content_block_stop`; every stream ends at
    /// `message_delta` and `message_stop`. Redacting a thinking block
    /// invalidates its `signature`, which is passed on unchanged.
    AnthropicMessages,
    /// The string at each of these JSON pointers, in every event that has
    /// one: one field stream per pointer. Streams end at `data: [DONE]`
    /// and at the end of input.
    Pointers(Pointers),
}

impl Format {
    /// [`Format::Pointers`] over these JSON pointers (RFC 6901).
    ///
    /// # Errors
    ///
    /// When a pointer is neither empty nor starts with `/`, or has a `~`
    /// not followed by `0` or `1`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Format;
    ///
    /// assert!(Format::pointers(["/choices/0/text"]).is_ok());
    /// assert!(Format::pointers(["choices"]).is_err());
    /// ```
    pub fn pointers<I, S>(pointers: I) -> Result<Format, PointerError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Pointers::new(pointers).map(Format::Pointers)
    }
}

/// A validated list of JSON pointers, for [`Format::Pointers`].
///
/// A pointer given twice is kept once.
///
/// # Example
///
/// ```
/// use stream_replace_sse::Pointers;
///
/// let p = Pointers::new(["/a", "/b/0", "/a"])?;
/// assert_eq!(p.as_slice(), ["/a", "/b/0"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pointers {
    list: Vec<String>,
}

impl Pointers {
    /// Validates `pointers`.
    ///
    /// # Errors
    ///
    /// When a pointer is neither empty nor starts with `/`, or has a `~`
    /// not followed by `0` or `1`.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Pointers;
    ///
    /// assert!(Pointers::new(["/a~1b"]).is_ok());
    /// assert_eq!(Pointers::new(["/a~2"]).unwrap_err().pointer(), "/a~2");
    /// ```
    pub fn new<I, S>(pointers: I) -> Result<Pointers, PointerError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut list: Vec<String> = Vec::new();
        for p in pointers {
            let p = p.into();
            if !is_valid_pointer(&p) {
                return Err(PointerError::new(p));
            }
            if !list.contains(&p) {
                list.push(p);
            }
        }
        Ok(Pointers { list })
    }

    /// The pointers, in the order given.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace_sse::Pointers;
    ///
    /// assert_eq!(Pointers::new(["/x"])?.as_slice(), ["/x"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_slice(&self) -> &[String] {
        &self.list
    }
}

fn is_valid_pointer(p: &str) -> bool {
    if !(p.is_empty() || p.starts_with('/')) {
        return false;
    }
    let b = p.as_bytes();
    b.iter()
        .enumerate()
        .all(|(i, &c)| c != b'~' || matches!(b.get(i + 1), Some(b'0' | b'1')))
}
