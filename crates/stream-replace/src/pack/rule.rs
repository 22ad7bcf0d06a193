//! A pack's rule and its action: data that the packs' modules and the
//! pack list share.

use std::fmt;

use crate::Replacement;
use crate::guard::Rule;
use crate::rules::{Pattern, RulesBuilder};

/// What a guardrail does with a rule's match.
///
/// # Example
///
/// ```
/// use stream_replace::pack::{self, PackAction};
///
/// let pii = pack::pii();
/// let blocking: Vec<&str> = pii
///     .rules()
///     .iter()
///     .filter(|r| matches!(r.action, PackAction::Block(_)))
///     .map(|r| r.id)
///     .collect();
/// assert_eq!(blocking, ["private_key", "us_ssn"]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PackAction {
    /// Replace the match by the rule's [`mask`](PackRule::mask).
    Mask,
    /// Stop the stream before the match, with this reason (see
    /// [`Action::Block`](crate::Action::Block)).
    Block(&'static str),
}

/// One ready rule: a regex, the mask that replaces its match, an action
/// and an optional validator.
///
/// # Example
///
/// ```
/// use stream_replace::{pack, Rules};
///
/// let card = pack::pii().get("payment_card").unwrap().clone();
/// assert_eq!(card.mask, "[CARD]");
/// let check = card.validator.unwrap();
/// assert!(check("4111 1111 1111 1111") && !check("4111 1111 1111 1112"));
///
/// let mut builder = Rules::builder();
/// card.add_to(&mut builder);
/// let rules = builder.build()?;
/// assert_eq!(
///     rules.replace_all("4111-1111-1111-1111 or 4111-1111-1111-1112"),
///     "[CARD] or 4111-1111-1111-1112",
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct PackRule {
    /// A short name for reports and events, such as `email` or `us_ssn`.
    pub id: &'static str,
    /// The regex, in the `regex` crate's syntax.
    pub pattern: &'static str,
    /// The text that replaces a match, such as `[EMAIL]`; for a rule with a
    /// [`template`](PackRule::template), the text that replaces the part of
    /// the match that is masked.
    pub mask: &'static str,
    /// Mask or block.
    pub action: PackAction,
    /// A check on the matched text; a match it rejects is not a match.
    pub validator: Option<fn(&str) -> bool>,
    /// What the rule catches, in a sentence or two.
    pub what: &'static str,
    /// What it misses or wrongly catches, in a sentence or two.
    pub misses: &'static str,
    /// A replacement template used instead of the bare mask, for rules that
    /// keep part of their match: `${label}[SECRET]` keeps the label of
    /// `password=hunter2` and masks the value. It contains the mask.
    pub template: Option<&'static str>,
}

impl PackRule {
    /// The rule's pattern as a [`Pattern`].
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::pack;
    ///
    /// let email = pack::pii().get("email").unwrap().pattern();
    /// assert!(!email.is_literal());
    /// ```
    pub fn pattern(&self) -> Pattern {
        Pattern::regex(self.pattern)
    }

    /// The replacement that puts the mask in place of a match.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{pack, Rules};
    ///
    /// let ssn = pack::pii().get("us_ssn").unwrap().clone();
    /// // The pattern and the mask alone: no validator, no block.
    /// let rules = Rules::builder().rule(ssn.pattern(), ssn.replacement()).build()?;
    /// assert_eq!(rules.replace_all("123-45-6789, 666-45-6789"), "[US_SSN], [US_SSN]");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn replacement(&self) -> Replacement {
        match self.template {
            Some(t) => Replacement::template(t),
            None => Replacement::literal(self.mask),
        }
    }

    /// The rule as a [`Rule`]: its pattern, mask, id, action and validator.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{pack, Rules};
    ///
    /// let ssn = pack::pii().get("us_ssn").unwrap().rule();
    /// let rules = Rules::builder().add(ssn).build()?;
    /// let eval = rules.evaluate("666-45-6789 is not valid; 123-45-6789 is");
    /// assert_eq!(eval.text(), "666-45-6789 is not valid; ");
    /// assert_eq!(eval.block().unwrap().id(), "us_ssn");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rule(&self) -> Rule {
        let mut rule = Rule::new(self.pattern(), self.replacement()).id(self.id);
        if let PackAction::Block(reason) = self.action {
            rule = rule.block(reason);
        }
        if let Some(valid) = self.validator {
            rule = rule.validator(valid);
        }
        rule
    }

    /// Adds this rule to `builder`, after the rules already there.
    ///
    /// # Example
    ///
    /// ```
    /// use stream_replace::{pack, Rules};
    ///
    /// let mut builder = Rules::builder();
    /// builder.literal("ACME", "[COMPANY]");
    /// pack::think().add_to(&mut builder);
    /// let rules = builder.build()?;
    /// assert_eq!(rules.replace_all("<think>ACME?</think>ACME."), "[COMPANY].");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_to<'b>(&self, builder: &'b mut RulesBuilder) -> &'b mut RulesBuilder {
        builder.add(self.rule())
    }
}

impl fmt::Debug for PackRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackRule")
            .field("id", &self.id)
            .field("pattern", &self.pattern)
            .field("mask", &self.mask)
            .field("action", &self.action)
            .field("validator", &self.validator.map(|_| ".."))
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}
