// Package schematest is the one home of the tests' "this JSON follows its schema" check: it
// finds the module's schema/ directory from any package, compiles a schema with its formats
// asserted, and validates a document against it.
package schematest
