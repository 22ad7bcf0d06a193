//! The crate's modules import each other without cycles; the response
//! path is `stream-replace-sse`'s, so no module here is one. Run with
//! `-- --nocapture` to print the graph.

// The reading of the import graph, shared with the other crates' tests.
#[path = "../../chunk-invariance/tests/support/import_graph.rs"]
mod import_graph;

use import_graph::ImportGraph;

#[test]
fn the_modules_import_each_other_without_cycles() {
    ImportGraph::read(env!("CARGO_MANIFEST_DIR"), "lib.rs").assert_acyclic(&[
        ("proxy", "detect"),
        ("proxy", "route"),
        ("proxy", "ruleset"),
        ("settings", "ruleset"),
    ]);
}
