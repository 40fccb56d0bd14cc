// The seeded generator of test data, from @attngraph/tensor (where @attngraph/nn's seeded init reads it too); this
// subpath (`@attngraph/testkit/prng`) stays for browser code that wants it without the rest of testkit.
export { mulberry32 } from "@attngraph/tensor";
