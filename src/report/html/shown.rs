//! How the page shows a text that ragate did not write: redacted on its raw form, then encoded once.
//!
//! Answers, contexts, queries, qids, doc ids, slice values, metric and tier names, paths, and the
//! messages that embed any of them go into the page through [`Shown`] (in `html!`) or [`plain`]
//! (for plotters, which escapes the texts of its SVG itself). Either redacts the raw text
//! ([`crate::secrets::redact`]) before anything escapes it: the registered forms of a secret are
//! those of the raw value, and the page's escaping (`&quot;`, `&lt;`, of a JSON-escaped form too)
//! would make forms no redaction after it recognises.

use maud::Render;

/// A text from data for `html!`, in an element or an attribute: redacted on its raw form
/// ([`crate::secrets::redact`]), its control and bidi characters shown escaped
/// ([`crate::escape::visible`]), then HTML-escaped once by maud.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shown<'a>(pub(super) &'a str);

impl Render for Shown<'_> {
    fn render_to(&self, buffer: &mut String) {
        let redacted = crate::secrets::redact(self.0);
        crate::escape::visible(&redacted).as_ref().render_to(buffer);
    }
}

/// A text from data for an encoder other than maud's (plotters' SVG text): redacted on its raw
/// form and its control and bidi characters shown escaped, not yet escaped for HTML (that
/// encoder escapes it once).
pub(super) fn plain(text: &str) -> String {
    crate::escape::visible(&crate::secrets::redact(text)).into_owned()
}
