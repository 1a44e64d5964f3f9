//! Formatting a file whose lists are too long to format at once: a struct
//! of 200,000 fields, an enum of 100,000 values (and its two `match`es).
//!
//! The file is formatted once as a *skeleton*, each long list replaced by
//! one placeholder item; then each list is formatted a [`CHUNK`] at a time
//! inside a small wrapper that puts its items at the indentation they have
//! in the file, and the chunks' lines are spliced in place of the
//! placeholder's line. Only one chunk's token trees and syntax trees exist
//! at a time, so memory is that of the output text, and time is linear.
//!
//! This relies on prettyplease printing each named field, enum variant and
//! `match` arm on lines of its own, independently of its neighbours; the
//! unit tests of `crd::emit` compare the spliced text with that of
//! formatting the whole at once.

use std::ops::Range;

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::format;
use crate::error::CodegenError;
use crate::names::ident;

/// Items per formatting pass.
pub(super) const CHUNK: usize = 1024;

/// The item before a chunk's items in its wrapper; generated names never
/// start with two underscores.
const START: &str = "__kubeset_start";
/// The item after them.
const END: &str = "__kubeset_end";

/// Where a list's items go: what wraps a chunk of them so that prettyplease
/// indents them as in the skeleton.
#[derive(Debug, Clone, Copy)]
pub(super) enum Place {
    /// Named fields of a top-level struct.
    Fields,
    /// Variants of a top-level enum.
    Variants,
    /// Arms of a `match` in a method of a top-level `impl`.
    Arms,
}

impl Place {
    /// The placeholder item standing for the list `name` in a skeleton.
    pub(super) fn placeholder(self, name: &str) -> TokenStream {
        let name = ident(name);
        match self {
            Place::Fields => quote!(#name: (),),
            Place::Variants => quote!(#name,),
            Place::Arms => quote!(#name => (),),
        }
    }

    /// A file holding `items` between the items [`START`] and [`END`], at
    /// the indentation of this place.
    fn wrap(self, items: Vec<TokenStream>) -> TokenStream {
        let (start, end) = (ident(START), ident(END));
        match self {
            Place::Fields => quote!(struct S { #start: (), #(#items)* #end: (), }),
            Place::Variants => quote!(enum S { #start, #(#items)* #end, }),
            Place::Arms => quote! {
                impl S {
                    fn f() {
                        match s {
                            #start => (),
                            #(#items)*
                            #end => (),
                        }
                    }
                }
            },
        }
    }
}

/// One long list of a file.
pub(super) struct List<'a> {
    /// The name of its placeholder in the skeleton ([`Place::placeholder`]).
    pub(super) placeholder: &'static str,
    /// Where its items go.
    pub(super) place: Place,
    /// How many items it has.
    pub(super) len: usize,
    /// The tokens of the items in a range, one each.
    pub(super) items: &'a dyn Fn(Range<usize>) -> Vec<TokenStream>,
    /// The text prettyplease gives item `i`, when it is known without
    /// formatting (a line that fits well within the margin); the other
    /// items are formatted.
    pub(super) known: &'a dyn Fn(usize) -> Option<String>,
}

/// The byte range of the line of `text` that starts (after indentation)
/// with the item `name`: the name followed by anything but an identifier
/// character. Doc comments, string literals and generated names cannot
/// start a line that way.
fn line_of(text: &str, name: &str) -> Option<Range<usize>> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let item = line.trim_start().strip_prefix(name);
        if item.is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')) {
            return Some(at..at + line.len());
        }
        at += line.len();
    }
    None
}

/// The formatted lines of one chunk of `list`.
fn chunk_text(file: &str, list: &List<'_>, range: Range<usize>) -> Result<String, CodegenError> {
    let text = format(file, list.place.wrap((list.items)(range)), "")?;
    let body = line_of(&text, START)
        .zip(line_of(&text, END))
        .map(|(start, end)| text[start.end..end.start].to_owned());
    Ok(body.unwrap_or_default())
}

/// Appends the text of `list`'s items to `out`: the known ones as they
/// are, runs of the others formatted at most a [`CHUNK`] at a time.
fn splice_list(file: &str, list: &List<'_>, out: &mut String) -> Result<(), CodegenError> {
    let flush = |range: Range<usize>, out: &mut String| -> Result<(), CodegenError> {
        if !range.is_empty() {
            out.push_str(&chunk_text(file, list, range)?);
        }
        Ok(())
    };
    // The first item of the run of unknown ones not yet formatted.
    let mut pending = 0;
    for i in 0..list.len {
        let known = (list.known)(i);
        if known.is_some() || i - pending == CHUNK {
            flush(pending..i, out)?;
            pending = i;
        }
        if let Some(text) = known {
            out.push_str(&text);
            pending = i + 1;
        }
    }
    flush(pending..list.len, out)
}

/// `skeleton` formatted with each list of `lists` in place of its
/// placeholder line, the lists formatted a [`CHUNK`] at a time. `None`
/// when a placeholder is not on a line of its own in the formatted
/// skeleton (the caller formats the whole file at once then).
pub(super) fn format_in_pieces(
    file: &str,
    preamble: &str,
    skeleton: TokenStream,
    lists: &[List<'_>],
) -> Result<Option<String>, CodegenError> {
    let text = format(file, skeleton, preamble)?;
    let mut places = Vec::with_capacity(lists.len());
    for list in lists {
        match line_of(&text, list.placeholder) {
            Some(line) => places.push((line, list)),
            None => return Ok(None),
        }
    }
    places.sort_by_key(|(line, _)| line.start);
    let mut out =
        String::with_capacity(text.len() + lists.iter().map(|l| l.len).sum::<usize>() * 96);
    let mut done = 0;
    for (line, list) in places {
        out.push_str(&text[done..line.start]);
        splice_list(file, list, &mut out)?;
        done = line.end;
    }
    out.push_str(&text[done..]);
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_found_by_its_leading_item_only() {
        let text = "a\n    /// __p: doc\n    \"__p\" => x,\n    __pq,\n    __p => (),\n";
        let range = line_of(text, "__p").expect("the item line");
        assert_eq!(&text[range], "    __p => (),\n");
        assert_eq!(line_of("__pq,\n", "__p"), None);
    }
}
