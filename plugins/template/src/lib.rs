//! template: answers built from Go-style templates, as CoreDNS's template plugin. This
//! commit brings its template language (`lang`); the plugin follows.

#![forbid(unsafe_code)]

#[allow(dead_code)]
mod lang;
