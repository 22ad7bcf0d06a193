//! The crate's modules import each other without cycles, the response
//! layer included when the `http` feature is on. Run with
//! `-- --nocapture` to print the graph.

// The reading of the import graph, shared with the other crates' tests.
#[path = "../../chunk-invariance/tests/support/import_graph.rs"]
mod import_graph;

use import_graph::ImportGraph;

#[test]
fn the_modules_import_each_other_without_cycles() {
    ImportGraph::read(env!("CARGO_MANIFEST_DIR"), "lib.rs").assert_acyclic(&[
        ("replacer", "sse"),
        ("layer", "body"),
        ("layer", "scan"),
        ("body", "scan"),
        ("scan", "sse"),
    ]);
}
