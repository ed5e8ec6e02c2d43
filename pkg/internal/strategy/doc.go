// Package strategy is the REST strategy of a generated resource, as
// k8s.io/apiserver's generic registry calls it: the semantics every
// resource has (status written only through /status, metadata.generation
// counting spec changes, the schema's validation and defaults) around the
// hooks the project declares on <Kind>Strategy, bound as the hook contract
// (internal/shared/hooks) says. pkg/builders' NewResource binds a
// resource's hooks with it; the apiserver builds and serves the strategy.
// None of it is API of generated code.
package strategy
